// OpenAI-compatible routes: POST /v1/chat/completions (JSON or SSE), GET /v1/models, GET /health.
// Thin: authenticate, parse, hand to the chat service, write its answer; errors in OpenAI's shape.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { ChatGateway, GatewayAnswer } from '../gateway/chat-gateway.ts';
import type { ChatMeta, ChatService, ChatStream } from '../gateway/chat-service.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import type { KeyInfo } from '../gateway/keys/key-store.ts';
import { validateChatRequest } from '../gateway/validate-chat-request.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';

export interface OpenAIDeps {
  /** The request flow (limits, cache, budget, routing, billing). */
  gateway: ChatGateway;
  /** Model listing and health. */
  chat: ChatService;
  authenticator: Authenticator;
  log?: (line: string) => void;
}

export function registerOpenAIRoutes(app: FastifyInstance, deps: OpenAIDeps, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((error: Error, _request, reply) => {
      const herd = toHerdError(error instanceof HerdError ? error : fastifyErrorToHerd(error));
      if (herd.code === 'INTERNAL') deps.log?.(`gateway error: ${error.stack ?? error.message}`);
      sendError(reply, herd);
    });

    scope.post('/v1/chat/completions', async (req, reply) => {
      const started = performance.now();
      const key = authenticate(deps.authenticator, req);
      const request = validateChatRequest(parseJson(req.body));
      const controller = abortOnClientClose(reply);
      // Model access (aliases and tiers resolved first) is checked inside the gateway's routing.
      const answer: GatewayAnswer = await deps.gateway.handle(request, { key, headers: req.headers, signal: controller.signal });
      if (answer.kind === 'stream') return writeStream(answer.stream, answer.cache, reply, started);
      setHerdHeaders(reply, answer.meta, started);
      reply.header('x-herd-cache', answer.cache);
      return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(answer.response));
    });
    allow('/v1/chat/completions', ['POST']);

    scope.get('/v1/models', async (req, reply) => {
      const key = authenticate(deps.authenticator, req);
      const data = deps.chat.listModels((model) => !deps.authenticator.authorizeModel(key, model));
      return reply.code(200).header('content-type', 'application/json').send(JSON.stringify({ object: 'list', data }));
    });
    allow('/v1/models', ['GET', 'HEAD']);

    scope.get('/health', async (_req, reply) => {
      const health = deps.chat.health();
      const status = health.providers.some((p) => p.enabled) ? 'ok' : 'no_providers';
      return reply.code(200).header('content-type', 'application/json').send(JSON.stringify({ status, ...health }));
    });
    allow('/health', ['GET', 'HEAD']);
  });
}

function authenticate(authenticator: Authenticator, req: FastifyRequest): KeyInfo {
  const result = authenticator.authenticate(req.headers.authorization, req.socket.remoteAddress);
  if (result instanceof HerdError) throw result;
  return result.key;
}

function parseJson(body: unknown): unknown {
  if (!Buffer.isBuffer(body) || body.length === 0) {
    throw new HerdError('INVALID_ARG', 'We could not parse the JSON body of your request: the body is empty. The OpenAI API expects a JSON payload.');
  }
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HerdError('INVALID_ARG', `We could not parse the JSON body of your request (${(err as Error).message}). The OpenAI API expects a JSON payload.`);
  }
}

/** A client that goes away aborts the upstream call and any retries. */
function abortOnClientClose(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new HerdError('UNAVAILABLE', 'client closed the connection'));
  });
  return controller;
}

function herdHeaders(meta: ChatMeta, started: number): Record<string, string> {
  const elapsed = performance.now() - started;
  return {
    'x-herd-model': meta.model,
    'x-herd-provider': meta.provider,
    'x-herd-attempts': String(meta.attempts.length),
    'x-herd-overhead-ms': Math.max(0, elapsed - meta.upstreamMs - meta.waitedMs).toFixed(3),
  };
}

function setHerdHeaders(reply: FastifyReply, meta: ChatMeta, started: number): void {
  for (const [k, v] of Object.entries(herdHeaders(meta, started))) reply.header(k, v);
}

/** SSE from the first chunk on: the headers carry the answering model; no upstream switch after this. */
async function writeStream(stream: ChatStream, cache: string, reply: FastifyReply, started: number): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-herd-cache': cache,
    ...herdHeaders(stream.meta, started),
  });
  raw.on('close', () => stream.cancel());
  try {
    for await (const chunk of stream.chunks) {
      if (raw.destroyed) break;
      raw.write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    if (!raw.destroyed) raw.write('data: [DONE]\n\n');
  } catch (err) {
    // After the first byte there is no switching upstream: the client gets an error event, no [DONE].
    if (!raw.destroyed) raw.write(`data: ${JSON.stringify(mapErrorToOpenAI(toHerdError(err)).body)}\n\n`);
  } finally {
    raw.end();
  }
}

function sendError(reply: FastifyReply, error: HerdError): void {
  const answer = mapErrorToOpenAI(error);
  void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}

function fastifyErrorToHerd(error: Error & { code?: string; statusCode?: number }): HerdError {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HerdError('PAYLOAD_TOO_LARGE', 'request body is larger than the server accepts');
  if (typeof error.statusCode === 'number' && error.statusCode < 500) return new HerdError('INVALID_ARG', error.message);
  return toHerdError(error);
}
