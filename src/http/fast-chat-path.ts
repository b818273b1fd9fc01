// POST /v1/chat/completions without the framework: a body with a known length and no content coding
// goes straight to the chat exchange. Everything else (compressed or chunked bodies, oversized ones,
// shutdown) falls through to Fastify, whose route answers through the same exchange.
// Fastify's per-request plumbing was a large share of the gateway's own cost (docs/decisions/framework-free-fast-paths.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { runChatCompletionExchange, type ChatExchangeDeps } from './chat-completion-exchange.ts';
import { hasPlainBody, readBody } from './plain-body.ts';

const CHAT_PATH = '/v1/chat/completions';

export interface FastChatOptions extends ChatExchangeDeps {
  maxInputSize: number;
}

/** Returns true when it took the request. */
export function createFastChatHandler(options: FastChatOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST' || req.url !== CHAT_PATH || options.isClosing()) return false;
    if (!hasPlainBody(req, options.maxInputSize)) return false;
    const started = performance.now();
    readBody(req, (body) => void runChatCompletionExchange(options, req, res, body, started));
    return true;
  };
}
