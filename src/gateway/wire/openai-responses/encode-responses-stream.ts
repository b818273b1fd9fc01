// Encodes a canonical chat stream as the Responses event sequence: response.created and in_progress,
// then per output item added → content part added → deltas → done events, then response.completed
// (or response.incomplete at the token limit), or response.failed when the stream breaks.
import type { ChatChunk, FinishReason, Usage } from '../../protocol/chat-types.ts';
import type { EncodeContext, IngressStreamEncoder, SseEvent, StreamFailure } from '../../protocol/ingress-codec.ts';
import { convertUsageToResponses, createResponseObject, createResponsesId, mapFinishToStatus } from './encode-responses-response.ts';
import { restoreNamespacedName } from './restore-namespaced-name.ts';
import type {
  ItemStatus,
  ResponsesDecoded,
  ResponsesCustomCallItem,
  ResponsesFunctionCallItem,
  ResponsesMessageItem,
  ResponsesOutputItem,
  ResponsesReasoningItem,
  ResponsesResponse,
  ResponsesStreamEventBody,
  ResponseStatus,
} from './responses-types.ts';

interface OpenText {
  kind: 'text' | 'refusal';
  index: number;
  value: string;
}
interface OpenMessage {
  outputIndex: number;
  item: ResponsesMessageItem;
  part?: OpenText;
}
interface OpenReasoning {
  outputIndex: number;
  item: ResponsesReasoningItem;
}
interface OpenCall {
  outputIndex: number;
  item: ResponsesFunctionCallItem | ResponsesCustomCallItem;
}

export function createResponsesStreamEncoder(decoded: ResponsesDecoded, context: EncodeContext): IngressStreamEncoder {
  return new ResponsesStreamEncoder(decoded, context.model);
}

class ResponsesStreamEncoder implements IngressStreamEncoder {
  private readonly id = createResponsesId('resp');
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private sequence = 0;
  private readonly output: ResponsesOutputItem[] = [];
  private message: OpenMessage | undefined;
  private reasoning: OpenReasoning | undefined;
  /** Function calls by the chat stream's tool-call index; open until the stream ends (their deltas may interleave). */
  private readonly calls = new Map<number, OpenCall>();
  private finish: FinishReason | null = null;
  private events: SseEvent[] = [];

  constructor(
    private readonly decoded: ResponsesDecoded,
    private readonly model: string,
  ) {}

  start(): SseEvent[] {
    const response = this.snapshot('in_progress', null);
    this.emit({ type: 'response.created', response });
    this.emit({ type: 'response.in_progress', response });
    return this.take();
  }

  chunk(chunk: ChatChunk): SseEvent[] {
    // Responses has no `n`: the first choice is the answer.
    const choice = chunk.choices.find((c) => c.index === 0);
    if (choice === undefined) return [];
    const delta = choice.delta;
    if (delta.reasoning_content) this.reasoningDelta(delta.reasoning_content);
    if (delta.content) this.textDelta('text', delta.content);
    if (delta.refusal) this.textDelta('refusal', delta.refusal);
    for (const call of delta.tool_calls ?? []) {
      const custom = call.type === 'custom' || call.custom !== undefined;
      this.callDelta(call.index, custom, call.id, custom ? call.custom?.name : call.function?.name, custom ? call.custom?.input : call.function?.arguments);
    }
    if (choice.finish_reason !== null) this.finish = choice.finish_reason;
    return this.take();
  }

  end(usage: Usage): SseEvent[] {
    const { status, incomplete } = mapFinishToStatus(this.finish);
    const itemStatus: ItemStatus = status === 'completed' ? 'completed' : 'incomplete';
    this.closeReasoning(itemStatus);
    this.closeMessage(itemStatus);
    for (const call of [...this.calls.values()].sort((a, b) => a.outputIndex - b.outputIndex)) this.closeCall(call);
    this.calls.clear();
    const response = this.snapshot(status, convertUsageToResponses(usage));
    response.incomplete_details = incomplete;
    this.emit({ type: status === 'completed' ? 'response.completed' : 'response.incomplete', response });
    return this.take();
  }

  fail(error: StreamFailure): SseEvent[] {
    for (const item of this.output) item.status = item.status === 'completed' ? 'completed' : 'incomplete';
    const response = this.snapshot('failed', null);
    // ResponseError's codes: a rate limit is named as such, any other failure is the server's.
    response.error = { code: error.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error', message: error.message };
    this.emit({ type: 'response.failed', response });
    return this.take();
  }

  private snapshot(status: ResponseStatus, usage: ResponsesResponse['usage']): ResponsesResponse {
    return createResponseObject(this.decoded.echo, { id: this.id, createdAt: this.createdAt, model: this.model, status, output: this.output, usage });
  }

  /**
   * Serialised at once: the items are mutated by later deltas, and serialising now is what lets the
   * encoder hand out its live state instead of a copy per event.
   */
  private emit(event: ResponsesStreamEventBody): void {
    this.events.push({ event: event.type, data: JSON.stringify({ ...event, sequence_number: this.sequence++ }) });
  }

  private take(): SseEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }

  private addItem<T extends ResponsesOutputItem>(item: T): number {
    const outputIndex = this.output.length;
    this.output.push(item);
    this.emit({ type: 'response.output_item.added', output_index: outputIndex, item });
    return outputIndex;
  }

  /** Reasoning goes out as one summary part, the part Responses clients display. */
  private reasoningDelta(text: string): void {
    this.closeMessage('completed');
    if (this.reasoning === undefined) {
      const item: ResponsesReasoningItem = { type: 'reasoning', id: createResponsesId('rs'), summary: [], status: 'in_progress' };
      const outputIndex = this.addItem(item);
      this.reasoning = { outputIndex, item };
      item.summary.push({ type: 'summary_text', text: '' });
      this.emit({ type: 'response.reasoning_summary_part.added', item_id: item.id, output_index: outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    const { item, outputIndex } = this.reasoning;
    const part = item.summary[0]!;
    part.text += text;
    this.emit({ type: 'response.reasoning_summary_text.delta', item_id: item.id, output_index: outputIndex, summary_index: 0, delta: text });
  }

  private closeReasoning(status: ItemStatus): void {
    const open = this.reasoning;
    if (open === undefined) return;
    this.reasoning = undefined;
    const { item, outputIndex } = open;
    const part = item.summary[0]!;
    this.emit({ type: 'response.reasoning_summary_text.done', item_id: item.id, output_index: outputIndex, summary_index: 0, text: part.text });
    this.emit({ type: 'response.reasoning_summary_part.done', item_id: item.id, output_index: outputIndex, summary_index: 0, part });
    item.status = status;
    this.emit({ type: 'response.output_item.done', output_index: outputIndex, item });
  }

  private textDelta(kind: OpenText['kind'], text: string): void {
    this.closeReasoning('completed');
    if (this.message === undefined) {
      const item: ResponsesMessageItem = { type: 'message', id: createResponsesId('msg'), status: 'in_progress', role: 'assistant', content: [] };
      this.message = { outputIndex: this.addItem(item), item };
    }
    const message = this.message;
    if (message.part?.kind !== kind) {
      this.closePart(message);
      const index = message.item.content.length;
      const part = (): ResponsesMessageItem['content'][number] =>
        kind === 'text' ? { type: 'output_text', text: '', annotations: [], logprobs: [] } : { type: 'refusal', refusal: '' };
      message.item.content.push(part());
      message.part = { kind, index, value: '' };
      this.emit({ type: 'response.content_part.added', item_id: message.item.id, output_index: message.outputIndex, content_index: index, part: part() });
    }
    const part = message.part;
    part.value += text;
    const base = { item_id: message.item.id, output_index: message.outputIndex, content_index: part.index };
    if (kind === 'text') this.emit({ type: 'response.output_text.delta', ...base, delta: text, logprobs: [] });
    else this.emit({ type: 'response.refusal.delta', ...base, delta: text });
  }

  private closePart(message: OpenMessage): void {
    const part = message.part;
    if (part === undefined) return;
    message.part = undefined;
    const base = { item_id: message.item.id, output_index: message.outputIndex, content_index: part.index };
    const content = message.item.content[part.index]!;
    if (content.type === 'output_text') {
      content.text = part.value;
      this.emit({ type: 'response.output_text.done', ...base, text: part.value, logprobs: [] });
    } else {
      content.refusal = part.value;
      this.emit({ type: 'response.refusal.done', ...base, refusal: part.value });
    }
    this.emit({ type: 'response.content_part.done', ...base, part: content });
  }

  private closeMessage(status: ItemStatus): void {
    const message = this.message;
    if (message === undefined) return;
    this.message = undefined;
    this.closePart(message);
    message.item.status = status;
    this.emit({ type: 'response.output_item.done', output_index: message.outputIndex, item: message.item });
  }

  /** A chat tool-call delta: a function call's arguments, or (custom) a custom tool call's free-text input. */
  private callDelta(index: number, custom: boolean, id: string | undefined, name: string | undefined, text: string | undefined): void {
    let call = this.calls.get(index);
    if (call === undefined) {
      this.closeReasoning('completed');
      this.closeMessage('completed');
      const base = { call_id: id ?? createResponsesId('fc'), name: '', status: 'in_progress' as const };
      const item: OpenCall['item'] = custom
        ? { type: 'custom_tool_call', id: createResponsesId('ctc'), ...base, input: '' }
        : { type: 'function_call', id: createResponsesId('fc'), ...base, arguments: '' };
      if (name) restoreNamespacedName(item, name, this.decoded.namespaced);
      call = { outputIndex: this.addItem(item), item };
      this.calls.set(index, call);
    } else if (name && call.item.name === '') {
      restoreNamespacedName(call.item, name, this.decoded.namespaced);
    }
    if (!text) return;
    const item = call.item;
    if (item.type === 'custom_tool_call') {
      item.input += text;
      this.emit({ type: 'response.custom_tool_call_input.delta', item_id: item.id, output_index: call.outputIndex, delta: text });
    } else {
      item.arguments += text;
      this.emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: call.outputIndex, delta: text });
    }
  }

  private closeCall(call: OpenCall): void {
    const { item, outputIndex } = call;
    if (item.type === 'custom_tool_call') this.emit({ type: 'response.custom_tool_call_input.done', item_id: item.id, output_index: outputIndex, input: item.input });
    else this.emit({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: outputIndex, name: item.name, arguments: item.arguments });
    item.status = 'completed';
    this.emit({ type: 'response.output_item.done', output_index: outputIndex, item });
  }
}
