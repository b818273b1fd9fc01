// The chunks inside Anthropic Messages SSE text that went to a client as bytes: read through the same
// translator the translated path uses, only when Herd needs their content after all — an estimate for a
// stream that ended without usage, or the cache's copy.
import type { ChatChunk } from '../../protocol/chat-types.ts';
import { AnthropicStreamTranslator } from './anthropic-stream-translator.ts';
import { readSseJsonObjects } from '../read-sse-json-objects.ts';

/** The canonical chunks `texts` (whole Anthropic events) amount to; events that do not parse are skipped, an `error` event ends them. */
export function parseMessagesSseChunks(texts: Iterable<string>): ChatChunk[] {
  const translator = new AnthropicStreamTranslator('pass-through');
  const chunks: ChatChunk[] = [];
  for (const event of readSseJsonObjects(texts)) {
    // The bytes already reached the client; an error event there ends what was answered.
    if (event.type === 'error') return chunks;
    const chunk = translator.translate(event);
    if (chunk !== undefined) chunks.push(chunk);
  }
  return chunks;
}
