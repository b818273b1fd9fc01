// The canonical request is already OpenAI's shape: pass it through with the upstream's model id, and
// force stream_options.include_usage on streams so Herd learns the real token counts.
import type { AssistantMessage, ChatMessage, ChatRequest } from '../../protocol/chat-types.ts';
import { convertOpenAIReasoning } from './convert-openai-reasoning.ts';

export type OpenAIWireRequest = Omit<ChatRequest, 'stream' | 'stream_options' | 'top_k' | 'thinking' | 'anthropic_headers' | 'cache_control' | 'unmodeled'> & {
  stream: boolean;
  stream_options?: { include_usage: true; include_obfuscation?: boolean };
};

export function convertOpenAIRequest(request: ChatRequest, upstreamModel: string, stream: boolean): OpenAIWireRequest {
  // top_k, cache_control and the Anthropic headers come from the Anthropic Messages ingress and mean nothing to
  // OpenAI's API, which refuses unknown parameters: they are not sent. thinking becomes reasoning_effort.
  const {
    stream: _clientStream,
    stream_options: clientOptions,
    model: _clientModel,
    top_k: _topK,
    thinking: _thinking,
    anthropic_headers: _headers,
    cache_control: _cache,
    unmodeled: _unmodeled,
    ...rest
  } = request;
  // Fields before the spread (see chat-service.ts).
  const body: OpenAIWireRequest = { model: upstreamModel, stream, ...rest };
  const reasoning = convertOpenAIReasoning(request);
  if (reasoning !== undefined) {
    if (reasoning.effort === undefined) delete body.reasoning_effort;
    else body.reasoning_effort = reasoning.effort;
  }
  // The client's own include_usage choice is honoured by the HTTP layer, not by the upstream.
  if (stream) body.stream_options = Object.assign({}, clientOptions, { include_usage: true as const });
  // An Anthropic thinking signature is Anthropic's alone; the reasoning text itself is kept (DeepSeek replays it).
  if (request.messages.some(hasSignature)) body.messages = request.messages.map((m) => (hasSignature(m) ? withoutSignature(m) : m));
  return body;
}

const hasSignature = (message: ChatMessage): message is AssistantMessage => message.role === 'assistant' && message.reasoning_signature !== undefined;

function withoutSignature(message: AssistantMessage): AssistantMessage {
  const { reasoning_signature: _signature, ...rest } = message;
  return rest;
}
