// A canonical ChatResponse (and the usage billing saw) -> an Anthropic Message: thinking first, then
// text, then tool_use blocks, as Anthropic orders them; tool arguments parsed back into input objects.
import type { ChatResponse, Usage } from '../../protocol/chat-types.ts';
import { convertUsageToMessages } from './convert-usage-to-messages.ts';
import { mapStopReason } from './map-stop-reason.ts';
import type { MessagesResponse, MessagesResponseBlock } from './messages-types.ts';

export interface EncodeResponseContext {
  /** The normalised usage (the body's OpenAI usage has lost cache writes). */
  usage: Usage;
  rawFinishReason: string | null;
}

export function encodeMessagesResponse(response: ChatResponse, context: EncodeResponseContext): MessagesResponse {
  const choice = response.choices[0];
  const content: MessagesResponseBlock[] = [];
  const message = choice?.message;
  if (message?.reasoning_content) content.push({ type: 'thinking', thinking: message.reasoning_content, signature: message.reasoning_signature ?? '' });
  if (message?.content) content.push({ type: 'text', text: message.content });
  for (const call of message?.tool_calls ?? []) {
    // Messages clients send function tools only, so an answer has no custom calls to carry.
    if (call.type === 'function') content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseToolInput(call.function.arguments) });
  }
  return {
    id: toMessageId(response.id),
    type: 'message',
    role: 'assistant',
    model: response.model,
    content,
    stop_reason: mapStopReason(choice?.finish_reason ?? null, context.rawFinishReason),
    stop_sequence: null,
    usage: convertUsageToMessages(context.usage),
  };
}

/** Anthropic's input is an object; arguments that are not a JSON object (a model's slip) are kept as a string field. */
export function parseToolInput(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { value };
  } catch {
    return { arguments: args };
  }
}

/** Anthropic ids start msg_; an OpenAI-side id (chatcmpl-…) is prefixed, not replaced, so logs still match. */
export function toMessageId(id: string): string {
  return id.startsWith('msg_') ? id : `msg_${id}`;
}
