// Legacy `text_completion` objects (an upstream's own answer on pass-through) read back as canonical
// chat: the choice's `text` is the message's content. For the ledger, the cache and the usage estimate.
import type { ChatChunk, ChatResponse, FinishReason } from '../../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { readSseJsonObjects } from '../read-sse-json-objects.ts';
import { mapOpenAIFinishReason } from '../openai-chat/map-openai-finish-reason.ts';

/** `body` as a chat.completion; undefined when it has no choices. */
export function convertCompletionsToChat(body: unknown): ChatResponse | undefined {
  if (!isJsonObject(body) || !Array.isArray(body.choices) || !body.choices.every(isJsonObject)) return undefined;
  return {
    ...header(body, 'chat.completion'),
    choices: (body.choices as JsonObject[]).map((c, i) => ({
      index: typeof c.index === 'number' ? c.index : i,
      message: { role: 'assistant', content: typeof c.text === 'string' ? c.text : '' },
      finish_reason: finishOf(c) ?? 'stop',
    })),
  };
}

/** One streamed text_completion as a chunk; undefined for one without choices (the usage chunk). */
export function convertCompletionsChunk(body: unknown): ChatChunk | undefined {
  if (!isJsonObject(body) || !Array.isArray(body.choices) || body.choices.length === 0 || !body.choices.every(isJsonObject)) return undefined;
  return {
    ...header(body, 'chat.completion.chunk'),
    choices: (body.choices as JsonObject[]).map((c, i) => ({
      index: typeof c.index === 'number' ? c.index : i,
      delta: typeof c.text === 'string' && c.text !== '' ? { content: c.text } : {},
      finish_reason: finishOf(c),
    })),
  };
}

/** The chunks inside whole completions SSE texts (RawSse pieces); anything else is skipped. */
export function parseCompletionsSseChunks(texts: Iterable<string>): ChatChunk[] {
  const chunks: ChatChunk[] = [];
  for (const value of readSseJsonObjects(texts)) {
    const chunk = convertCompletionsChunk(value);
    if (chunk === undefined) continue;
    // Chat streams name the role once, on the first chunk (the cache's assembler needs it).
    if (chunks.length === 0) for (const choice of chunk.choices) choice.delta.role = 'assistant';
    chunks.push(chunk);
  }
  return chunks;
}

function header<O extends 'chat.completion' | 'chat.completion.chunk'>(body: JsonObject, object: O) {
  return {
    id: typeof body.id === 'string' ? body.id : 'cmpl',
    object,
    created: typeof body.created === 'number' ? body.created : Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : '',
  };
}

function finishOf(choice: JsonObject): FinishReason | null {
  return choice.finish_reason == null ? null : mapOpenAIFinishReason(choice.finish_reason);
}
