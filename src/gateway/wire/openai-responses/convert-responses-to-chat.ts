// A Responses `response` object (an upstream's own answer on pass-through) read back as the canonical
// chat answer the ledger, the cache and clients of other dialects use: the reverse of
// encode-responses-response.ts. Items Herd does not model (hosted tool calls) carry no chat content.
import type { ChatResponse, ChatResponseMessage, FinishReason, ToolCall, Usage } from '../../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';

/** Normalised usage from a Responses `usage` object; undefined when it has no token counts. */
export function convertResponsesUsage(raw: unknown): Usage | undefined {
  if (!isJsonObject(raw) || typeof raw.input_tokens !== 'number' || typeof raw.output_tokens !== 'number') return undefined;
  const input = isJsonObject(raw.input_tokens_details) ? raw.input_tokens_details : {};
  const output = isJsonObject(raw.output_tokens_details) ? raw.output_tokens_details : {};
  const usage: Usage = {
    promptTokens: raw.input_tokens,
    cachedPromptTokens: numberOr(input.cached_tokens, 0),
    cacheWriteTokens: 0,
    completionTokens: raw.output_tokens,
    reasoningTokens: numberOr(output.reasoning_tokens, 0),
    estimated: false,
    raw,
  };
  if (typeof output.reasoning_tokens === 'number') usage.reportedReasoningTokens = output.reasoning_tokens;
  return usage;
}

/**
 * The finish reason a Responses status means: incomplete at the token limit or by a filter, tool calls
 * when the output asks for them, else stop. The upstream's status is the raw reason.
 */
export function mapResponsesStatusToFinish(response: JsonObject, hasToolCalls: boolean): FinishReason {
  if (response.status === 'incomplete') {
    const reason = isJsonObject(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** The chat message a response's output items amount to. */
export function convertResponsesOutput(output: unknown): ChatResponseMessage {
  const message: ChatResponseMessage = { role: 'assistant', content: null };
  let text: string | undefined;
  let refusal: string | undefined;
  let reasoning: string | undefined;
  const calls: ToolCall[] = [];
  for (const item of Array.isArray(output) ? output : []) {
    if (!isJsonObject(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isJsonObject(part)) continue;
        if (part.type === 'output_text' && typeof part.text === 'string') text = (text ?? '') + part.text;
        else if (part.type === 'refusal' && typeof part.refusal === 'string') refusal = (refusal ?? '') + part.refusal;
      }
    } else if (item.type === 'reasoning') {
      const parts = Array.isArray(item.content) && item.content.length > 0 ? item.content : Array.isArray(item.summary) ? item.summary : [];
      for (const part of parts) {
        if (isJsonObject(part) && typeof part.text === 'string') reasoning = reasoning === undefined ? part.text : `${reasoning}\n${part.text}`;
      }
    } else if (item.type === 'function_call' && typeof item.call_id === 'string' && typeof item.name === 'string') {
      calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' } });
    } else if (item.type === 'custom_tool_call' && typeof item.call_id === 'string' && typeof item.name === 'string') {
      calls.push({ id: item.call_id, type: 'custom', custom: { name: item.name, input: typeof item.input === 'string' ? item.input : '' } });
    }
  }
  if (text !== undefined) message.content = text;
  if (refusal !== undefined) message.refusal = refusal;
  if (reasoning !== undefined) message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** `body` (a `response` object) as a chat.completion; undefined when it is not one. */
export function convertResponsesToChat(body: unknown): { response: ChatResponse; usage: Usage | undefined; rawStatus: string | null } | undefined {
  if (!isJsonObject(body) || body.object !== 'response' || !Array.isArray(body.output)) return undefined;
  const message = convertResponsesOutput(body.output);
  const response: ChatResponse = {
    id: typeof body.id === 'string' ? body.id : 'resp',
    object: 'chat.completion',
    created: typeof body.created_at === 'number' ? body.created_at : Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : '',
    choices: [{ index: 0, message, finish_reason: mapResponsesStatusToFinish(body, message.tool_calls !== undefined) }],
  };
  return { response, usage: convertResponsesUsage(body.usage), rawStatus: typeof body.status === 'string' ? body.status : null };
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
