// Encodes a canonical chat answer as a Responses `response` object: reasoning, message and function_call
// output items, status from the finish reason, usage in input/output tokens. Also its ids and usage,
// which the stream encoder shares.
import { randomBytes } from 'node:crypto';
import type { ChatResponse, FinishReason, Usage } from '../../protocol/chat-types.ts';
import { restoreNamespacedName } from './restore-namespaced-name.ts';
import type { ResponsesDecoded, ResponsesEcho, ResponsesOutputItem, ResponsesResponse, ResponsesUsage, ResponseStatus } from './responses-types.ts';

/** Ids in OpenAI's style (a type prefix and random hex); Herd keeps no state, so they name nothing retrievable. */
export function createResponsesId(prefix: 'resp' | 'msg' | 'fc' | 'ctc' | 'rs'): string {
  return `${prefix}_${randomBytes(prefix === 'resp' ? 24 : 16).toString('hex')}`;
}

export function convertUsageToResponses(usage: Usage): ResponsesUsage {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens, cache_write_tokens: usage.cacheWriteTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** A finish reason as a Responses status: cut at the token limit or by a filter is `incomplete`. */
export function mapFinishToStatus(finish: FinishReason | null): { status: ResponseStatus; incomplete: ResponsesResponse['incomplete_details'] } {
  if (finish === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

/** The `response` object around its output, in the state given (the stream's created event has none yet). */
export function createResponseObject(
  echo: ResponsesEcho,
  fields: { id: string; createdAt: number; model: string; status: ResponseStatus; output: ResponsesOutputItem[]; usage: ResponsesUsage | null },
): ResponsesResponse {
  const done = fields.status !== 'in_progress';
  return {
    id: fields.id,
    object: 'response',
    created_at: fields.createdAt,
    completed_at: done ? Math.floor(Date.now() / 1000) : null,
    status: fields.status,
    error: null,
    incomplete_details: null,
    model: fields.model,
    output: fields.output,
    previous_response_id: null,
    store: false,
    background: false,
    usage: fields.usage,
    ...echo,
  };
}

export function encodeResponsesResponse(response: ChatResponse, usage: Usage, decoded: ResponsesDecoded): ResponsesResponse {
  const choice = response.choices[0];
  const output: ResponsesOutputItem[] = [];
  const message = choice?.message;
  const { status, incomplete } = mapFinishToStatus(choice?.finish_reason ?? null);
  const itemStatus = status === 'completed' ? 'completed' : 'incomplete';
  if (message?.reasoning_content) {
    output.push({ type: 'reasoning', id: createResponsesId('rs'), summary: [{ type: 'summary_text', text: message.reasoning_content }], status: itemStatus });
  }
  if ((message?.content !== null && message?.content !== undefined && message.content.length > 0) || message?.refusal) {
    const content: Extract<ResponsesOutputItem, { type: 'message' }>['content'] = [];
    if (message.content) content.push({ type: 'output_text', text: message.content, annotations: [], logprobs: [] });
    if (message.refusal) content.push({ type: 'refusal', refusal: message.refusal });
    output.push({ type: 'message', id: createResponsesId('msg'), status: itemStatus, role: 'assistant', content });
  }
  for (const call of message?.tool_calls ?? []) {
    const item: ResponsesOutputItem =
      call.type === 'custom'
        ? { type: 'custom_tool_call', id: createResponsesId('ctc'), call_id: call.id, name: '', input: call.custom.input, status: 'completed' }
        : { type: 'function_call', id: createResponsesId('fc'), call_id: call.id, name: '', arguments: call.function.arguments, status: 'completed' };
    restoreNamespacedName(item, call.type === 'custom' ? call.custom.name : call.function.name, decoded.namespaced);
    output.push(item);
  }
  const object = createResponseObject(decoded.echo, {
    id: createResponsesId('resp'),
    createdAt: response.created,
    model: response.model,
    status,
    output,
    usage: convertUsageToResponses(usage),
  });
  object.incomplete_details = incomplete;
  return object;
}
