// Canonical ChatRequest -> Gemini generateContent request: roles user/model, systemInstruction,
// functionCall / functionResponse parts, and OpenAI sampling parameters as generationConfig.
import { asFunctionCall, asFunctionTool, functionChoiceName, refuseCustomTools } from '../refuse-custom-tools.ts';
import { HerdError } from '../../../core/errors.ts';
import type { AssistantMessage, ChatRequest, ToolChoice, UserMessage } from '../../protocol/chat-types.ts';
import { collectUnsupportedWarnings } from '../collect-unsupported-warnings.ts';
import { contentText } from '../content-text.ts';
import { parseDataUrl } from '../parse-data-url.ts';
import { parseToolArguments } from '../parse-tool-arguments.ts';
import type { ProviderWarning } from '../provider.ts';
import { splitSystemMessages, type IndexedMessage } from '../split-system-messages.ts';
import { convertGeminiThinking } from './convert-gemini-thinking.ts';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequest } from '../../wire/gemini/gemini-types.ts';

const UNSUPPORTED_PARAMS = [
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'user',
  'parallel_tool_calls',
  'store',
  'metadata',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
  'verbosity',
  'top_k',
  'cache_control',
] as const;

/**
 * Gemini 3 rejects a replayed functionCall without the thoughtSignature it was issued with, and OpenAI
 * clients cannot carry one. Google documents this sentinel for histories that lack real signatures.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';
const NEEDS_THOUGHT_SIGNATURE = /^(models\/)?gemini-3[.-]/;

export function convertGeminiRequest(request: ChatRequest, upstreamModel: string): { body: GeminiRequest; warnings: ProviderWarning[] } {
  if (request.response_format?.type === 'json_schema' && request.response_format.json_schema.schema === undefined) {
    throw new HerdError('INVALID_ARG', "Invalid 'response_format.json_schema.schema': Gemini needs the schema itself", { param: 'response_format.json_schema.schema' });
  }
  refuseCustomTools(request, 'Gemini');
  const warnings = collectUnsupportedWarnings(request, UNSUPPORTED_PARAMS, 'Gemini');
  const { system, conversation } = splitSystemMessages(request.messages, 'Gemini', { later: 'user' });
  const body: GeminiRequest = {
    contents: convertContents(conversation, NEEDS_THOUGHT_SIGNATURE.test(upstreamModel), warnings),
  };
  const systemText = system.filter((text) => text !== '');
  if (systemText.length > 0) body.systemInstruction = { parts: systemText.map((text) => ({ text })) };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((chatTool, i) => {
          const tool = asFunctionTool(chatTool, `tools[${i}]`, 'Gemini');
          if (tool.function.strict !== undefined) {
            warnings.push({ param: `tools[${i}].function.strict`, message: 'Gemini does not support strict tool schemas; it was not sent' });
          }
          return {
            name: tool.function.name,
            ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
            // parametersJsonSchema takes plain JSON Schema; `parameters` would need Google's OpenAPI subset.
            ...(tool.function.parameters !== undefined ? { parametersJsonSchema: tool.function.parameters } : {}),
          };
        }),
      },
    ];
    if (request.tool_choice !== undefined) body.toolConfig = { functionCallingConfig: convertToolChoice(request.tool_choice) };
  }
  const config = convertGenerationConfig(request);
  const thinking = convertGeminiThinking(request, upstreamModel, warnings);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return { body, warnings };
}

function convertToolChoice(choice: ToolChoice): { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'required') return { mode: 'ANY' };
  if (choice === 'none') return { mode: 'NONE' };
  return { mode: 'ANY', allowedFunctionNames: [functionChoiceName(choice, 'Gemini')] };
}

function convertGenerationConfig(request: ChatRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.top_p !== undefined) config.topP = request.top_p;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (request.stop !== undefined) config.stopSequences = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if (request.n !== undefined) config.candidateCount = request.n;
  if (request.presence_penalty !== undefined) config.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty !== undefined) config.frequencyPenalty = request.frequency_penalty;
  if (request.seed !== undefined) config.seed = request.seed;
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = format.json_schema.schema;
  }
  return config;
}

function convertContents(conversation: IndexedMessage[], signToolCalls: boolean, warnings: ProviderWarning[]): GeminiContent[] {
  const contents: GeminiContent[] = [];
  // functionResponse needs the function's name; OpenAI tool messages only carry the call id.
  const toolNames = new Map<string, string>();
  const append = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    const last = contents.at(-1);
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const { message, index } of conversation) {
    if ('name' in message && message.name !== undefined) {
      warnings.push({ param: `messages[${index}].name`, message: 'Gemini does not support message names; it was not sent' });
    }
    if (message.role === 'assistant' && message.reasoning_content !== undefined) {
      warnings.push({ param: `messages[${index}].reasoning_content`, message: 'Gemini cannot take replayed reasoning; it was not sent' });
    }
    switch (message.role) {
      case 'user':
        append('user', userParts(message, index));
        break;
      case 'assistant': {
        for (const [j, call] of (message.tool_calls ?? []).entries()) {
          toolNames.set(call.id, asFunctionCall(call, `messages[${index}].tool_calls[${j}]`, 'Gemini').function.name);
        }
        const parts = modelParts(message, index);
        const firstCall = signToolCalls ? parts.find((part) => part.functionCall !== undefined) : undefined;
        if (firstCall !== undefined) {
          firstCall.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
          warnings.push({
            param: `messages[${index}].tool_calls`,
            message: "replayed without its Gemini thought signature (OpenAI messages cannot carry one); sent with Google's skip_thought_signature_validator",
          });
        }
        append('model', parts);
        break;
      }
      case 'tool': {
        // The validator guarantees the id answers an earlier assistant tool call.
        const name = toolNames.get(message.tool_call_id) ?? message.tool_call_id;
        append('user', [{ functionResponse: { name, response: { name, content: contentText(message.content) } } }]);
        break;
      }
    }
  }
  return contents;
}

function userParts(message: UserMessage, index: number): GeminiPart[] {
  if (typeof message.content === 'string') return [{ text: message.content }];
  return message.content.map((part, j): GeminiPart => {
    if (part.type === 'text') return { text: part.text };
    const param = `messages[${index}].content[${j}].image_url.url`;
    const inline = parseDataUrl(part.image_url.url, param);
    if (inline === undefined) {
      throw new HerdError('UNSUPPORTED', 'Gemini takes images inline only; send the image as a data: URL', { param });
    }
    return { inlineData: { mimeType: inline.mediaType, data: inline.base64 } };
  });
}

function modelParts(message: AssistantMessage, index: number): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const text = typeof message.content === 'string' ? message.content : (message.content ?? []).map((part) => (part.type === 'text' ? part.text : part.refusal)).join('');
  if (text !== '') parts.push({ text });
  (message.tool_calls ?? []).forEach((toolCall, j) => {
    const call = asFunctionCall(toolCall, `messages[${index}].tool_calls[${j}]`, 'Gemini');
    const args = parseToolArguments(call.function.arguments, `messages[${index}].tool_calls[${j}].function.arguments`);
    parts.push({ functionCall: { name: call.function.name, args } });
  });
  return parts;
}
