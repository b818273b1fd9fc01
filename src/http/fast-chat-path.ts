// POST /v1/chat/completions without the framework: a body with a known length and no content coding
// goes straight to the chat exchange. Everything else (compressed or chunked bodies, oversized ones,
// shutdown) falls through to Fastify, whose route answers through the same exchange.
// Measured in bench/gateway: Fastify's per-request plumbing was a large share of the gateway's own cost.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { runChatCompletionExchange, type ChatExchangeDeps } from './chat-completion-exchange.ts';

const CHAT_PATH = '/v1/chat/completions';

export interface FastChatOptions extends ChatExchangeDeps {
  maxInputSize: number;
}

/** Returns true when it took the request. */
export function createFastChatHandler(options: FastChatOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST' || req.url !== CHAT_PATH || options.isClosing()) return false;
    const headers = req.headers;
    if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
    const length = Number(headers['content-length']);
    if (!Number.isInteger(length) || length < 0 || length > options.maxInputSize) return false;
    const started = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      void runChatCompletionExchange(options, req, res, body, started);
    });
    return true;
  };
}
