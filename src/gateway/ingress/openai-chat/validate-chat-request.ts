// Validates an untrusted /v1/chat/completions body into a ChatRequest. Every problem with a member Herd models
// is a HerdError INVALID_ARG naming the OpenAI `param` (out-of-range values are rejected, never clamped);
// members it does not model are recorded in `unmodeled` for the upstream to judge (chat-field-table.ts).
import type { ChatRequest, ChatTool, CustomTool, FunctionTool, ResponseFormat, ToolChoice, UnmodeledField } from '../../protocol/chat-types.ts';
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
  type JsonObject,
} from '../../protocol/check-json-value.ts';
import { CHAT_FIELDS } from './chat-field-table.ts';
import { collectUnknownKeys, createUnmodeled } from '../../protocol/dialect-field-table.ts';
import { validateChatMessages } from './validate-chat-messages.ts';

const KNOWN_KEYS = new Set([
  'model',
  'messages',
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'n',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'user',
  'stream',
  'stream_options',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'reasoning_effort',
  'metadata',
  'store',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
  'verbosity',
]);

// OpenAI's documented limit for function names.
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function validateChatRequest(body: unknown): ChatRequest {
  if (!isJsonObject(body)) throw invalidParam('body', 'expected a JSON object');
  // Unknown members go on to a same-dialect upstream, which judges them (a typo included); a bridge names or refuses them.
  const unmodeled: UnmodeledField[] = [];
  collectUnknownKeys(body, KNOWN_KEYS, '', CHAT_FIELDS, unmodeled);
  const request: ChatRequest = {
    model: expectString(body.model, 'model', { nonEmpty: true }),
    messages: validateChatMessages(body.messages, unmodeled),
  };
  const has = (key: string) => body[key] !== undefined && body[key] !== null;

  if (has('temperature')) request.temperature = expectNumber(body.temperature, 'temperature', { min: 0, max: 2 });
  if (has('top_p')) request.top_p = expectNumber(body.top_p, 'top_p', { min: 0, max: 1 });
  if (has('max_tokens')) request.max_tokens = expectInteger(body.max_tokens, 'max_tokens', { min: 1 });
  if (has('max_completion_tokens')) {
    request.max_completion_tokens = expectInteger(body.max_completion_tokens, 'max_completion_tokens', { min: 1 });
  }
  if (has('stop')) request.stop = validateStop(body.stop);
  if (has('n')) request.n = expectInteger(body.n, 'n', { min: 1, max: 128 });
  if (has('seed')) request.seed = expectInteger(body.seed, 'seed');
  if (has('presence_penalty')) {
    request.presence_penalty = expectNumber(body.presence_penalty, 'presence_penalty', { min: -2, max: 2 });
  }
  if (has('frequency_penalty')) {
    request.frequency_penalty = expectNumber(body.frequency_penalty, 'frequency_penalty', { min: -2, max: 2 });
  }
  if (has('logprobs')) request.logprobs = expectBoolean(body.logprobs, 'logprobs');
  if (has('top_logprobs')) {
    request.top_logprobs = expectInteger(body.top_logprobs, 'top_logprobs', { min: 0, max: 20 });
    if (request.logprobs !== true) throw invalidParam('top_logprobs', 'requires logprobs to be true');
  }
  if (has('logit_bias')) request.logit_bias = validateLogitBias(body.logit_bias);
  if (has('user')) request.user = expectString(body.user, 'user');
  if (has('reasoning_effort')) request.reasoning_effort = expectString(body.reasoning_effort, 'reasoning_effort', { nonEmpty: true });
  if (has('metadata')) request.metadata = validateMetadata(body.metadata);
  if (has('store')) request.store = expectBoolean(body.store, 'store');
  if (has('service_tier')) request.service_tier = expectString(body.service_tier, 'service_tier', { nonEmpty: true });
  if (has('prompt_cache_key')) request.prompt_cache_key = expectString(body.prompt_cache_key, 'prompt_cache_key');
  if (has('safety_identifier')) request.safety_identifier = expectString(body.safety_identifier, 'safety_identifier');
  if (has('verbosity')) request.verbosity = expectOneOf(body.verbosity, 'verbosity', ['low', 'medium', 'high'] as const);

  if (has('stream')) request.stream = expectBoolean(body.stream, 'stream');
  if (has('stream_options')) {
    if (request.stream !== true) throw invalidParam('stream_options', 'is only allowed when stream is true');
    const options = expectObject(body.stream_options, 'stream_options');
    collectUnknownKeys(options, STREAM_OPTION_KEYS, 'stream_options', CHAT_FIELDS, unmodeled, 'stream_options');
    request.stream_options = {};
    if (options.include_usage != null) {
      request.stream_options.include_usage = expectBoolean(options.include_usage, 'stream_options.include_usage');
    }
    if (options.include_obfuscation != null) {
      request.stream_options.include_obfuscation = expectBoolean(options.include_obfuscation, 'stream_options.include_obfuscation');
    }
  }

  if (has('tools')) request.tools = validateTools(body.tools, unmodeled);
  if (has('tool_choice')) {
    const choice = validateToolChoice(body.tool_choice, request.tools, Array.isArray(body.tools) && body.tools.length > 0, unmodeled);
    if (choice !== undefined) request.tool_choice = choice;
  }
  if (has('parallel_tool_calls')) {
    request.parallel_tool_calls = expectBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  }
  if (has('response_format')) request.response_format = validateResponseFormat(body.response_format, unmodeled);
  if (unmodeled.length > 0) request.unmodeled = unmodeled;
  return request;
}
const STREAM_OPTION_KEYS = new Set(['include_usage', 'include_obfuscation']);

function validateStop(value: unknown): string | string[] {
  if (typeof value === 'string') return value;
  const list = expectArray(value, 'stop');
  return list.map((item, i) => expectString(item, `stop[${i}]`));
}

function validateLogitBias(value: unknown): Record<string, number> {
  const object = expectObject(value, 'logit_bias');
  const result: Record<string, number> = {};
  for (const [token, bias] of Object.entries(object)) {
    if (!/^\d+$/.test(token)) throw invalidParam(`logit_bias.${token}`, 'keys must be token ids');
    result[token] = expectNumber(bias, `logit_bias.${token}`, { min: -100, max: 100 });
  }
  return result;
}

function validateMetadata(value: unknown): Record<string, string> {
  const object = expectObject(value, 'metadata');
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(object)) result[key] = expectString(item, `metadata.${key}`);
  return result;
}

function validateTools(value: unknown, unmodeled: UnmodeledField[]): ChatTool[] {
  const names = new Set<string>();
  const tools: ChatTool[] = [];
  expectArray(value, 'tools').forEach((item, i) => {
    const at = `tools[${i}]`;
    const tool = expectObject(item, at);
    if (tool.type !== 'function' && tool.type !== 'custom') {
      unmodeled.push(createUnmodeled(CHAT_FIELDS, 'tools[type=(other)]', `tools.${i}`, tool));
      return;
    }
    collectUnknownKeys(tool, TOOL_KEYS, at, CHAT_FIELDS, unmodeled);
    tools.push(tool.type === 'custom' ? validateCustomTool(tool, at, names, unmodeled) : validateFunctionTool(tool, at, names, unmodeled));
  });
  return tools;
}
const TOOL_KEYS = new Set(['type', 'function', 'custom']);

function validateFunctionTool(tool: JsonObject, at: string, names: Set<string>, unmodeled: UnmodeledField[]): FunctionTool {
  const fn = expectObject(tool.function, `${at}.function`);
  collectUnknownKeys(fn, FUNCTION_KEYS, `${at}.function`, CHAT_FIELDS, unmodeled);
  const name = expectString(fn.name, `${at}.function.name`);
  if (!FUNCTION_NAME.test(name)) {
    throw invalidParam(`${at}.function.name`, 'must be 1-64 characters of a-z, A-Z, 0-9, underscore or dash');
  }
  if (names.has(name)) throw invalidParam(`${at}.function.name`, `duplicate function name '${name}'`);
  names.add(name);
  const result: FunctionTool = { type: 'function', function: { name } };
  if (fn.description != null) result.function.description = expectString(fn.description, `${at}.function.description`);
  if (fn.parameters != null) result.function.parameters = expectObject(fn.parameters, `${at}.function.parameters`);
  if (fn.strict != null) result.function.strict = expectBoolean(fn.strict, `${at}.function.strict`);
  return result;
}

/** OpenAI's custom (freeform) tool: `{type: 'custom', custom: {name, description?, format?}}`. */
function validateCustomTool(tool: JsonObject, at: string, names: Set<string>, unmodeled: UnmodeledField[]): CustomTool {
  const custom = expectObject(tool.custom, `${at}.custom`);
  collectUnknownKeys(custom, CUSTOM_KEYS, `${at}.custom`, CHAT_FIELDS, unmodeled);
  const name = expectString(custom.name, `${at}.custom.name`);
  if (!FUNCTION_NAME.test(name)) throw invalidParam(`${at}.custom.name`, 'must be 1-64 characters of a-z, A-Z, 0-9, underscore or dash');
  if (names.has(name)) throw invalidParam(`${at}.custom.name`, `duplicate tool name '${name}'`);
  names.add(name);
  const result: CustomTool = { type: 'custom', custom: { name } };
  if (custom.description != null) result.custom.description = expectString(custom.description, `${at}.custom.description`);
  if (custom.format != null) {
    const format = expectObject(custom.format, `${at}.custom.format`);
    const type = expectOneOf(format.type, `${at}.custom.format.type`, ['text', 'grammar'] as const);
    if (type === 'text') {
      collectUnknownKeys(format, FORMAT_TEXT_KEYS, `${at}.custom.format`, CHAT_FIELDS, unmodeled);
      result.custom.format = { type };
    } else {
      collectUnknownKeys(format, FORMAT_GRAMMAR_KEYS, `${at}.custom.format`, CHAT_FIELDS, unmodeled);
      const grammar = expectObject(format.grammar, `${at}.custom.format.grammar`);
      collectUnknownKeys(grammar, GRAMMAR_KEYS, `${at}.custom.format.grammar`, CHAT_FIELDS, unmodeled);
      result.custom.format = {
        type,
        grammar: {
          definition: expectString(grammar.definition, `${at}.custom.format.grammar.definition`),
          syntax: expectOneOf(grammar.syntax, `${at}.custom.format.grammar.syntax`, ['lark', 'regex'] as const),
        },
      };
    }
  }
  return result;
}
const FUNCTION_KEYS = new Set(['name', 'description', 'parameters', 'strict']);
const CUSTOM_KEYS = new Set(['name', 'description', 'format']);
const FORMAT_TEXT_KEYS = new Set(['type']);
const FORMAT_GRAMMAR_KEYS = new Set(['type', 'grammar']);
const GRAMMAR_KEYS = new Set(['definition', 'syntax']);
const CHOICE_KEYS = new Set(['type', 'function', 'custom']);
const CHOICE_NAME_KEYS = new Set(['name']);

/** undefined: a choice of a type Herd does not model (recorded as unmodeled). `sentTools`: the body had tools, modelled or not. */
function validateToolChoice(value: unknown, tools: ChatTool[] | undefined, sentTools: boolean, unmodeled: UnmodeledField[]): ToolChoice | undefined {
  if (!sentTools) throw invalidParam('tool_choice', 'is only allowed when tools are specified');
  if (typeof value === 'string') return expectOneOf(value, 'tool_choice', ['none', 'auto', 'required'] as const);
  const object = expectObject(value, 'tool_choice');
  if (object.type !== 'function' && object.type !== 'custom') {
    unmodeled.push(createUnmodeled(CHAT_FIELDS, 'tool_choice[type=(other)]', 'tool_choice', object));
    return undefined;
  }
  const type = object.type;
  collectUnknownKeys(object, CHOICE_KEYS, 'tool_choice', CHAT_FIELDS, unmodeled);
  if (type === 'custom') {
    const custom = expectObject(object.custom, 'tool_choice.custom');
    collectUnknownKeys(custom, CHOICE_NAME_KEYS, 'tool_choice.custom', CHAT_FIELDS, unmodeled);
    const name = expectString(custom.name, 'tool_choice.custom.name');
    if (!tools?.some((tool) => tool.type === 'custom' && tool.custom.name === name)) throw invalidParam('tool_choice.custom.name', `'${name}' is not one of the custom tools`);
    return { type, custom: { name } };
  }
  const fn = expectObject(object.function, 'tool_choice.function');
  collectUnknownKeys(fn, CHOICE_NAME_KEYS, 'tool_choice.function', CHAT_FIELDS, unmodeled);
  const name = expectString(fn.name, 'tool_choice.function.name');
  if (!tools?.some((tool) => tool.type === 'function' && tool.function.name === name)) {
    throw invalidParam('tool_choice.function.name', `'${name}' is not one of the tools`);
  }
  return { type: 'function', function: { name } };
}

function validateResponseFormat(value: unknown, unmodeled: UnmodeledField[]): ResponseFormat {
  const object: JsonObject = expectObject(value, 'response_format');
  const type = expectOneOf(object.type, 'response_format.type', ['text', 'json_object', 'json_schema'] as const);
  collectUnknownKeys(object, type === 'json_schema' ? JSON_SCHEMA_FORMAT_KEYS : FORMAT_TEXT_KEYS, 'response_format', CHAT_FIELDS, unmodeled);
  if (type !== 'json_schema') return { type };
  const spec = expectObject(object.json_schema, 'response_format.json_schema');
  collectUnknownKeys(spec, JSON_SCHEMA_KEYS, 'response_format.json_schema', CHAT_FIELDS, unmodeled);
  const format: ResponseFormat = {
    type,
    json_schema: { name: expectString(spec.name, 'response_format.json_schema.name', { nonEmpty: true }) },
  };
  if (spec.description != null) {
    format.json_schema.description = expectString(spec.description, 'response_format.json_schema.description');
  }
  if (spec.schema != null) format.json_schema.schema = expectObject(spec.schema, 'response_format.json_schema.schema');
  if (spec.strict != null) format.json_schema.strict = expectBoolean(spec.strict, 'response_format.json_schema.strict');
  return format;
}
const JSON_SCHEMA_FORMAT_KEYS = new Set(['type', 'json_schema']);
const JSON_SCHEMA_KEYS = new Set(['name', 'description', 'schema', 'strict']);
