// The Fastify app on :8000: raw-body parsing with gzip/deflate and a size limit, response
// compression on request, one error mapping, and 404/405 answers in KServe's `{"error"}` shape.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ServerLimits, serverLimitsSchema } from '../config/server-limits-config-schema.ts';
import { HerdError } from '../core/errors.ts';
import { COMPRESS_MIN_BYTES, compressBody, parseAcceptEncoding } from './accept-encoding.ts';
import { decodeContentEncoding } from './decode-request-body.ts';
import { createFastGatewayHandler } from './fast-gateway-path.ts';
import { createFastGenerateHandler } from './fast-generate-path.ts';
import { createFastInferHandler } from './fast-infer-path.ts';
import { registerGenerateRoutes } from './kserve-generate-routes.ts';
import type { ApiGroupGuard } from '../core/api-groups.ts';
import { registerKserveApiGuard } from './kserve-api-guard.ts';
import { registerKserveRoutes, servingTracingOf, type KserveDeps } from './kserve-routes.ts';
import { createKserveErrorAnswer, mapErrorToKserve, type KserveErrorAnswer } from './map-kserve-error.ts';
import { createOpenAIErrorAnswer } from './map-openai-error.ts';
import { createGatewayExchanges, registerExchangeRoutes } from './gateway-exchanges.ts';
import { registerAdminRoutes, type AdminDeps } from './admin-routes.ts';
import { registerMeRoute } from './me-route.ts';
import type { OpenAIDeps } from './openai-deps.ts';
import { registerOpenAIRoutes } from './openai-routes.ts';
import { type OpenAIFilesDeps, registerOpenAIFilesRoutes } from './openai-files-routes.ts';
import { type BatchesDeps, registerOpenAIBatchesRoutes } from './openai-batches-routes.ts';
import { registerAnthropicBatchesRoutes } from './anthropic-batches-routes.ts';
import { createBaseUrlResolver } from './request-base-url.ts';
import { registerSharedMemoryRoutes } from './shared-memory-routes.ts';
import type { StreamLimits } from './sse-writer.ts';
import { registerTraceAndLoggingRoutes } from './trace-and-logging-routes.ts';
import { createLimitedServer } from './create-limited-server.ts';
import { ClientAddressResolver, useClientAddressResolver } from './resolve-client-address.ts';
import { type ConsoleOptions, registerConsoleRoutes } from './console/console-routes.ts';
import { withTraceIds } from '../serving/infer-trace.ts';

/** How often a closing server closes connections that went idle since (a finished stream's keep-alive socket). */
const IDLE_SWEEP_MS = 250;

export interface HttpAppOptions {
  maxInputSize: number;
  /** The LLM gateway's routes (/v1, /health), when the gateway is configured. */
  gateway?: OpenAIDeps;
  /** /v1/files, when the gateway runs with a ledger (batch files live in its database); absent: those paths answer 404. */
  files?: OpenAIFilesDeps;
  /** /v1/batches and /v1/messages/batches, beside /v1/files (absent: those paths answer 404). */
  batches?: BatchesDeps;
  /** /admin/v1 (keys, teams, usage, audit, catalogue), the older /admin/usage, and GET /v1/me, when the gateway runs. */
  admin?: AdminDeps;
  /** Slow readers of streamed answers (server.stream_idle_reader_ms, server.stream_max_buffered_bytes). */
  streams?: StreamLimits;
  log?: (line: string) => void;
  /** Who may call each Triton API group (kserve-api-guard.ts); absent: every group open. */
  apiGuard?: ApiGroupGuard | undefined;
  /** server.trusted_proxies: peers whose forwarding headers name the client. */
  trustedProxies?: readonly string[];
  /** server.limits: deadlines and connection caps (the schema's defaults when absent). */
  limits?: ServerLimits;
  /** The web console at /ui and its session cookie on /admin/v1, /v1 and restricted /v2 groups; absent: no console. */
  console?: ConsoleOptions;
}

export function createHttpApp(deps: KserveDeps, options: HttpAppOptions): FastifyInstance {
  // While draining (SIGTERM) and closing, answers close their connection so keep-alive clients move to
  // another replica and do not hold the drain open; the fast paths step aside so Fastify's hook adds the header.
  let closing = false;
  const isClosing = () => closing || deps.isExiting?.() === true;
  // A restricted inference group is checked by Fastify's hook: the fast paths step aside.
  const inferenceOpen = options.apiGuard?.isRestricted('inference') !== true;
  const fastInfer = inferenceOpen
    ? createFastInferHandler({
        inference: deps.inference,
        sharedMemory: deps.sharedMemory,
        maxInputSize: options.maxInputSize,
        isClosing,
        log: options.log,
        callers: deps.callers,
        tracing: servingTracingOf(deps),
      })
    : () => false;
  const fastGenerate = inferenceOpen
    ? createFastGenerateHandler({
        inference: deps.inference,
        maxInputSize: options.maxInputSize,
        isClosing,
        log: options.log,
        callers: deps.callers,
        streams: options.streams,
        tracing: servingTracingOf(deps),
      })
    : () => false;
  const session = options.console?.auth;
  const gateway = options.gateway && session ? { ...options.gateway, session } : options.gateway;
  const exchanges = gateway ? createGatewayExchanges(gateway, isClosing, options.streams) : undefined;
  const fastGateway = exchanges ? createFastGatewayHandler(exchanges, { maxInputSize: options.maxInputSize, isClosing }) : () => false;
  const clients = new ClientAddressResolver(options.trustedProxies);
  const app = Fastify({
    logger: false,
    bodyLimit: options.maxInputSize,
    // A request on a connection still open after close() is answered (with Connection: close), not refused:
    // it was sent before the client could know this replica is leaving.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    clientErrorHandler: handleClientError,
    serverFactory: (handler) =>
      createLimitedServer(
        options.limits ?? serverLimitsSchema.parse(undefined),
        (req, res) => {
          if (!fastInfer(req, res) && !fastGateway(req, res) && !fastGenerate(req, res)) handler(req, res);
        },
        (socket) => useClientAddressResolver(socket, clients),
      ),
  });
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  const allow = (url: string, methods: string[]) => {
    // Exact paths, as the router matches them: a trailing slash is an unknown route (404), as in Triton.
    const pattern = new RegExp(`^${url.replace(/:[a-z]+/g, '[^/]+')}$`);
    const existing = routes.find((r) => r.pattern.source === pattern.source);
    if (existing) existing.methods.push(...methods);
    else routes.push({ pattern, methods: [...methods] });
  };

  app.addHook('preClose', async () => {
    closing = true;
    // Node closes the connections idle at close() only: a keep-alive stream that ends later would hold the exit
    // for the keep-alive timeout. Sweep until the server has closed.
    const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
    sweep.unref();
    app.server.once('close', () => clearInterval(sweep));
  });
  registerBodyCodings(app, options.maxInputSize, isClosing);
  registerErrorAnswers(app, routes, options);

  registerKserveApiGuard(app, options.apiGuard, session);
  registerKserveRoutes(app, deps, allow);
  registerSharedMemoryRoutes(app, deps.sharedMemory, allow);
  registerTraceAndLoggingRoutes(app, deps, allow);
  registerGenerateRoutes(
    app,
    { inference: deps.inference, maxInputSize: options.maxInputSize, log: options.log, callers: deps.callers, streams: options.streams, tracing: servingTracingOf(deps) },
    allow,
  );
  if (gateway && exchanges) {
    registerExchangeRoutes(app, exchanges, allow);
    registerOpenAIRoutes(app, gateway, allow);
    if (options.files) registerOpenAIFilesRoutes(app, options.files, allow);
    if (options.batches) {
      registerOpenAIBatchesRoutes(app, options.batches, allow);
      const baseUrlOf = createBaseUrlResolver(options.trustedProxies ?? [], options.console?.ui.base_path ?? '');
      registerAnthropicBatchesRoutes(app, options.batches, baseUrlOf, allow);
    }
  }
  if (options.admin) registerAdminRoutes(app, session ? { ...options.admin, session } : options.admin, allow);
  if (options.console) registerConsoleRoutes(app, options.console, options.trustedProxies ?? [], allow);
  if (options.admin?.service) registerMeRoute(app, { authenticator: options.admin.authenticator, service: options.admin.service, log: options.log }, allow);
  return app;
}

/** Bodies as bytes, content codings undone on the way in (size-limited) and applied on the way out when asked. */
function registerBodyCodings(app: FastifyInstance, maxInputSize: number, isClosing: () => boolean): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  // Hooks are callback-style with early returns: they run on every request, and async hooks cost
  // a promise each on the hot path (docs/decisions/framework-free-fast-paths.md).
  app.addHook('preParsing', (request, reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined) {
      done(null, payload);
      return;
    }
    try {
      done(null, decodeContentEncoding(payload, encoding, maxInputSize));
    } catch (err) {
      // Like Triton, name the encodings that would have been accepted.
      if (err instanceof HerdError && err.code === 'UNSUPPORTED') reply.header('Accept-Encoding', 'gzip, deflate');
      done(err as Error);
    }
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (isClosing()) reply.header('Connection', 'close');
    const accept = request.headers['accept-encoding'];
    if (accept === undefined || !(typeof payload === 'string' || Buffer.isBuffer(payload)) || Buffer.byteLength(payload) < COMPRESS_MIN_BYTES) {
      done(null, payload);
      return;
    }
    const encoding = parseAcceptEncoding(accept);
    if (!encoding) {
      done(null, payload);
      return;
    }
    reply.header('Content-Encoding', encoding);
    reply.removeHeader('content-length');
    compressBody(payload, encoding).then(
      (zipped) => done(null, zipped),
      (err: Error) => done(err),
    );
  });
}

/** The one error tail of the Fastify routes, and the 404/405 answers in the shape of the path's API. */
function registerErrorAnswers(app: FastifyInstance, routes: readonly { pattern: RegExp; methods: string[] }[], options: HttpAppOptions): void {
  app.setErrorHandler((error: FastifyError | HerdError, _request, reply) => {
    const { status, body, logLine } = describeError(error, options.maxInputSize);
    // A traced inference's failure names its request and trace (tagged by the route as its trace ended).
    if (logLine !== undefined) options.log?.(withTraceIds(logLine, error));
    void reply.code(status).header('Content-Type', 'application/json').send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const route = routes.find((r) => r.pattern.test(path));
    if (path.startsWith('/v1/') || path === '/v1') {
      // OpenAI's own answer for a wrong URL or method, so SDK users see a familiar error.
      const answer = createOpenAIErrorAnswer(route ? 405 : 404, `Invalid URL (${request.method} ${path})`);
      void reply.code(answer.status).headers(answer.headers).header('Content-Type', 'application/json').send(JSON.stringify(answer.body));
      return;
    }
    if (route) {
      const allowed = [...new Set(route.methods)].join(', ');
      const answer = createKserveErrorAnswer(405, `Method Not Allowed: ${request.method} ${path} (allowed: ${allowed})`);
      void reply.code(answer.status).header('Allow', allowed).header('Content-Type', 'application/json').send(answer.body);
      return;
    }
    const answer = createKserveErrorAnswer(404, `Not Found: no route for ${request.method} ${path}`);
    void reply.code(answer.status).header('Content-Type', 'application/json').send(answer.body);
  });
}

/** Node's HTTP parser errors with a status and message of their own; any other is a plain 400. */
const CLIENT_ERRORS: Readonly<Record<string, [number, string]>> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request timed out before it was complete'],
  HPE_HEADER_OVERFLOW: [431, 'request headers exceed the maximum allowed size'],
  HPE_INVALID_EOF_STATE: [400, 'the connection ended before the request body was complete (shorter than its Content-Length)'],
};

/** HTTP that Node's parser refuses (a body cut short, garbage after it): Fastify's default answer, in KServe's `{"error"}` shape. */
function handleClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, `malformed HTTP request (${err.code ?? 'unknown'}): ${err.message}`];
  const { status, body } = createKserveErrorAnswer(code, message);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/** Fastify's own errors in Herd's terms; anything else through the one KServe mapping. */
function describeError(error: FastifyError | HerdError, limit: number): KserveErrorAnswer {
  if (error instanceof HerdError) return mapErrorToKserve(error);
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return mapErrorToKserve(new HerdError('PAYLOAD_TOO_LARGE', `request body exceeds the maximum input size of ${limit} bytes; use --http-max-input-size to increase the limit`));
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return mapErrorToKserve(new HerdError('INVALID_ARG', 'request body length does not match its Content-Length header'));
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return mapErrorToKserve(new HerdError('INVALID_ARG', 'request body is empty'));
    default:
      break;
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return createKserveErrorAnswer(error.statusCode, error.message);
  }
  return createKserveErrorAnswer(500, error.message || 'internal error', error);
}
