// The chunks inside OpenAI chat SSE text that went to a client as bytes: parsed only when Herd needs
// their content after all — an estimate for a stream that ended without usage, or the cache's copy.
import type { ChatChunk } from '../../protocol/chat-types.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { SseEventSplitter } from '../split-sse-events.ts';
import { CompletionTextCollector } from '../../protocol/usage-estimate.ts';

/** Each event's data that is a chat.completion.chunk with choices, in order; anything else is skipped. */
export function parseChatChunkData(data: Iterable<string>): ChatChunk[] {
  const chunks: ChatChunk[] = [];
  for (const text of data) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    if (!isJsonObject(value) || !Array.isArray(value.choices) || !value.choices.every(isJsonObject)) continue;
    for (const choice of value.choices as Array<Record<string, unknown>>) choice.delta ??= {};
    chunks.push(value as unknown as ChatChunk);
  }
  return chunks;
}

/** parseChatChunkData over whole SSE texts (RawSse pieces). */
export function parseChatSseChunks(texts: Iterable<string>): ChatChunk[] {
  const splitter = new SseEventSplitter();
  const data: string[] = [];
  for (const text of texts) {
    for (const block of splitter.feed(text)) if (block.data !== undefined && block.data !== '[DONE]') data.push(block.data);
  }
  return parseChatChunkData(data);
}

/** The generated text of chunks' data, for estimateUsage. */
export function collectChatDataText(data: Iterable<string>): string {
  const collector = new CompletionTextCollector();
  for (const chunk of parseChatChunkData(data)) collector.addChunk(chunk);
  return collector.text();
}
