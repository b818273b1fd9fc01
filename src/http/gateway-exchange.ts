// One gateway exchange on node:http's response, for every dialect and both entries (the fast path and
// the Fastify routes): authenticate → parse the JSON body (depth-limited) → the route's operation (decode
// with the dialect's codec, run the gateway) → one JSON body or an SSE stream → one error tail in the
// dialect's own shape. Never throws: every failure is an answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AbortLink, LightAbortController } from '../core/abort-link.ts';
import { HerdError, toHerdError } from '../core/errors.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';
import type { ChatGateway } from '../gateway/flow/chat-gateway.ts';
import type { EmbeddingsGateway } from '../gateway/flow/embeddings-gateway.ts';
import { type Authenticator, keyRefusedBy } from '../gateway/keys/authenticator.ts';
import type { KeyInfo } from '../gateway/keys/key-store.ts';
import { describeRefusal, type RecordRefusal } from '../gateway/flow/refusals.ts';
import { createRequestId } from '../gateway/flow/request-id.ts';
import { isJsonObject } from '../gateway/protocol/check-json-value.ts';
import type { IngressCodec } from '../gateway/protocol/ingress-codec.ts';
import { readUpstreamBytes } from '../gateway/protocol/upstream-bytes.ts';
import type { DialectEdge } from './dialect-edge.ts';
import { herdErrorHeaders, herdHeaders, type OutHeaders } from './herd-headers.ts';
import { parseJsonBody } from './parse-json-body.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import type { ConsoleSessionAuth } from './console/session-auth.ts';
import { usesSessionCookie } from './console/session-cookie.ts';
import type { StreamLimits } from './sse-writer.ts';
import { type GatewayStreamAnswer, writeGatewayStream } from './write-gateway-stream.ts';
import { writeJsonAnswer } from './write-json-answer.ts';
import { startServerSpan, endServerSpan } from './gateway-server-span.ts';
import type { TraceParent, Tracer } from '../tracing/index.ts';

export interface ExchangeDeps {
  gateway: ChatGateway;
  embeddings?: EmbeddingsGateway | undefined;
  authenticator: Authenticator;
  log?: ((line: string) => void) | undefined;
  /** True once shutdown began: answers then close their connection. */
  isClosing: () => boolean;
  streams: StreamLimits;
  /** Refusals (key, model access, limits, budget) go to the audit log through this. */
  recordRefusal?: RecordRefusal | undefined;
  /** Exchanges running now (the herd_gateway_requests_in_flight gauge reads it). */
  inFlight?: InFlightCount | undefined;
  /** The console's playground: its session cookie (admin, CSRF token) when a request sends no key. */
  session?: Pick<ConsoleSessionAuth, 'authenticateModelCall'> | undefined;
  /** One SERVER span per exchange (tracing on), its parent the request's traceparent. */
  tracer?: Tracer | undefined;
}

/** A count the exchanges keep and a gauge reads. */
export interface InFlightCount {
  value: number;
}

/** An authenticated request with its parsed body, as an operation gets it. */
export interface ExchangeCall {
  req: IncomingMessage;
  key: KeyInfo;
  body: unknown;
  /** performance.now() at arrival. */
  started: number;
  /** The ledger's id for this request, already in the answer's headers (the edge's requestIdHeaders). */
  requestId: string;
  /** The exchange's SERVER span: the gateway operation's parent. */
  traceParent: TraceParent | undefined;
  /** Marks the request as the flow's (the flow counts its failures from now on); the signal aborts when the client leaves. */
  handOver(): AbortLink;
}

export type ExchangeAnswer<F> = { kind: 'json'; headers: OutHeaders; text: string } | GatewayStreamAnswer<F>;

/** What one route does between parsing and answering. */
export interface ExchangeOperation<F> {
  edge: DialectEdge<F>;
  /** Counts a request refused before it was handed over (no valid key, a body that does not parse or decode). */
  refused(deps: ExchangeDeps, error: HerdError): void;
  run(deps: ExchangeDeps, call: ExchangeCall): Promise<ExchangeAnswer<F>>;
}

/** Answers `req` on `res`; `body` is the whole request body, already decoded. `started` is performance.now() at arrival. */
export async function runGatewayExchange<F>(
  deps: ExchangeDeps,
  operation: ExchangeOperation<F>,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  started: number,
): Promise<void> {
  // Until the flow has the request, a failure is this exchange's to count (the flow counts the rest).
  let handedOver = false;
  const handOver = () => {
    handedOver = true;
    return abortOnClientClose(res);
  };
  let key: KeyInfo | undefined;
  let parsed: unknown;
  // Made here, not in the flow, so every answer carries it — a refusal too (its audit row names it).
  const requestId = createRequestId();
  for (const name of operation.edge.requestIdHeaders) res.setHeader(name, requestId);
  const inFlight = deps.inFlight;
  if (inFlight) inFlight.value += 1;
  const span = startServerSpan(deps.tracer, req, requestId);
  let failure: HerdError | undefined;
  try {
    if (deps.authenticator.isOpen()) await deps.authenticator.confirmOpen();
    // Only a request that sends no key and has a cookie looks at it: every other request pays one header read.
    const bySession = deps.session !== undefined && usesSessionCookie(req.headers) ? await deps.session.authenticateModelCall(req) : undefined;
    const auth = bySession ?? deps.authenticator.authenticate(operation.edge.authorization(req.headers), clientAddressOf(req));
    if (auth instanceof HerdError) throw auth;
    key = auth.key;
    parsed = parseJsonBody(body);
    const answer = await operation.run(deps, { req, key, body: parsed, started, requestId, traceParent: span?.context(), handOver });
    if (answer.kind === 'json') await writeJsonAnswer(req, res, deps.isClosing(), 200, answer.headers, answer.text);
    else await writeGatewayStream(answer, operation.edge, res, { limits: deps.streams, closing: deps.isClosing(), started });
  } catch (err) {
    const error = toHerdError(err);
    failure = error;
    if (!handedOver) operation.refused(deps, error);
    if (deps.recordRefusal) recordRefusal(deps.recordRefusal, error, key, parsed ?? peekBody(body), req, requestId);
    if (error.code === 'INTERNAL') deps.log?.(`gateway error (request ${requestId}${span === undefined ? '' : `, trace ${span.context().traceId}`}): ${formatErrorForLog(err)}`);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const answer = operation.edge.mapError(error);
    await writeJsonAnswer(req, res, deps.isClosing(), answer.status, { ...answer.headers, ...herdErrorHeaders(error, started) }, JSON.stringify(answer.body)).catch(() =>
      res.destroy(),
    );
  } finally {
    if (inFlight) inFlight.value -= 1;
    if (span !== undefined) endServerSpan(span, res, failure);
  }
}

function recordRefusal(record: RecordRefusal, error: HerdError, key: KeyInfo | undefined, body: unknown, req: IncomingMessage, requestId: string): void {
  const model = isJsonObject(body) && typeof body.model === 'string' ? body.model : undefined;
  const refusal = describeRefusal({ error, key: key ?? keyRefusedBy(error), model, sourceIp: clientAddressOf(req).address, requestId });
  if (refusal) record(refusal.event, refusal.ctx);
}

/** A body refused before it was parsed (no usable key): read for its `model` only when small, never to fail. */
function peekBody(body: Buffer | undefined): unknown {
  if (body === undefined || body.length > PEEK_LIMIT) return undefined;
  try {
    return parseJsonBody(body);
  } catch {
    return undefined;
  }
}
const PEEK_LIMIT = 64 * 1024;

/** A client that goes away aborts the upstream call and any retries. */
function abortOnClientClose(res: ServerResponse): AbortLink {
  const controller = new LightAbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new HerdError('UNAVAILABLE', 'client closed the connection'));
  });
  return controller.signal;
}

/**
 * A chat-flow dialect (chat, Messages, Responses, completions): decode with its codec, run the gateway,
 * then the upstream's own JSON bytes when it spoke the dialect, else the codec's encoding.
 */
export function createCodecOperation<D, F>(codec: IngressCodec<D, F>, edge: DialectEdge<F>): ExchangeOperation<F> {
  return {
    edge,
    refused: (deps, error) => deps.gateway.reportRefused(error, false, codec.dialect),
    async run(deps, call) {
      const { request, decoded } = codec.decode(call.body, call.req.headers);
      const signal = call.handOver();
      // The body goes along as sent: an upstream offering this dialect's endpoint gets it unchanged but for the model.
      const body = codec.passThrough && isJsonObject(call.body) ? call.body : undefined;
      const answer = await deps.gateway.handle(request, {
        key: call.key,
        headers: call.req.headers,
        signal,
        dialect: codec.dialect,
        passThrough: body !== undefined,
        body,
        requestId: call.requestId,
        traceParent: call.traceParent,
      });
      if (answer.kind === 'stream') {
        const meta = answer.stream.meta;
        const encoder = codec.createStreamEncoder(decoded, { model: meta.model, estimatedPromptTokens: meta.estimatedPromptTokens });
        return { kind: 'stream', stream: answer.stream, cache: answer.cache, encoder, raw: codec.raw };
      }
      const headers = herdHeaders(answer.meta, call.started);
      headers['x-herd-cache'] = answer.cache;
      const text =
        readUpstreamBytes(answer.response, codec.dialect) ??
        JSON.stringify(codec.encodeResponse(answer.response, answer.meta.usage, decoded, { rawFinishReason: answer.meta.rawFinishReason }));
      return { kind: 'json', headers, text };
    },
  };
}
