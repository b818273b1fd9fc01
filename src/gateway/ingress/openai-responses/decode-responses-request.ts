// Decodes an untrusted POST /v1/responses body into the canonical ChatRequest plus what the `response` object
// echoes. Errors name the Responses param; members the chat shape cannot carry are recorded as unmodeled with
// their fate from responses-field-table.ts (a pass-through upstream gets them as sent; a bridge drops or refuses).
import type { ChatRequest, ResponseFormat, UnmodeledField } from '../../protocol/chat-types.ts';
import { expectBoolean, expectInteger, expectNumber, expectObject, expectOneOf, expectString, invalidParam, isJsonObject } from '../../protocol/check-json-value.ts';
import { collectUnknownKeys, createUnmodeled } from '../../protocol/dialect-field-table.ts';
import { decodeResponsesInput } from './decode-responses-input.ts';
import { decodeResponsesToolChoice, decodeResponsesTools } from './decode-responses-tools.ts';
import { RESPONSES_FIELDS } from './responses-field-table.ts';
import type { ResponsesDecoded, ResponsesEcho, ResponsesTextFormat } from '../../wire/openai-responses/responses-types.ts';

export interface DecodedResponsesRequest {
  request: ChatRequest;
  decoded: ResponsesDecoded;
}

/** Members decoded below; every other top-level member is recorded with the table's fate for it. */
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
  'truncation',
  'background',
]);

export function decodeResponsesRequest(body: unknown): DecodedResponsesRequest {
  if (!isJsonObject(body)) throw invalidParam('body', 'expected a JSON object');
  const unmodeled: UnmodeledField[] = [];
  collectUnknownKeys(body, KNOWN_KEYS, '', RESPONSES_FIELDS, unmodeled);
  const has = (key: string) => body[key] !== undefined && body[key] !== null;

  const model = expectString(body.model, 'model', { nonEmpty: true });
  const instructions = has('instructions') ? expectString(body.instructions, 'instructions') : null;
  if (!has('input')) throw invalidParam('input', 'expected a string or an array of input items');
  const messages = decodeResponsesInput(body.input, unmodeled);
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
  const decoded: ResponsesDecoded = { echo };

  if (has('temperature')) request.temperature = echo.temperature = expectNumber(body.temperature, 'temperature', { min: 0, max: 2 });
  if (has('top_p')) request.top_p = echo.top_p = expectNumber(body.top_p, 'top_p', { min: 0, max: 1 });
  if (has('max_output_tokens')) request.max_completion_tokens = echo.max_output_tokens = expectInteger(body.max_output_tokens, 'max_output_tokens', { min: 1 });
  // Nothing is stored either way (the answer says store: false); asking for it is named when bridged.
  if (has('store') && expectBoolean(body.store, 'store')) unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'store: true', 'store', body.store));
  if (has('background') && expectBoolean(body.background, 'background')) {
    unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'background: true', 'background', body.background));
  }
  if (has('stream')) request.stream = expectBoolean(body.stream, 'stream');
  if (has('stream_options')) {
    if (request.stream !== true) throw invalidParam('stream_options', 'is only allowed when stream is true');
    const options = expectObject(body.stream_options, 'stream_options');
    collectUnknownKeys(options, STREAM_OPTION_KEYS, 'stream_options', RESPONSES_FIELDS, unmodeled, 'stream_options');
    if (options.include_obfuscation != null) expectBoolean(options.include_obfuscation, 'stream_options.include_obfuscation');
  }
  if (has('metadata')) echo.metadata = decodeMetadata(body.metadata);
  if (has('user')) request.user = echo.user = expectString(body.user, 'user');
  if (has('safety_identifier')) request.safety_identifier = echo.safety_identifier = expectString(body.safety_identifier, 'safety_identifier');
  if (has('prompt_cache_key')) request.prompt_cache_key = echo.prompt_cache_key = expectString(body.prompt_cache_key, 'prompt_cache_key');
  if (has('service_tier')) request.service_tier = echo.service_tier = expectString(body.service_tier, 'service_tier', { nonEmpty: true });
  if (has('reasoning')) {
    const reasoning = expectObject(body.reasoning, 'reasoning');
    // summary, generate_summary, context and anything newer: recorded, each with its own fate.
    collectUnknownKeys(reasoning, REASONING_KEYS, 'reasoning', RESPONSES_FIELDS, unmodeled, 'reasoning');
    if (reasoning.effort != null) request.reasoning_effort = echo.reasoning.effort = expectString(reasoning.effort, 'reasoning.effort', { nonEmpty: true });
    if (typeof reasoning.summary === 'string') echo.reasoning.summary = reasoning.summary;
  }
  if (has('text')) decodeText(body.text, request, echo, unmodeled);
  if (has('truncation')) {
    echo.truncation = expectOneOf(body.truncation, 'truncation', ['auto', 'disabled'] as const);
    if (echo.truncation === 'auto') unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'truncation: auto', 'truncation', body.truncation));
  }

  if (has('tools')) {
    const tools = decodeResponsesTools(body.tools, unmodeled);
    echo.tools = tools.echo;
    if (tools.chat.length > 0) request.tools = tools.chat;
    if (tools.namespaced !== undefined) decoded.namespaced = tools.namespaced;
    if (has('tool_choice')) {
      const choice = decodeResponsesToolChoice(body.tool_choice, tools, unmodeled);
      echo.tool_choice = choice.echo;
      if (request.tools !== undefined && choice.chat !== undefined) request.tool_choice = choice.chat;
    }
  } else if (has('tool_choice')) {
    echo.tool_choice = decodeResponsesToolChoice(body.tool_choice, { echo: [], chat: [], namespaced: undefined }, unmodeled).echo;
  }
  if (has('parallel_tool_calls')) {
    echo.parallel_tool_calls = expectBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
    if (request.tools !== undefined) request.parallel_tool_calls = echo.parallel_tool_calls;
  }
  if (unmodeled.length > 0) request.unmodeled = unmodeled;
  return { request, decoded };
}
const STREAM_OPTION_KEYS = new Set(['include_obfuscation']);
const REASONING_KEYS = new Set(['effort']);

function decodeText(value: unknown, request: ChatRequest, echo: ResponsesEcho, unmodeled: UnmodeledField[]): void {
  const text = expectObject(value, 'text');
  collectUnknownKeys(text, TEXT_KEYS, 'text', RESPONSES_FIELDS, unmodeled, 'text');
  if (text.verbosity != null) request.verbosity = echo.text.verbosity = expectOneOf(text.verbosity, 'text.verbosity', ['low', 'medium', 'high'] as const);
  if (text.format == null) return;
  const format = expectObject(text.format, 'text.format');
  const type = expectOneOf(format.type, 'text.format.type', ['text', 'json_object', 'json_schema'] as const);
  let out: ResponsesTextFormat;
  let chat: ResponseFormat;
  if (type === 'json_schema') {
    collectUnknownKeys(format, JSON_SCHEMA_KEYS, 'text.format', RESPONSES_FIELDS, unmodeled);
    const name = expectString(format.name, 'text.format.name', { nonEmpty: true });
    const schema = format.schema != null ? expectObject(format.schema, 'text.format.schema') : undefined;
    const description = format.description != null ? expectString(format.description, 'text.format.description') : undefined;
    const strict = format.strict != null ? expectBoolean(format.strict, 'text.format.strict') : undefined;
    out = { type, name, ...(schema ? { schema } : {}), ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}) };
    chat = { type, json_schema: { name, ...(schema ? { schema } : {}), ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}) } };
  } else {
    collectUnknownKeys(format, FORMAT_KEYS, 'text.format', RESPONSES_FIELDS, unmodeled);
    out = { type };
    chat = { type };
  }
  echo.text.format = out;
  if (type !== 'text') request.response_format = chat;
}

const TEXT_KEYS = new Set(['format', 'verbosity']);
const JSON_SCHEMA_KEYS = new Set(['type', 'name', 'schema', 'description', 'strict']);
const FORMAT_KEYS = new Set(['type']);

function decodeMetadata(value: unknown): Record<string, string> {
  const object = expectObject(value, 'metadata');
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(object)) result[key] = expectString(item, `metadata.${key}`);
  return result;
}
