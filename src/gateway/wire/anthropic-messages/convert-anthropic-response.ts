// Anthropic Messages response -> OpenAI chat.completion: text blocks joined into content, tool_use
// blocks into tool_calls (input re-serialised as the arguments string), thinking into reasoning_content.
import type { ChatResponse, ChatResponseMessage, ToolCall } from '../../protocol/chat-types.ts';
import { convertUsageToOpenAI } from '../openai-chat/convert-usage-to-openai.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { nowSeconds } from '../create-ids.ts';
import type { AnthropicResponse } from './anthropic-types.ts';
import { convertAnthropicUsage } from './convert-anthropic-usage.ts';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts';

/** Whether a parsed body has the shape of a Messages response (checked before converting). */
export function isAnthropicResponse(body: unknown): body is AnthropicResponse {
  return isJsonObject(body) && body.type === 'message' && Array.isArray(body.content) && body.content.every(isJsonObject) && isJsonObject(body.usage);
}

export function convertAnthropicResponse(message: AnthropicResponse): ChatResponse {
  let text = '';
  let reasoning = '';
  let signature: string | undefined;
  const toolCalls: ToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning += block.thinking;
      if (typeof block.signature === 'string') signature = block.signature;
    } else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
    // redacted_thinking and server-tool blocks have no OpenAI equivalent.
  }
  const result: ChatResponseMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) result.tool_calls = toolCalls;
  if (reasoning !== '') result.reasoning_content = reasoning;
  if (reasoning !== '' && signature !== undefined) result.reasoning_signature = signature;
  return {
    id: message.id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: message.model,
    choices: [{ index: 0, message: result, finish_reason: mapAnthropicStopReason(message.stop_reason), logprobs: null }],
    usage: convertUsageToOpenAI(convertAnthropicUsage(message.usage)),
  };
}
