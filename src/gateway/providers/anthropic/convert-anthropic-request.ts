// Canonical ChatRequest -> Anthropic Messages request: system lifted out, tool messages as tool_result
// blocks, same-role turns merged (roles must alternate), tools and tool_choice translated.
import { asFunctionCall, asFunctionTool, functionChoiceName, refuseCustomTools } from '../refuse-custom-tools.ts';
import { HerdError } from '../../../core/errors.ts';
import type { AssistantMessage, ChatRequest, ToolChoice, UserMessage } from '../../protocol/chat-types.ts';
import { collectUnsupportedWarnings } from '../collect-unsupported-warnings.ts';
import { contentText } from '../content-text.ts';
import { parseDataUrl } from '../parse-data-url.ts';
import { parseToolArguments } from '../parse-tool-arguments.ts';
import type { ProviderWarning } from '../provider.ts';
import { splitSystemMessages, type IndexedMessage } from '../split-system-messages.ts';
import { convertAnthropicReasoning } from './convert-anthropic-reasoning.ts';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicRequest, AnthropicToolChoice } from '../../wire/anthropic-messages/anthropic-types.ts';

/** The client's anthropic-version and anthropic-beta headers, which replace Herd's own version on the upstream call. */
export function convertAnthropicClientHeaders(request: ChatRequest): Record<string, string> | undefined {
  const client = request.anthropic_headers;
  if (client === undefined) return undefined;
  const headers: Record<string, string> = {};
  if (client.version !== undefined) headers['anthropic-version'] = client.version;
  if (client.beta !== undefined) headers['anthropic-beta'] = client.beta;
  return headers;
}

export interface AnthropicConversionOptions {
  defaultMaxTokens: number;
  stream: boolean;
}

const UNSUPPORTED_PARAMS = [
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'store',
  'metadata',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
  'verbosity',
] as const;

export function convertAnthropicRequest(request: ChatRequest, upstreamModel: string, options: AnthropicConversionOptions): { body: AnthropicRequest; warnings: ProviderWarning[] } {
  if (request.n !== undefined && request.n > 1) {
    throw new HerdError('UNSUPPORTED', 'Anthropic returns one choice per request; n must be 1', { param: 'n' });
  }
  if (request.temperature !== undefined && request.temperature > 1) {
    throw new HerdError('INVALID_ARG', `Invalid 'temperature': Anthropic accepts 0 to 1, got ${request.temperature}`, { param: 'temperature' });
  }
  if (request.response_format?.type === 'json_schema') {
    throw new HerdError('UNSUPPORTED', 'Anthropic has no json_schema response format', { param: 'response_format' });
  }
  refuseCustomTools(request, 'Anthropic');
  const warnings = collectUnsupportedWarnings(request, UNSUPPORTED_PARAMS, 'Anthropic');
  if (request.response_format?.type === 'json_object') {
    warnings.push({ param: 'response_format', message: 'Anthropic has no JSON mode; the prompt alone asks for JSON' });
  }

  const { system, conversation } = splitSystemMessages(request.messages, 'Anthropic');
  const clientMaxTokens = request.max_completion_tokens ?? request.max_tokens;
  const body: AnthropicRequest = {
    model: upstreamModel,
    max_tokens: clientMaxTokens ?? options.defaultMaxTokens,
    messages: convertMessages(conversation, warnings),
  };
  const systemText = system.filter((text) => text !== '');
  if (systemText.length > 0) body.system = systemText.map((text) => ({ type: 'text', text }));
  if (request.stop !== undefined) body.stop_sequences = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (request.top_k !== undefined) body.top_k = request.top_k;
  if (request.cache_control !== undefined) body.cache_control = request.cache_control;
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((chatTool, i) => {
      const tool = asFunctionTool(chatTool, `tools[${i}]`, 'Anthropic');
      if (tool.function.strict !== undefined) {
        warnings.push({ param: `tools[${i}].function.strict`, message: 'Anthropic does not support strict tool schemas; it was not sent' });
      }
      return {
        name: tool.function.name,
        ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
        input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
      };
    });
    const choice = convertToolChoice(request.tool_choice, request.parallel_tool_calls);
    if (choice !== undefined) body.tool_choice = choice;
  }
  convertAnthropicReasoning(request, body, { upstreamModel, clientMaxTokens, defaultMaxTokens: options.defaultMaxTokens }, warnings);
  if (options.stream) body.stream = true;
  return { body, warnings };
}

function convertToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): AnthropicToolChoice | undefined {
  let result: AnthropicToolChoice | undefined;
  if (choice === 'auto') result = { type: 'auto' };
  else if (choice === 'required') result = { type: 'any' };
  else if (choice === 'none') result = { type: 'none' };
  else if (choice !== undefined) result = { type: 'tool', name: functionChoiceName(choice, 'Anthropic') };
  if (parallel === false && choice !== 'none') result = { ...(result ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return result;
}

function convertMessages(conversation: IndexedMessage[], warnings: ProviderWarning[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const append = (role: AnthropicMessage['role'], blocks: AnthropicContentBlock[]) => {
    const last = out.at(-1);
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const { message, index } of conversation) {
    if ('name' in message && message.name !== undefined) {
      warnings.push({ param: `messages[${index}].name`, message: 'Anthropic does not support message names; it was not sent' });
    }
    if (message.role === 'assistant' && message.reasoning_content !== undefined && !hasSignature(message)) {
      warnings.push({ param: `messages[${index}].reasoning_content`, message: 'Anthropic cannot take replayed reasoning; it was not sent' });
    }
    switch (message.role) {
      case 'user':
        append('user', userBlocks(message, index));
        break;
      case 'assistant':
        append('assistant', assistantBlocks(message, index));
        break;
      case 'tool': {
        const text = contentText(message.content);
        append('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: text === '' ? [] : text }]);
        break;
      }
    }
  }
  return out;
}

function userBlocks(message: UserMessage, index: number): AnthropicContentBlock[] {
  if (typeof message.content === 'string') return textBlocks(message.content);
  return message.content.flatMap((part, j): AnthropicContentBlock[] => {
    if (part.type === 'text') return textBlocks(part.text);
    const url = part.image_url.url;
    const inline = parseDataUrl(url, `messages[${index}].content[${j}].image_url.url`);
    return [
      {
        type: 'image',
        source: inline ? { type: 'base64', media_type: inline.mediaType, data: inline.base64 } : { type: 'url', url },
      },
    ];
  });
}

function assistantBlocks(message: AssistantMessage, index: number): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  // Thinking comes first in an assistant turn, as Anthropic answered it.
  if (message.reasoning_content !== undefined && hasSignature(message)) {
    blocks.push({ type: 'thinking', thinking: message.reasoning_content, signature: message.reasoning_signature });
  }
  if (typeof message.content === 'string') blocks.push(...textBlocks(message.content));
  else if (message.content !== null) {
    for (const part of message.content) blocks.push(...textBlocks(part.type === 'text' ? part.text : part.refusal));
  }
  (message.tool_calls ?? []).forEach((toolCall, j) => {
    const call = asFunctionCall(toolCall, `messages[${index}].tool_calls[${j}]`, 'Anthropic');
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseToolArguments(call.function.arguments, `messages[${index}].tool_calls[${j}].function.arguments`),
    });
  });
  return blocks;
}

/** An empty signature is what a Messages client replays for thinking that came from another vendor: Anthropic would refuse it. */
function hasSignature(message: AssistantMessage): message is AssistantMessage & { reasoning_signature: string } {
  return message.reasoning_signature !== undefined && message.reasoning_signature !== '';
}

/** Anthropic rejects empty text blocks, which OpenAI histories often contain (content: ""). */
function textBlocks(text: string): AnthropicContentBlock[] {
  return text === '' ? [] : [{ type: 'text', text }];
}
