// Decodes an untrusted POST /v1/responses body into the canonical ChatRequest plus the fields the
// `response` object echoes. Errors name the Responses param (`input[2].content[0].image_url`); what the
// chat shape cannot carry, or what needs server-side state, is refused with a clear 400.
import { HerdError } from '../../../core/errors.ts';
import type {
  AssistantMessage,
  ChatMessage,
  ChatRequest,
  ChatTool,
  CustomToolFormat,
  ImageUrlPart,
  RefusalPart,
  ResponseFormat,
  TextPart,
  ToolCall,
  ToolChoice,
  UserContentPart,
} from '../../chat-types.ts';
import {
  expectArray,
  expectBoolean,
  expectInteger,
  expectNumber,
  expectObject,
  expectOneOf,
  expectString,
  invalidParam,
  isJsonObject,
  rejectUnknownKeys,
  type JsonObject,
} from '../../check-json-value.ts';
import type { ResponsesCustomTool, ResponsesEcho, ResponsesTextFormat, ResponsesTool, ResponsesToolChoice } from './responses-types.ts';

export interface DecodedResponsesRequest {
  request: ChatRequest;
  decoded: ResponsesEcho;
}

const KNOWN_KEYS = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'temperature',
  'top_p',
  'store',
  'stream',
  'stream_options',
  'metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'service_tier',
  'reasoning',
  'text',
  'include',
  'truncation',
  // Refused below with a reason, rather than as unknown.
  'previous_response_id',
  'conversation',
  'background',
  'prompt',
  'top_logprobs',
  'max_tool_calls',
]);

/** Parameters that need state Herd does not keep, or features the chat shape cannot express. */
const REFUSED: Readonly<Record<string, string>> = {
  previous_response_id:
    "Herd keeps no server-side response state, so 'previous_response_id' cannot be resolved: send the whole conversation in 'input' (with store: false, as stateless clients do).",
  conversation: "Herd keeps no server-side conversations: send the whole conversation in 'input'.",
  background: 'Herd does not run responses in the background: leave background unset or false.',
  prompt: "Herd does not store prompt templates: send the prompt in 'instructions' and 'input'.",
  top_logprobs: "Herd's Responses bridge does not return logprobs.",
  max_tool_calls: "Herd's Responses bridge has no built-in tools for 'max_tool_calls' to limit.",
};

export function decodeResponsesRequest(body: unknown): DecodedResponsesRequest {
  if (!isJsonObject(body)) throw invalidParam('body', 'expected a JSON object');
  rejectUnknownKeys(body, KNOWN_KEYS, '');
  const has = (key: string) => body[key] !== undefined && body[key] !== null;
  for (const [key, reason] of Object.entries(REFUSED)) {
    if (has(key) && !(key === 'background' && body[key] === false)) throw new HerdError('UNSUPPORTED', reason, { param: key });
  }

  const model = expectString(body.model, 'model', { nonEmpty: true });
  const instructions = has('instructions') ? expectString(body.instructions, 'instructions') : null;
  if (!has('input')) throw invalidParam('input', 'expected a string or an array of input items');
  const messages = decodeInput(body.input);
  if (instructions !== null && instructions.length > 0) messages.unshift({ role: 'system', content: instructions });
  const request: ChatRequest = { model, messages };
  const echo: ResponsesEcho = {
    instructions,
    max_output_tokens: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: null,
    top_p: null,
    tool_choice: 'auto',
    tools: [],
    text: { format: { type: 'text' } },
    reasoning: { effort: null, summary: null },
    truncation: 'disabled',
  };

  if (has('temperature')) request.temperature = echo.temperature = expectNumber(body.temperature, 'temperature', { min: 0, max: 2 });
  if (has('top_p')) request.top_p = echo.top_p = expectNumber(body.top_p, 'top_p', { min: 0, max: 1 });
  if (has('max_output_tokens')) request.max_completion_tokens = echo.max_output_tokens = expectInteger(body.max_output_tokens, 'max_output_tokens', { min: 1 });
  // Accepted either way, and nothing is stored: the answer says store: false.
  if (has('store')) expectBoolean(body.store, 'store');
  if (has('stream')) request.stream = expectBoolean(body.stream, 'stream');
  if (has('stream_options')) {
    if (request.stream !== true) throw invalidParam('stream_options', 'is only allowed when stream is true');
    const options = expectObject(body.stream_options, 'stream_options');
    rejectUnknownKeys(options, new Set(['include_obfuscation']), 'stream_options');
    if (options.include_obfuscation != null) expectBoolean(options.include_obfuscation, 'stream_options.include_obfuscation');
  }
  if (has('metadata')) echo.metadata = decodeMetadata(body.metadata);
  if (has('user')) request.user = echo.user = expectString(body.user, 'user');
  if (has('safety_identifier')) request.safety_identifier = echo.safety_identifier = expectString(body.safety_identifier, 'safety_identifier');
  if (has('prompt_cache_key')) request.prompt_cache_key = echo.prompt_cache_key = expectString(body.prompt_cache_key, 'prompt_cache_key');
  if (has('service_tier')) request.service_tier = echo.service_tier = expectString(body.service_tier, 'service_tier', { nonEmpty: true });
  if (has('reasoning')) {
    const reasoning = expectObject(body.reasoning, 'reasoning');
    rejectUnknownKeys(reasoning, new Set(['effort', 'summary', 'generate_summary']), 'reasoning');
    if (reasoning.effort != null) request.reasoning_effort = echo.reasoning.effort = expectString(reasoning.effort, 'reasoning.effort', { nonEmpty: true });
    if (reasoning.summary != null) echo.reasoning.summary = expectString(reasoning.summary, 'reasoning.summary');
  }
  if (has('text')) decodeText(body.text, request, echo);
  // Includable extras (encrypted reasoning, logprobs, tool sources) are for state Herd does not have: none are added.
  if (has('include')) {
    for (const [i, item] of expectArray(body.include, 'include').entries()) expectString(item, `include[${i}]`);
  }
  if (has('truncation')) echo.truncation = expectOneOf(body.truncation, 'truncation', ['auto', 'disabled'] as const);

  if (has('tools')) {
    echo.tools = decodeTools(body.tools);
    if (echo.tools.length > 0) request.tools = echo.tools.map(toChatTool);
  }
  if (has('tool_choice')) {
    echo.tool_choice = decodeToolChoice(body.tool_choice, echo.tools);
    if (request.tools !== undefined) request.tool_choice = toChatToolChoice(echo.tool_choice);
  }
  if (has('parallel_tool_calls')) {
    echo.parallel_tool_calls = expectBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
    if (request.tools !== undefined) request.parallel_tool_calls = echo.parallel_tool_calls;
  }
  return { request, decoded: echo };
}

// --- input -------------------------------------------------------------------------------------

const MESSAGE_KEYS = new Set(['type', 'role', 'content', 'id', 'status', 'phase']);
const FUNCTION_CALL_KEYS = new Set(['type', 'id', 'call_id', 'name', 'arguments', 'status']);
const FUNCTION_OUTPUT_KEYS = new Set(['type', 'id', 'call_id', 'output', 'status']);
const CUSTOM_CALL_KEYS = new Set(['type', 'id', 'call_id', 'name', 'input', 'status']);
const REASONING_KEYS = new Set(['type', 'id', 'summary', 'content', 'encrypted_content', 'status']);

function decodeInput(value: unknown): ChatMessage[] {
  if (typeof value === 'string') return [{ role: 'user', content: value }];
  const items = expectArray(value, 'input');
  if (items.length === 0) throw invalidParam('input', 'expected at least one input item');
  const messages: ChatMessage[] = [];
  const callIds = new Set<string>();
  // Reasoning replayed by the client rides on the next assistant turn (DeepSeek wants it within a tool loop).
  let reasoning: string | undefined;
  // Consecutive function_call items are one assistant turn with several tool calls, as in chat.
  let lastAssistant: AssistantMessage | undefined;
  for (let i = 0; i < items.length; i++) {
    const at = `input[${i}]`;
    const item = expectObject(items[i], at);
    const type = item.type ?? 'message';
    if (type === 'message') {
      rejectUnknownKeys(item, MESSAGE_KEYS, at);
      const message = decodeMessage(item, at);
      if (message.role === 'assistant' && reasoning !== undefined) {
        message.reasoning_content = reasoning;
        reasoning = undefined;
      }
      messages.push(message);
      lastAssistant = message.role === 'assistant' ? message : undefined;
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      rejectUnknownKeys(item, type === 'function_call' ? FUNCTION_CALL_KEYS : CUSTOM_CALL_KEYS, at);
      const id = expectString(item.call_id, `${at}.call_id`, { nonEmpty: true });
      const name = expectString(item.name, `${at}.name`, { nonEmpty: true });
      const call: ToolCall =
        type === 'function_call'
          ? { id, type: 'function', function: { name, arguments: expectString(item.arguments, `${at}.arguments`) } }
          : { id, type: 'custom', custom: { name, input: expectString(item.input, `${at}.input`) } };
      callIds.add(call.id);
      if (lastAssistant === undefined) {
        lastAssistant = { role: 'assistant', content: null, tool_calls: [] };
        if (reasoning !== undefined) {
          lastAssistant.reasoning_content = reasoning;
          reasoning = undefined;
        }
        messages.push(lastAssistant);
      }
      (lastAssistant.tool_calls ??= []).push(call);
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      rejectUnknownKeys(item, FUNCTION_OUTPUT_KEYS, at);
      const callId = expectString(item.call_id, `${at}.call_id`, { nonEmpty: true });
      if (!callIds.has(callId)) throw invalidParam(`${at}.call_id`, `'${callId}' does not answer any function_call earlier in the input`);
      messages.push({ role: 'tool', tool_call_id: callId, content: decodeFunctionOutput(item.output, `${at}.output`) });
      lastAssistant = undefined;
    } else if (type === 'reasoning') {
      rejectUnknownKeys(item, REASONING_KEYS, at);
      const text = decodeReasoningText(item, at);
      if (text.length > 0) reasoning = reasoning === undefined ? text : `${reasoning}\n${text}`;
    } else if (type === 'item_reference') {
      throw new HerdError('UNSUPPORTED', 'Herd keeps no server-side items, so an item_reference cannot be resolved: send the item itself.', { param: `${at}.type` });
    } else {
      throw new HerdError(
        'UNSUPPORTED',
        `Herd's Responses bridge accepts message, function_call, function_call_output, custom_tool_call, custom_tool_call_output and reasoning input items, not '${String(type)}'.`,
        {
          param: `${at}.type`,
        },
      );
    }
  }
  return messages;
}

function decodeMessage(item: JsonObject, at: string): ChatMessage {
  const role = expectOneOf(item.role, `${at}.role`, ['user', 'assistant', 'system', 'developer'] as const);
  const content = item.content;
  if (typeof content === 'string') return role === 'assistant' ? { role, content } : { role, content };
  const parts = expectArray(content, `${at}.content`);
  if (role === 'assistant') {
    const out: Array<TextPart | RefusalPart> = parts.map((part, j) => decodeAssistantPart(part, `${at}.content[${j}]`));
    return { role, content: out };
  }
  const out: UserContentPart[] = parts.map((part, j) => decodeUserPart(part, `${at}.content[${j}]`));
  if (role === 'user') return { role, content: out };
  const texts = out.map((part, j) => {
    if (part.type !== 'text') throw invalidParam(`${at}.content[${j}].type`, `a ${role} message carries text only`);
    return part;
  });
  return { role, content: texts };
}

function decodeUserPart(value: unknown, at: string): UserContentPart {
  const part = expectObject(value, at);
  const type = expectString(part.type, `${at}.type`);
  if (type === 'input_text') {
    rejectUnknownKeys(part, new Set(['type', 'text']), at);
    return { type: 'text', text: expectString(part.text, `${at}.text`) };
  }
  if (type === 'input_image') {
    rejectUnknownKeys(part, new Set(['type', 'image_url', 'detail', 'file_id']), at);
    if (part.file_id != null) throw new HerdError('UNSUPPORTED', 'Herd keeps no files: send the image as image_url (https or a data: URL).', { param: `${at}.file_id` });
    const image: ImageUrlPart = { type: 'image_url', image_url: { url: expectString(part.image_url, `${at}.image_url`, { nonEmpty: true }) } };
    // 'original' is Responses-only; chat's nearest is high.
    if (part.detail != null) {
      const detail = expectOneOf(part.detail, `${at}.detail`, ['auto', 'low', 'high', 'original'] as const);
      image.image_url.detail = detail === 'original' ? 'high' : detail;
    }
    return image;
  }
  if (type === 'input_file' || type === 'input_audio') {
    throw new HerdError('UNSUPPORTED', `Herd's Responses bridge does not accept ${type} parts.`, { param: `${at}.type` });
  }
  throw invalidParam(`${at}.type`, `expected 'input_text' or 'input_image', got ${JSON.stringify(type)}`);
}

function decodeAssistantPart(value: unknown, at: string): TextPart | RefusalPart {
  const part = expectObject(value, at);
  const type = expectOneOf(part.type, `${at}.type`, ['output_text', 'input_text', 'refusal'] as const);
  if (type === 'refusal') {
    rejectUnknownKeys(part, new Set(['type', 'refusal']), at);
    return { type: 'refusal', refusal: expectString(part.refusal, `${at}.refusal`) };
  }
  // An SDK user replays `response.output` as it came, annotations and logprobs included.
  rejectUnknownKeys(part, new Set(['type', 'text', 'annotations', 'logprobs']), at);
  return { type: 'text', text: expectString(part.text, `${at}.text`) };
}

function decodeFunctionOutput(value: unknown, at: string): string | TextPart[] {
  if (typeof value === 'string') return value;
  return expectArray(value, at).map((item, j) => {
    const part = expectObject(item, `${at}[${j}]`);
    if (part.type !== 'input_text') {
      throw new HerdError('UNSUPPORTED', "Herd's Responses bridge accepts text function outputs only (a string or input_text parts).", { param: `${at}[${j}].type` });
    }
    rejectUnknownKeys(part, new Set(['type', 'text']), `${at}[${j}]`);
    return { type: 'text', text: expectString(part.text, `${at}[${j}].text`) };
  });
}

/** The readable text of a replayed reasoning item (its encrypted_content is another provider's, and dropped). */
function decodeReasoningText(item: JsonObject, at: string): string {
  const texts: string[] = [];
  if (item.content != null) {
    expectArray(item.content, `${at}.content`).forEach((part, j) => {
      const p = expectObject(part, `${at}.content[${j}]`);
      if (typeof p.text === 'string') texts.push(p.text);
    });
  }
  if (texts.length === 0 && item.summary != null) {
    expectArray(item.summary, `${at}.summary`).forEach((part, j) => {
      const p = expectObject(part, `${at}.summary[${j}]`);
      if (typeof p.text === 'string') texts.push(p.text);
    });
  }
  return texts.join('\n');
}

// --- tools, text format, metadata ---------------------------------------------------------------

// OpenAI's documented limit for function names.
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const TOOL_KEYS = new Set(['type', 'name', 'description', 'parameters', 'strict']);

function decodeTools(value: unknown): ResponsesTool[] {
  const names = new Set<string>();
  return expectArray(value, 'tools').map((item, i): ResponsesTool => {
    const at = `tools[${i}]`;
    const tool = expectObject(item, at);
    const type = expectString(tool.type, `${at}.type`);
    if (type !== 'function' && type !== 'custom') {
      throw new HerdError('UNSUPPORTED', `Herd's Responses bridge supports function and custom tools only; '${type}' is a tool OpenAI runs on its own servers.`, {
        param: `${at}.type`,
      });
    }
    rejectUnknownKeys(tool, type === 'function' ? TOOL_KEYS : CUSTOM_TOOL_KEYS, at);
    const name = expectString(tool.name, `${at}.name`);
    if (!FUNCTION_NAME.test(name)) throw invalidParam(`${at}.name`, 'must be 1-64 characters of a-z, A-Z, 0-9, underscore or dash');
    if (names.has(name)) throw invalidParam(`${at}.name`, `duplicate tool name '${name}'`);
    names.add(name);
    if (type === 'custom') return decodeCustomTool(tool, name, at);
    return {
      type: 'function',
      name,
      description: tool.description != null ? expectString(tool.description, `${at}.description`) : null,
      parameters: tool.parameters != null ? expectObject(tool.parameters, `${at}.parameters`) : null,
      strict: tool.strict != null ? expectBoolean(tool.strict, `${at}.strict`) : null,
    };
  });
}

const CUSTOM_TOOL_KEYS = new Set(['type', 'name', 'description', 'format']);

function decodeCustomTool(tool: JsonObject, name: string, at: string): ResponsesCustomTool {
  const out: ResponsesCustomTool = { type: 'custom', name };
  if (tool.description != null) out.description = expectString(tool.description, `${at}.description`);
  if (tool.format != null) {
    const format = expectObject(tool.format, `${at}.format`);
    const type = expectOneOf(format.type, `${at}.format.type`, ['text', 'grammar'] as const);
    if (type === 'text') {
      rejectUnknownKeys(format, new Set(['type']), `${at}.format`);
      out.format = { type };
    } else {
      rejectUnknownKeys(format, new Set(['type', 'syntax', 'definition']), `${at}.format`);
      const syntax = expectOneOf(format.syntax, `${at}.format.syntax`, ['lark', 'regex'] as const);
      out.format = { type, syntax, definition: expectString(format.definition, `${at}.format.definition`) };
    }
  }
  return out;
}

/** Responses' tool as chat's: a custom tool's grammar moves under `grammar` (chat's shape). */
function toChatTool(tool: ResponsesTool): ChatTool {
  if (tool.type === 'custom') {
    const custom: { name: string; description?: string; format?: CustomToolFormat } = { name: tool.name };
    if (tool.description !== undefined) custom.description = tool.description;
    if (tool.format !== undefined) {
      custom.format = tool.format.type === 'text' ? { type: 'text' } : { type: 'grammar', grammar: { definition: tool.format.definition, syntax: tool.format.syntax } };
    }
    return { type: 'custom', custom };
  }
  const out: ChatTool = { type: 'function', function: { name: tool.name } };
  if (tool.description !== null) out.function.description = tool.description;
  if (tool.parameters !== null) out.function.parameters = tool.parameters;
  if (tool.strict !== null) out.function.strict = tool.strict;
  return out;
}

function decodeToolChoice(value: unknown, tools: ResponsesTool[]): ResponsesToolChoice {
  if (typeof value === 'string') return expectOneOf(value, 'tool_choice', ['none', 'auto', 'required'] as const);
  const object = expectObject(value, 'tool_choice');
  const type = expectString(object.type, 'tool_choice.type');
  if (type !== 'function' && type !== 'custom')
    throw new HerdError('UNSUPPORTED', `Herd's Responses bridge supports tool_choice of type 'function' or 'custom' only, not '${type}'.`, { param: 'tool_choice.type' });
  rejectUnknownKeys(object, new Set(['type', 'name']), 'tool_choice');
  const name = expectString(object.name, 'tool_choice.name');
  if (!tools.some((tool) => tool.name === name && tool.type === type)) throw invalidParam('tool_choice.name', `'${name}' is not one of the ${type} tools`);
  return { type, name };
}

function toChatToolChoice(choice: ResponsesToolChoice): ToolChoice {
  if (typeof choice === 'string') return choice;
  return choice.type === 'custom' ? { type: 'custom', custom: { name: choice.name } } : { type: 'function', function: { name: choice.name } };
}

function decodeText(value: unknown, request: ChatRequest, echo: ResponsesEcho): void {
  const text = expectObject(value, 'text');
  rejectUnknownKeys(text, new Set(['format', 'verbosity']), 'text');
  if (text.verbosity != null) request.verbosity = echo.text.verbosity = expectOneOf(text.verbosity, 'text.verbosity', ['low', 'medium', 'high'] as const);
  if (text.format == null) return;
  const format = expectObject(text.format, 'text.format');
  const type = expectOneOf(format.type, 'text.format.type', ['text', 'json_object', 'json_schema'] as const);
  let out: ResponsesTextFormat;
  let chat: ResponseFormat;
  if (type === 'json_schema') {
    rejectUnknownKeys(format, new Set(['type', 'name', 'schema', 'description', 'strict']), 'text.format');
    const name = expectString(format.name, 'text.format.name', { nonEmpty: true });
    const schema = format.schema != null ? expectObject(format.schema, 'text.format.schema') : undefined;
    const description = format.description != null ? expectString(format.description, 'text.format.description') : undefined;
    const strict = format.strict != null ? expectBoolean(format.strict, 'text.format.strict') : undefined;
    out = { type, name, ...(schema ? { schema } : {}), ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}) };
    chat = { type, json_schema: { name, ...(schema ? { schema } : {}), ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}) } };
  } else {
    rejectUnknownKeys(format, new Set(['type']), 'text.format');
    out = { type };
    chat = { type };
  }
  echo.text.format = out;
  if (type !== 'text') request.response_format = chat;
}

function decodeMetadata(value: unknown): Record<string, string> {
  const object = expectObject(value, 'metadata');
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(object)) result[key] = expectString(item, `metadata.${key}`);
  return result;
}
