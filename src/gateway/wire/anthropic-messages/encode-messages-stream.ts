// Canonical chat.completion.chunks -> Anthropic's named SSE events, as the Messages API sends them:
// message_start, ping, per block content_block_start / content_block_delta* / content_block_stop,
// then message_delta (stop_reason and the whole message's usage) and message_stop. Pure: text in, text out.
import type { ChatChunk, FinishReason, Usage } from '../../protocol/chat-types.ts';
import { convertUsageToMessages } from './convert-usage-to-messages.ts';
import { toMessageId } from './encode-messages-response.ts';
import { mapStopReason } from './map-stop-reason.ts';
import type { MessagesResponse } from './messages-types.ts';

type OpenBlock = { kind: 'text'; index: number } | { kind: 'thinking'; index: number } | { kind: 'tool'; index: number; toolIndex: number };

export interface StreamEnd {
  usage: Usage;
  finishReason: FinishReason | null;
  rawFinishReason: string | null;
}

/** One SSE event with its name on an `event:` line, which the Anthropic SDKs require. */
export function formatMessagesEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class MessagesStreamEncoder {
  private started = false;
  private open: OpenBlock | undefined;
  private nextIndex = 0;
  private finishReason: FinishReason | null = null;
  private readonly fallbackModel: string;
  private readonly inputTokensHint: number;

  /** `inputTokensHint`: message_start's input_tokens before the upstream has said (the real count follows in message_delta). */
  constructor(options: { model: string; inputTokensHint?: number }) {
    this.fallbackModel = options.model;
    this.inputTokensHint = options.inputTokensHint ?? 0;
  }

  /** The events one chunk becomes (possibly none). */
  push(chunk: ChatChunk): string {
    let out = this.start(chunk);
    const choice = chunk.choices[0];
    if (choice === undefined) return out; // a usage-only chunk: usage goes in message_delta
    const delta = choice.delta;
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
      out += this.ensure('thinking');
      out += this.delta({ type: 'thinking_delta', thinking: delta.reasoning_content });
    }
    if (delta.reasoning_signature !== undefined && this.open?.kind === 'thinking') out += this.delta({ type: 'signature_delta', signature: delta.reasoning_signature });
    if (typeof delta.content === 'string' && delta.content !== '') {
      out += this.ensure('text');
      out += this.delta({ type: 'text_delta', text: delta.content });
    }
    for (const call of delta.tool_calls ?? []) {
      const current = this.open;
      if (current?.kind !== 'tool' || current.toolIndex !== call.index || call.id !== undefined) {
        out += this.close();
        const index = this.nextIndex++;
        this.open = { kind: 'tool', index, toolIndex: call.index };
        out += formatMessagesEvent('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: call.id ?? `toolu_${index}`, name: call.function?.name ?? '', input: {} },
        });
      }
      const args = call.function?.arguments;
      if (args !== undefined && args !== '') out += this.delta({ type: 'input_json_delta', partial_json: args });
    }
    if (choice.finish_reason !== null) this.finishReason = choice.finish_reason;
    return out;
  }

  /** The closing events once the stream has ended well. */
  finish(end: StreamEnd): string {
    let out = this.start(undefined);
    out += this.close();
    const usage = convertUsageToMessages(end.usage);
    out += formatMessagesEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: mapStopReason(end.finishReason ?? this.finishReason, end.rawFinishReason), stop_sequence: null },
      usage,
    });
    out += formatMessagesEvent('message_stop', { type: 'message_stop' });
    return out;
  }

  private start(chunk: ChatChunk | undefined): string {
    if (this.started) return '';
    this.started = true;
    const message: MessagesResponse = {
      id: toMessageId(chunk?.id || 'herd'),
      type: 'message',
      role: 'assistant',
      model: chunk?.model || this.fallbackModel,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: this.inputTokensHint, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    return formatMessagesEvent('message_start', { type: 'message_start', message }) + formatMessagesEvent('ping', { type: 'ping' });
  }

  private ensure(kind: 'text' | 'thinking'): string {
    if (this.open?.kind === kind) return '';
    const out = this.close();
    const index = this.nextIndex++;
    this.open = { kind, index };
    const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    return out + formatMessagesEvent('content_block_start', { type: 'content_block_start', index, content_block: block });
  }

  private delta(delta: Record<string, string>): string {
    return formatMessagesEvent('content_block_delta', { type: 'content_block_delta', index: this.open?.index ?? 0, delta });
  }

  private close(): string {
    if (this.open === undefined) return '';
    const { index } = this.open;
    this.open = undefined;
    return formatMessagesEvent('content_block_stop', { type: 'content_block_stop', index });
  }
}
