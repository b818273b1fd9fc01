// Byte pass-through of an OpenAI chat stream to an OpenAI chat client: the upstream's events go on as
// sent while this reads, from their text, what the ledger and the relay need — the usage chunk (the only
// event parsed), the finish reason, the model name, errors, the end. An event is parsed only when its
// text says it carries usage or an error; the rest is checked for framing (a JSON object) and forwarded.
import type { FinishReason, Usage } from '../../protocol/chat-types.ts';
import { hasObjectField, looksLikeObject, parseJsonObject, readStringField } from '../read-sse-event-text.ts';
import type { SseBlock } from '../split-sse-events.ts';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.ts';

/** How one event is passed on. */
export type PassDecision =
  | { kind: 'forward' }
  /** The stream's [DONE]: not forwarded (the transport writes its own once the ledger has the rows). */
  | { kind: 'done' }
  /** A usage-only chunk the client did not ask for, or a comment-free nothing: dropped. */
  | { kind: 'drop' }
  /** Forward this text instead (a chunk whose usage the client must not see, re-serialised without it). */
  | { kind: 'replace'; text: string }
  /** The event is an error object, or is not a JSON object at all. */
  | { kind: 'error'; body: Record<string, unknown> }
  | { kind: 'malformed'; detail: string };

export class OpenAIChatPassThrough {
  /** Events with choices forwarded (the relay's chunk count). */
  chunks = 0;
  usage: Usage | undefined;
  /** The upstream's usage object as sent, for the ledger's conversion. */
  rawUsage: unknown;
  finishReason: FinishReason | null = null;
  rawFinishReason: string | null = null;
  /** The `model` the upstream's chunks carry (the first one that has it), for renaming. */
  model: string | undefined;
  /** Every forwarded chunk's data, kept (not copied) for an estimate when no usage comes, and for the cache. */
  readonly data: string[] = [];

  constructor(
    private readonly includeUsage: boolean,
    private readonly convertUsage: (raw: unknown) => Usage | undefined,
  ) {}

  read(block: SseBlock): PassDecision {
    const data = block.data;
    // Comments and id-only blocks carry nothing Herd reads; they go on as sent.
    if (data === undefined) return { kind: 'forward' };
    if (data === '[DONE]') return { kind: 'done' };
    if (!looksLikeObject(data)) return { kind: 'malformed', detail: 'SSE event is not a JSON object' };
    if (hasObjectField(data, 'error')) {
      const parsed = parseJsonObject(data);
      if (parsed === undefined) return { kind: 'malformed', detail: `malformed JSON in SSE event (${data.length} bytes)` };
      if (parsed.error != null) return { kind: 'error', body: parsed };
    }
    if (this.model === undefined) this.model = readStringField(data, 'model');
    if (hasObjectField(data, 'usage')) return this.readUsageChunk(data);
    this.noteFinishReason(data);
    this.data.push(data);
    this.chunks++;
    return { kind: 'forward' };
  }

  /** The one parsed event: usage for the ledger; forwarded only under include_usage. */
  private readUsageChunk(data: string): PassDecision {
    const chunk = parseJsonObject(data);
    if (chunk === undefined) return { kind: 'malformed', detail: `malformed JSON in SSE event (${data.length} bytes)` };
    this.rawUsage = chunk.usage;
    this.usage = this.convertUsage(chunk.usage) ?? this.usage;
    const choices = chunk.choices;
    if (!Array.isArray(choices) || choices.length === 0) return this.includeUsage ? { kind: 'forward' } : { kind: 'drop' };
    // Some servers put usage on a chunk with choices: the choices go on, the usage only under include_usage.
    this.noteFinishReason(data);
    this.data.push(data);
    this.chunks++;
    if (this.includeUsage) return { kind: 'forward' };
    chunk.usage = undefined;
    return { kind: 'replace', text: `data: ${JSON.stringify(chunk)}\n\n` };
  }

  private noteFinishReason(data: string): void {
    if (this.rawFinishReason !== null) return;
    const raw = readStringField(data, 'finish_reason');
    if (raw === undefined) return;
    this.rawFinishReason = raw;
    this.finishReason = mapOpenAIFinishReason(raw);
  }
}
