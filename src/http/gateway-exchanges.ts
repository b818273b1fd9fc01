// The gateway's POST routes as one table, path → operation, all answered by runGatewayExchange
// (gateway-exchange.ts): the fast path (fast-gateway-path.ts) and the Fastify routes both go through it,
// so each dialect has one flow whichever entry a request takes. Fastify's own refusals (body too large,
// an unknown Content-Encoding) are answered here too, in the route's dialect.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { HerdError, toHerdError } from '../core/errors.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';
import { decodeMessagesRequest } from '../gateway/ingress/anthropic-messages/decode-messages-request.ts';
import { messagesCodec, readAnthropicHeaders, type MessagesFailure } from '../gateway/ingress/anthropic-messages/messages-codec.ts';
import { chatCodec } from '../gateway/ingress/openai-chat/chat-codec.ts';
import { completionsCodec } from '../gateway/ingress/openai-completions/completions-codec.ts';
import { convertEmbeddingsResponse } from '../gateway/ingress/openai-embeddings/convert-embeddings-response.ts';
import { validateEmbeddingsRequest } from '../gateway/ingress/openai-embeddings/validate-embeddings-request.ts';
import { responsesCodec } from '../gateway/ingress/openai-responses/responses-codec.ts';
import type { StreamFailure } from '../gateway/protocol/ingress-codec.ts';
import { estimatePromptTokens } from '../gateway/protocol/usage-estimate.ts';
import { ANTHROPIC_EDGE, OPENAI_EDGE } from './dialect-edge.ts';
import { createCodecOperation, type ExchangeDeps, type ExchangeOperation, runGatewayExchange } from './gateway-exchange.ts';
import { herdHeaders } from './herd-headers.ts';
import type { OpenAIDeps } from './openai-deps.ts';
import { DEFAULT_STREAM_LIMITS, type StreamLimits } from './sse-writer.ts';

/** Answers `req` on `res`; `body` is the whole request body, already decoded. Never throws. */
export type GatewayExchange = (req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, started: number) => Promise<void>;

export interface GatewayRoute {
  exchange: GatewayExchange;
  /** A request Fastify refused before the exchange ran: counted, and its answer in the route's dialect. */
  refuse(error: HerdError): { status: number; headers: Record<string, string>; text: string };
}

export type GatewayExchanges = ReadonlyMap<string, GatewayRoute>;

export const EMBEDDINGS_PATH = '/v1/embeddings';

/** POST /v1/embeddings: the embeddings flow, OpenAI's list. */
const embeddingsOperation: ExchangeOperation<StreamFailure> = {
  edge: OPENAI_EDGE,
  refused: (deps, error) => deps.embeddings?.reportRefused(error),
  async run(deps, call) {
    const request = validateEmbeddingsRequest(call.body);
    const signal = call.handOver();
    const embeddings = deps.embeddings;
    if (embeddings === undefined) throw new HerdError('NOT_FOUND', 'embeddings are not configured on this server');
    const answer = await embeddings.handle(request, {
      key: call.key,
      headers: call.req.headers,
      signal,
      dialect: 'openai-embeddings',
      requestId: call.requestId,
      traceParent: call.traceParent,
    });
    return { kind: 'json', headers: herdHeaders(answer.meta, call.started), text: JSON.stringify(convertEmbeddingsResponse(answer, request.encodingFormat)) };
  },
};

/** POST /v1/messages/count_tokens: Herd's own count, no upstream (and nothing for the flow to count). */
const countTokensOperation: ExchangeOperation<MessagesFailure> = {
  edge: ANTHROPIC_EDGE,
  refused: () => undefined,
  async run(_deps, call) {
    const request = decodeMessagesRequest(call.body, { countOnly: true, headers: readAnthropicHeaders(call.req.headers) });
    return { kind: 'json', headers: {}, text: JSON.stringify({ input_tokens: await estimatePromptTokens(request) }) };
  },
};

export function createGatewayExchanges(deps: OpenAIDeps, isClosing: () => boolean, streams: StreamLimits = DEFAULT_STREAM_LIMITS): GatewayExchanges {
  const exchangeDeps: ExchangeDeps = {
    gateway: deps.gateway,
    embeddings: deps.embeddings,
    authenticator: deps.authenticator,
    log: deps.log,
    isClosing,
    streams,
    recordRefusal: deps.recordRefusal,
    inFlight: deps.inFlight,
    session: deps.session,
    tracer: deps.tracer,
  };
  const route = <F>(operation: ExchangeOperation<F>): GatewayRoute => ({
    exchange: (req, res, body, started) => runGatewayExchange(exchangeDeps, operation, req, res, body, started),
    refuse(error) {
      operation.refused(exchangeDeps, error);
      if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(error)}`);
      const answer = operation.edge.mapError(error);
      return { status: answer.status, headers: answer.headers, text: JSON.stringify(answer.body) };
    },
  });
  const table = new Map<string, GatewayRoute>([
    ['/v1/chat/completions', route(createCodecOperation(chatCodec, OPENAI_EDGE))],
    ['/v1/messages', route(createCodecOperation(messagesCodec, ANTHROPIC_EDGE))],
    ['/v1/messages/count_tokens', route(countTokensOperation)],
    ['/v1/responses', route(createCodecOperation(responsesCodec, OPENAI_EDGE))],
    ['/v1/completions', route(createCodecOperation(completionsCodec, OPENAI_EDGE))],
  ]);
  if (deps.embeddings) table.set(EMBEDDINGS_PATH, route(embeddingsOperation));
  return table;
}

/**
 * Every route of the table on Fastify, for bodies the fast path leaves (compressed, chunked), which the
 * app's hooks decode first; each in its own scope, so a refusal before the exchange answers in its dialect.
 */
export function registerExchangeRoutes(app: FastifyInstance, exchanges: GatewayExchanges, allow: (url: string, methods: string[]) => void): void {
  for (const [url, route] of exchanges) {
    void app.register(async (scope) => {
      scope.setErrorHandler((error: Error & { code?: string; statusCode?: number }, _request, reply) => {
        const answer = route.refuse(fastifyErrorToHerd(error));
        void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(answer.text);
      });
      scope.post(url, async (req, reply) => {
        const started = performance.now();
        reply.hijack();
        await route.exchange(req.raw, reply.raw, Buffer.isBuffer(req.body) ? req.body : undefined, started);
      });
    });
    allow(url, ['POST']);
  }
}

/** Fastify's own errors in Herd's terms. */
export function fastifyErrorToHerd(error: Error & { code?: string; statusCode?: number }): HerdError {
  if (error instanceof HerdError) return error;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HerdError('PAYLOAD_TOO_LARGE', 'request body is larger than the server accepts');
  if (typeof error.statusCode === 'number' && error.statusCode < 500) return new HerdError('INVALID_ARG', error.message);
  return toHerdError(error);
}
