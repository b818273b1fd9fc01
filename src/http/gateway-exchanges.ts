// The gateway's POST routes as one table, path → exchange: the fast path (fast-gateway-path.ts) and the
// Fastify routes both answer through it, so each dialect has one flow whichever entry a request takes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { runMessagesExchange } from './anthropic-messages-exchange.ts';
import { runChatCompletionExchange, type ChatExchangeDeps } from './chat-completion-exchange.ts';
import { runDialectExchange } from './dialect-exchange.ts';
import { EMBEDDINGS_PATH, runEmbeddingsExchange } from './embeddings-exchange.ts';
import { completionsCodec } from '../gateway/ingress/openai-completions/completions-codec.ts';
import { responsesCodec } from '../gateway/ingress/openai-responses/responses-codec.ts';
import type { OpenAIDeps } from './openai-deps.ts';

/** Answers `req` on `res`; `body` is the whole request body, already decoded. Never throws. */
export type GatewayExchange = (req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, started: number) => Promise<void>;

export type GatewayExchanges = ReadonlyMap<string, GatewayExchange>;

export function createGatewayExchanges(deps: OpenAIDeps, isClosing: () => boolean): GatewayExchanges {
  const chat: ChatExchangeDeps = { gateway: deps.gateway, authenticator: deps.authenticator, log: deps.log, isClosing };
  const table = new Map<string, GatewayExchange>([
    ['/v1/chat/completions', (req, res, body, started) => runChatCompletionExchange(chat, req, res, body, started)],
    ['/v1/messages', (req, res, body, started) => runMessagesExchange(chat, 'messages', req, res, body, started)],
    ['/v1/messages/count_tokens', (req, res, body, started) => runMessagesExchange(chat, 'count_tokens', req, res, body, started)],
    ['/v1/responses', (req, res, body, started) => runDialectExchange(chat, responsesCodec, req, res, body, started)],
    ['/v1/completions', (req, res, body, started) => runDialectExchange(chat, completionsCodec, req, res, body, started)],
  ]);
  const embeddings = deps.embeddings;
  if (embeddings) {
    const embeddingsDeps = { embeddings, authenticator: deps.authenticator, log: deps.log, isClosing };
    table.set(EMBEDDINGS_PATH, (req, res, body, started) => runEmbeddingsExchange(embeddingsDeps, req, res, body, started));
  }
  return table;
}

/**
 * The Fastify entry of `url`'s exchange, for bodies the fast path leaves (compressed, chunked), which the
 * app's hooks decode first. No-op when the table has no such route (embeddings not configured).
 */
export function registerExchangeRoute(scope: FastifyInstance, exchanges: GatewayExchanges, url: string, allow: (url: string, methods: string[]) => void): void {
  const exchange = exchanges.get(url);
  if (exchange === undefined) return;
  scope.post(url, async (req, reply) => {
    const started = performance.now();
    reply.hijack();
    await exchange(req.raw, reply.raw, Buffer.isBuffer(req.body) ? req.body : undefined, started);
  });
  allow(url, ['POST']);
}
