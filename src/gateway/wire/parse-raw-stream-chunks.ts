// A pass-through stream's raw SSE pieces read back as canonical chunks, for the two consumers that need
// the answer's content after the bytes have gone to the client: the usage estimate of a stream that
// ended without usage, and the cache's stored copy. One reader per dialect that has pass-through; each
// runs only when one of those needs it, never per event.
import { HerdError } from '../../core/errors.ts';
import type { ChatChunk } from '../protocol/chat-types.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import { parseMessagesSseChunks } from './anthropic-messages/parse-messages-sse-chunks.ts';
import { parseChatSseChunks } from './openai-chat/parse-chat-sse-chunks.ts';
import { parseCompletionsSseChunks } from './openai-completions/convert-completions-to-chat.ts';
import { parseResponsesSseChunks } from './openai-responses/parse-responses-sse-chunks.ts';

/** The chunks `texts` (whole SSE events in `dialect`) amount to; events that carry no content give none. */
export function parseRawStreamChunks(dialect: IngressDialect, texts: readonly string[]): ChatChunk[] {
  switch (dialect) {
    case 'openai-chat':
      return parseChatSseChunks(texts);
    case 'anthropic-messages':
      return parseMessagesSseChunks(texts);
    case 'openai-responses':
      return parseResponsesSseChunks(texts);
    case 'openai-completions':
      return parseCompletionsSseChunks(texts);
    case 'openai-embeddings':
      // Embeddings answers are never streams.
      throw new HerdError('INTERNAL', 'embeddings answers have no stream to read');
  }
}
