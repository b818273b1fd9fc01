// A Responses event stream that went to a client as bytes, read back as canonical chat chunks: for the
// usage estimate of a stream that ended without usage, and the cache's stored copy. Runs only when one
// of those needs it, never per event on the way through.
import type { ChatChunk, ChatChunkDelta, ToolCallDelta } from '../../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { readSseJsonObjects } from '../read-sse-json-objects.ts';
import { mapResponsesStatusToFinish } from './convert-responses-to-chat.ts';

/** The chunks `texts` (whole Responses SSE events) amount to; events without content give none. */
export function parseResponsesSseChunks(texts: Iterable<string>): ChatChunk[] {
  const reader = new ResponsesChunkReader();
  for (const event of readSseJsonObjects(texts)) reader.read(event);
  return reader.chunks;
}

class ResponsesChunkReader {
  readonly chunks: ChatChunk[] = [];
  private id = 'resp';
  private model = '';
  private created = Math.floor(Date.now() / 1000);
  /** Tool-call index by the output index of its function_call item. */
  private readonly calls = new Map<number, number>();

  read(event: JsonObject): void {
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
        if (isJsonObject(event.response)) this.noteResponse(event.response);
        return;
      case 'response.output_text.delta':
        if (typeof event.delta === 'string') this.push({ content: event.delta });
        return;
      case 'response.refusal.delta':
        if (typeof event.delta === 'string') this.push({ refusal: event.delta });
        return;
      case 'response.reasoning_text.delta':
      case 'response.reasoning_summary_text.delta':
        if (typeof event.delta === 'string') this.push({ reasoning_content: event.delta });
        return;
      case 'response.output_item.added': {
        const item = event.item;
        if (!isJsonObject(item) || (item.type !== 'function_call' && item.type !== 'custom_tool_call') || typeof event.output_index !== 'number') return;
        const index = this.calls.size;
        this.calls.set(event.output_index, index);
        const name = typeof item.name === 'string' ? item.name : '';
        const call: ToolCallDelta =
          item.type === 'function_call' ? { index, type: 'function', function: { name, arguments: '' } } : { index, type: 'custom', custom: { name, input: '' } };
        if (typeof item.call_id === 'string') call.id = item.call_id;
        this.push({ tool_calls: [call] });
        return;
      }
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        const index = typeof event.output_index === 'number' ? this.calls.get(event.output_index) : undefined;
        if (index === undefined || typeof event.delta !== 'string') return;
        const custom = event.type === 'response.custom_tool_call_input.delta';
        this.push({ tool_calls: [custom ? { index, type: 'custom', custom: { input: event.delta } } : { index, function: { arguments: event.delta } }] });
        return;
      }
      case 'response.completed':
      case 'response.incomplete': {
        if (!isJsonObject(event.response)) return;
        this.noteResponse(event.response);
        this.chunks.push(this.chunk({}, mapResponsesStatusToFinish(event.response, this.calls.size > 0)));
        return;
      }
    }
  }

  private noteResponse(response: JsonObject): void {
    if (typeof response.id === 'string') this.id = response.id;
    if (typeof response.model === 'string') this.model = response.model;
    if (typeof response.created_at === 'number') this.created = response.created_at;
  }

  private push(delta: ChatChunkDelta): void {
    this.chunks.push(this.chunk(delta, null));
  }

  private chunk(delta: ChatChunkDelta, finish: ChatChunk['choices'][number]['finish_reason']): ChatChunk {
    // Chat streams name the role once, on the first chunk (the cache's assembler needs it).
    if (this.chunks.length === 0) delta.role = 'assistant';
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }
}
