// Translates Anthropic Messages streaming events into OpenAI chat.completion.chunks, one event at a
// time, keeping the state (ids, tool-call indexes, usage, stop reason) between them; pure, no I/O.
import type { ChatChunk, ChatChunkDelta, FinishReason, Usage } from '../../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { nowSeconds } from '../create-ids.ts';
import type { AnthropicUsage } from './anthropic-types.ts';
import { convertAnthropicUsage } from './convert-anthropic-usage.ts';
import { convertAnthropicStreamError } from './map-anthropic-error.ts';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts';

interface ToolBlockState {
  /** Position among the message's tool calls: OpenAI's tool_calls[].index. */
  index: number;
  sentArguments: boolean;
}

/**
 * The sequence (Anthropic "Streaming messages"): message_start, then per content block
 * content_block_start / content_block_delta* / content_block_stop, then message_delta (stop_reason,
 * cumulative usage) and message_stop; `ping` anywhere; an `error` event may end it instead.
 * Unknown event and delta types are ignored, as Anthropic's versioning policy asks of clients.
 */
export class AnthropicStreamTranslator {
  private readonly provider: string;
  private readonly sanitize: (text: string) => string;
  private readonly created = nowSeconds();
  private id = '';
  private model = '';
  private readonly toolBlocks = new Map<number, ToolBlockState>();
  private usage: AnthropicUsage | undefined;
  private stopReason: string | null = null;
  private stopped = false;
  private thinking = '';

  /** `sanitize` bounds and redacts upstream text before it enters an error message. */
  constructor(provider: string, sanitize: (text: string) => string = (text) => text) {
    this.provider = provider;
    this.sanitize = sanitize;
  }

  /** True once message_stop arrived: the stream is complete. */
  get finished(): boolean {
    return this.stopped;
  }

  get finishReason(): FinishReason | null {
    return this.stopReason === null ? null : mapAnthropicStopReason(this.stopReason);
  }

  get rawFinishReason(): string | null {
    return this.stopReason;
  }

  /** Usage merged from message_start and message_delta; undefined if neither carried any. */
  get finalUsage(): Usage | undefined {
    return this.usage === undefined ? undefined : convertAnthropicUsage(this.usage);
  }

  /** The thinking text streamed so far, for Herd's count of reasoning tokens. */
  get thinkingText(): string {
    return this.thinking;
  }

  /** The chunk one event becomes, if any. Throws UpstreamError for an `error` event. */
  translate(event: JsonObject): ChatChunk | undefined {
    switch (event.type) {
      case 'message_start': {
        const message = isJsonObject(event.message) ? event.message : {};
        if (typeof message.id === 'string') this.id = message.id;
        if (typeof message.model === 'string') this.model = message.model;
        this.mergeUsage(message.usage);
        return this.chunk({ role: 'assistant', content: '' });
      }
      case 'content_block_start':
        return this.startBlock(event);
      case 'content_block_delta':
        return this.blockDelta(event);
      case 'content_block_stop':
        return this.stopBlock(event);
      case 'message_delta': {
        const delta = isJsonObject(event.delta) ? event.delta : {};
        this.mergeUsage(event.usage);
        if (typeof delta.stop_reason !== 'string') return undefined;
        this.stopReason = delta.stop_reason;
        return this.chunk({}, mapAnthropicStopReason(delta.stop_reason));
      }
      case 'message_stop':
        this.stopped = true;
        return undefined;
      case 'error':
        throw convertAnthropicStreamError(this.provider, event, this.sanitize);
      default: // ping and event types added after this code was written
        return undefined;
    }
  }

  private startBlock(event: JsonObject): ChatChunk | undefined {
    const block = isJsonObject(event.content_block) ? event.content_block : {};
    const blockIndex = typeof event.index === 'number' ? event.index : -1;
    if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') return this.chunk({ content: block.text });
    if (block.type !== 'tool_use') return undefined;
    const state: ToolBlockState = { index: this.toolBlocks.size, sentArguments: false };
    this.toolBlocks.set(blockIndex, state);
    // The start carries `input: {}`; the arguments follow as input_json_delta. Pre-filled input is kept.
    const input = isJsonObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    state.sentArguments = input !== '';
    return this.chunk({
      tool_calls: [
        {
          index: state.index,
          id: String(block.id ?? ''),
          type: 'function',
          function: { name: String(block.name ?? ''), arguments: input },
        },
      ],
    });
  }

  private blockDelta(event: JsonObject): ChatChunk | undefined {
    const delta = isJsonObject(event.delta) ? event.delta : {};
    switch (delta.type) {
      case 'text_delta':
        return typeof delta.text === 'string' && delta.text !== '' ? this.chunk({ content: delta.text }) : undefined;
      case 'thinking_delta':
        if (typeof delta.thinking !== 'string' || delta.thinking === '') return undefined;
        this.thinking += delta.thinking;
        return this.chunk({ reasoning_content: delta.thinking });
      case 'input_json_delta': {
        const state = this.toolBlocks.get(typeof event.index === 'number' ? event.index : -1);
        if (state === undefined || typeof delta.partial_json !== 'string' || delta.partial_json === '') return undefined;
        state.sentArguments = true;
        return this.chunk({ tool_calls: [{ index: state.index, function: { arguments: delta.partial_json } }] });
      }
      case 'signature_delta':
        return typeof delta.signature === 'string' && delta.signature !== '' ? this.chunk({ reasoning_signature: delta.signature }) : undefined;
      default: // citations_delta: no OpenAI equivalent
        return undefined;
    }
  }

  /** A tool call that streamed no arguments gets "{}", as OpenAI sends for no-argument calls. */
  private stopBlock(event: JsonObject): ChatChunk | undefined {
    const state = this.toolBlocks.get(typeof event.index === 'number' ? event.index : -1);
    if (state === undefined || state.sentArguments) return undefined;
    state.sentArguments = true;
    return this.chunk({ tool_calls: [{ index: state.index, function: { arguments: '{}' } }] });
  }

  private mergeUsage(value: unknown): void {
    if (!isJsonObject(value)) return;
    const merged: AnthropicUsage = { ...this.usage };
    // message_delta usage is cumulative; null fields there mean "not reported", not zero.
    for (const [key, item] of Object.entries(value)) if (item !== null) merged[key] = item;
    this.usage = merged;
  }

  private chunk(delta: ChatChunkDelta, finishReason: FinishReason | null = null): ChatChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
  }
}
