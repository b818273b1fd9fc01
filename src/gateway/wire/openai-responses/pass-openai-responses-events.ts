// Byte pass-through of an OpenAI Responses event stream to a Responses client: the upstream's events go
// on as sent while this reads, from their names, what the ledger and the relay need — the usage and
// status of response.completed / response.incomplete (the only events parsed), failures, the end.
import type { FinishReason, Usage } from '../../protocol/chat-types.ts';
import type { JsonObject } from '../../protocol/check-json-value.ts';
import { convertResponsesUsage, mapResponsesStatusToFinish } from './convert-responses-to-chat.ts';
import { parseJsonObject, readStringField } from '../read-sse-event-text.ts';
import type { SseBlock } from '../split-sse-events.ts';

/** How one event is passed on. */
export type ResponsesPassDecision =
  | { kind: 'forward' }
  /** response.completed or response.incomplete: forwarded, and the stream is over. */
  | { kind: 'final' }
  /** response.failed or an `error` event: an OpenAI-shaped error body for the provider to throw. */
  | { kind: 'error'; body: JsonObject }
  | { kind: 'malformed'; detail: string };

/** Events that open or describe the response without content: they do not make the stream open. */
const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.queued']);

export class OpenAIResponsesPassThrough {
  /** Content events forwarded (the relay's chunk count: the first one opens the stream). */
  chunks = 0;
  usage: Usage | undefined;
  finishReason: FinishReason | null = null;
  /** The upstream's terminal status (completed, incomplete). */
  rawStatus: string | null = null;
  /** The `model` of the upstream's response (from response.created), for renaming. */
  model: string | undefined;
  /** Every forwarded event's text, kept (not copied) for an estimate when no usage comes. */
  readonly texts: string[] = [];

  read(block: SseBlock): ResponsesPassDecision {
    const data = block.data;
    if (data === undefined) return { kind: 'forward' };
    // OpenAI names every event; a server that does not is read from the data's `type`.
    let parsed: JsonObject | undefined;
    let type = block.event;
    if (type === undefined) {
      parsed = parseJsonObject(data);
      if (parsed === undefined) return { kind: 'malformed', detail: 'Responses SSE event is not a JSON object' };
      type = typeof parsed.type === 'string' ? parsed.type : '';
    }
    this.texts.push(block.text);
    if (LIFECYCLE.has(type)) {
      if (this.model === undefined) this.model = readStringField(data, 'model');
      return { kind: 'forward' };
    }
    switch (type) {
      case 'response.completed':
      case 'response.incomplete': {
        const event = parsed ?? parseJsonObject(data);
        const response = event?.response;
        if (response === null || typeof response !== 'object' || Array.isArray(response)) {
          return { kind: 'malformed', detail: `${type} carries no response object` };
        }
        const body = response as JsonObject;
        this.usage = convertResponsesUsage(body.usage);
        this.rawStatus = typeof body.status === 'string' ? body.status : type.slice('response.'.length);
        this.finishReason = mapResponsesStatusToFinish(body, hasToolCall(body.output));
        if (this.model === undefined && typeof body.model === 'string') this.model = body.model;
        return { kind: 'final' };
      }
      case 'response.failed': {
        const event = parsed ?? parseJsonObject(data);
        const response = event?.response;
        const error = response !== null && typeof response === 'object' && !Array.isArray(response) ? (response as JsonObject).error : undefined;
        return { kind: 'error', body: { error: error ?? { message: 'the response failed' } } };
      }
      case 'error': {
        const event = parsed ?? parseJsonObject(data) ?? {};
        return { kind: 'error', body: { error: { message: event.message, code: event.code, param: event.param } } };
      }
      default:
        this.chunks++;
        return { kind: 'forward' };
    }
  }
}

function hasToolCall(output: unknown): boolean {
  return (
    Array.isArray(output) &&
    output.some((item) => item !== null && typeof item === 'object' && ((item as JsonObject).type === 'function_call' || (item as JsonObject).type === 'custom_tool_call'))
  );
}
