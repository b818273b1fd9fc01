// Byte pass-through of an Anthropic Messages stream to an Anthropic client: the upstream's named events go
// on as sent while this reads, from their text, what the ledger and the relay need — usage, stop reason,
// model, errors, the end. Only message_start, message_delta, error and thinking deltas (for the count of
// reasoning tokens) are parsed; other content events are checked for framing (a JSON object) and counted.
import type { FinishReason, Usage } from '../../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { looksLikeObject, parseJsonObject, readStringField } from '../read-sse-event-text.ts';
import type { SseBlock } from '../split-sse-events.ts';
import type { AnthropicUsage } from './anthropic-types.ts';
import { convertAnthropicUsage } from './convert-anthropic-usage.ts';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts';

/** How one event is passed on. */
export type AnthropicPassDecision =
  | { kind: 'forward' }
  /** message_stop: the stream's last event (forwarded too, but on its own: see AnthropicProvider.passStream). */
  | { kind: 'stop' }
  /** An `error` event: its parsed body, for the same UpstreamError the translated path throws. */
  | { kind: 'error'; body: JsonObject }
  | { kind: 'malformed'; detail: string };

/** Events that carry the answer's content: the first one opens the stream (no fallback after it). */
const CONTENT_EVENTS = new Set(['content_block_start', 'content_block_delta', 'content_block_stop']);

export class AnthropicMessagesPassThrough {
  /** Content events forwarded (the relay's chunk count). */
  chunks = 0;
  /** message_start.message.model, for renaming. */
  model: string | undefined;
  /** message_delta.delta.stop_reason as sent. */
  rawStopReason: string | null = null;
  /** True once message_stop was read. */
  stopped = false;
  /** message_start's usage merged with message_delta's (cumulative; nulls mean "not reported"). */
  private rawUsage: AnthropicUsage | undefined;
  /** The thinking text streamed (thinking_delta events), for Herd's count of reasoning tokens. */
  thinking = '';

  get usage(): Usage | undefined {
    return this.rawUsage === undefined ? undefined : convertAnthropicUsage(this.rawUsage);
  }

  get finishReason(): FinishReason | null {
    return this.rawStopReason === null ? null : mapAnthropicStopReason(this.rawStopReason);
  }

  read(block: SseBlock): AnthropicPassDecision {
    const data = block.data;
    // Comments and data-less blocks carry nothing Herd reads; they go on as sent.
    if (data === undefined) return { kind: 'forward' };
    if (!looksLikeObject(data)) return { kind: 'malformed', detail: 'SSE event is not a JSON object' };
    // Anthropic names every event and the name agrees with data.type; the type field covers a server that omits names.
    const type = block.event ?? readStringField(data, 'type');
    if (type !== undefined && CONTENT_EVENTS.has(type)) {
      this.chunks++;
      if (type === 'content_block_delta' && data.includes('"thinking_delta"')) this.readThinking(data);
      return { kind: 'forward' };
    }
    switch (type) {
      case 'message_start':
        return this.readParsed(data, (event) => {
          const message = isJsonObject(event.message) ? event.message : {};
          if (typeof message.model === 'string') this.model = message.model;
          this.mergeUsage(message.usage);
        });
      case 'message_delta':
        return this.readParsed(data, (event) => {
          const delta = isJsonObject(event.delta) ? event.delta : {};
          if (typeof delta.stop_reason === 'string') this.rawStopReason = delta.stop_reason;
          this.mergeUsage(event.usage);
        });
      case 'message_stop':
        this.stopped = true;
        return { kind: 'stop' };
      case 'error': {
        const event = parseJsonObject(data);
        return event === undefined ? malformedJson(data) : { kind: 'error', body: event };
      }
      default: // ping, and event types added after this code was written: forwarded as sent
        return { kind: 'forward' };
    }
  }

  private readThinking(data: string): void {
    const delta = parseJsonObject(data)?.delta;
    if (isJsonObject(delta) && delta.type === 'thinking_delta' && typeof delta.thinking === 'string') this.thinking += delta.thinking;
  }

  private readParsed(data: string, read: (event: JsonObject) => void): AnthropicPassDecision {
    const event = parseJsonObject(data);
    if (event === undefined) return malformedJson(data);
    read(event);
    return { kind: 'forward' };
  }

  private mergeUsage(value: unknown): void {
    if (!isJsonObject(value)) return;
    const merged: AnthropicUsage = { ...this.rawUsage };
    for (const [key, item] of Object.entries(value)) if (item !== null) merged[key] = item;
    this.rawUsage = merged;
  }
}

const malformedJson = (data: string): AnthropicPassDecision => ({ kind: 'malformed', detail: `malformed JSON in SSE event (${data.length} bytes)` });
