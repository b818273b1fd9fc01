// An Anthropic Messages request body (POST /v1/messages, /v1/messages/count_tokens) -> the canonical
// ChatRequest, refusing with a clear INVALID_ARG / UNSUPPORTED (param: Anthropic's dotted path) what cannot map.
import { HerdError } from '../../../core/errors.ts';
import type {
  AnthropicClientHeaders,
  CacheControl,
  AssistantMessage,
  ChatMessage,
  ChatRequest,
  FunctionTool,
  TextPart,
  ThinkingConfig,
  ToolCall,
  ToolChoice,
  UserContentPart,
} from '../../chat-types.ts';
import { describeValue, isJsonObject, type JsonObject } from '../../check-json-value.ts';

export interface DecodeMessagesOptions {
  /** count_tokens: no max_tokens, no sampling or streaming settings. */
  countOnly?: boolean;
  /** The client's anthropic-version / anthropic-beta, for Anthropic upstreams. */
  headers?: AnthropicClientHeaders;
}

/**
 * Settings that change where or how fast Anthropic runs a request, or how it is cached, but not what
 * it is asked: accepted and not carried (docs/gateway.md, "Anthropic Messages ingress"). Context editing
 * is among them: without it the upstream sees the whole history, which Claude Code can still work with.
 */
const IGNORED_FIELDS = ['service_tier', 'speed', 'inference_geo', 'diagnostics', 'user_profile_id', 'workspace_id', 'context_management'];
const MESSAGE_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'cache_control',
  ...IGNORED_FIELDS,
]);
const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'cache_control']);
/** Real Messages API fields that need state or servers Herd's upstreams do not share. */
const REFUSED_FIELDS = new Set(['container', 'mcp_servers', 'output_format']);

const invalid = (param: string, message: string) => new HerdError('INVALID_ARG', `${param}: ${message}`, { param });
const unsupported = (param: string, message: string) => new HerdError('UNSUPPORTED', `${param}: ${message}`, { param });

export function decodeMessagesRequest(body: unknown, options: DecodeMessagesOptions = {}): ChatRequest {
  if (!isJsonObject(body)) throw invalid('body', `expected a JSON object, got ${describeValue(body)}`);
  const allowed = options.countOnly ? COUNT_FIELDS : MESSAGE_FIELDS;
  for (const key of Object.keys(body)) {
    if (allowed.has(key)) continue;
    if (REFUSED_FIELDS.has(key)) throw unsupported(key, "Herd's Anthropic Messages endpoint cannot carry this field to its upstreams");
    throw invalid(key, 'Extra inputs are not permitted');
  }
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalid('model', 'Field required (a non-empty string)');
  const messages = [...decodeSystem(present(body.system)), ...decodeMessages(body.messages)];
  const request: ChatRequest = { model, messages };

  if (!options.countOnly) {
    const maxTokens = present(body.max_tokens);
    if (maxTokens === undefined) throw invalid('max_tokens', 'Field required');
    request.max_tokens = integer(maxTokens, 'max_tokens', 1);
    const stream = present(body.stream);
    if (stream !== undefined) {
      if (typeof stream !== 'boolean') throw invalid('stream', `expected a boolean, got ${describeValue(stream)}`);
      if (stream) request.stream = true;
    }
    const temperature = present(body.temperature);
    if (temperature !== undefined) request.temperature = numberIn(temperature, 'temperature', 0, 1);
    const topP = present(body.top_p);
    if (topP !== undefined) request.top_p = numberIn(topP, 'top_p', 0, 1);
    const topK = present(body.top_k);
    if (topK !== undefined) request.top_k = integer(topK, 'top_k', 0);
    const stop = present(body.stop_sequences);
    if (stop !== undefined) {
      if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string')) throw invalid('stop_sequences', 'expected an array of strings');
      if (stop.length > 0) request.stop = stop as string[];
    }
    const metadata = present(body.metadata);
    if (metadata !== undefined) {
      if (!isJsonObject(metadata)) throw invalid('metadata', `expected an object, got ${describeValue(metadata)}`);
      const userId = present(metadata.user_id);
      if (userId !== undefined) {
        if (typeof userId !== 'string') throw invalid('metadata.user_id', `expected a string, got ${describeValue(userId)}`);
        request.user = userId;
      }
    }
  }
  const output = present(body.output_config);
  if (output !== undefined) decodeOutputConfig(output, request);

  const tools = present(body.tools);
  if (tools !== undefined) {
    if (!Array.isArray(tools)) throw invalid('tools', `expected an array, got ${describeValue(tools)}`);
    if (tools.length > 0) request.tools = tools.map((tool, i) => decodeTool(tool, `tools.${i}`));
  }
  const toolChoice = present(body.tool_choice);
  if (toolChoice !== undefined) decodeToolChoice(toolChoice, request);
  const thinking = present(body.thinking);
  if (thinking !== undefined) request.thinking = decodeThinking(thinking);
  const cacheControl = findCacheControl(body);
  if (cacheControl !== undefined) request.cache_control = cacheControl;
  if (options.headers !== undefined && (options.headers.version !== undefined || options.headers.beta !== undefined)) request.anthropic_headers = options.headers;
  return request;
}

/** Absent and JSON null are the same. */
function present(value: unknown): unknown {
  return value === null ? undefined : value;
}

function integer(value: unknown, param: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw invalid(param, `expected an integer >= ${min}, got ${describeValue(value)}`);
  return value;
}

function numberIn(value: unknown, param: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
    throw invalid(param, `expected a number from ${min} to ${max}, got ${describeValue(value)}`);
  return value;
}

function decodeSystem(system: unknown): ChatMessage[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ role: 'system', content: system }];
  if (!Array.isArray(system)) throw invalid('system', `expected a string or an array of text blocks, got ${describeValue(system)}`);
  const parts = system.map((block, i): TextPart => ({ type: 'text', text: textOf(block, `system.${i}`) }));
  return parts.length === 0 ? [] : [{ role: 'system', content: parts }];
}

function textOf(block: unknown, param: string): string {
  if (!isJsonObject(block) || block.type !== 'text') throw invalid(param, 'expected a text block');
  if (typeof block.text !== 'string') throw invalid(`${param}.text`, 'expected a string');
  return block.text;
}

function decodeMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value)) throw invalid('messages', 'Field required (an array of messages)');
  if (value.length === 0) throw invalid('messages', 'at least one message is required');
  const out: ChatMessage[] = [];
  value.forEach((message, i) => {
    const param = `messages.${i}`;
    if (!isJsonObject(message)) throw invalid(param, `expected an object, got ${describeValue(message)}`);
    if (message.role === 'user') out.push(...decodeUserMessage(message, param));
    else if (message.role === 'assistant') out.push(decodeAssistantMessage(message, param));
    else throw invalid(`${param}.role`, `expected 'user' or 'assistant', got ${describeValue(message.role)}`);
  });
  return out;
}

function contentBlocks(message: JsonObject, param: string): JsonObject[] {
  const content = message.content;
  if (!Array.isArray(content)) throw invalid(`${param}.content`, `expected a string or an array of content blocks, got ${describeValue(content)}`);
  return content.map((block, j) => {
    if (!isJsonObject(block) || typeof block.type !== 'string') throw invalid(`${param}.content.${j}`, 'expected a content block with a type');
    return block;
  });
}

/** tool_result blocks become tool messages, ahead of the rest of the turn (Anthropic wants them first anyway). */
function decodeUserMessage(message: JsonObject, param: string): ChatMessage[] {
  if (typeof message.content === 'string') return [{ role: 'user', content: message.content }];
  const tools: ChatMessage[] = [];
  const parts: UserContentPart[] = [];
  contentBlocks(message, param).forEach((block, j) => {
    const at = `${param}.content.${j}`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: textOf(block, at) });
        break;
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: imageUrl(block.source, `${at}.source`) } });
        break;
      case 'tool_result':
        tools.push(decodeToolResult(block, at));
        break;
      default:
        throw unsupported(`${at}.type`, `content blocks of type '${block.type}' cannot be carried to Herd's upstreams`);
    }
  });
  return parts.length > 0 ? [...tools, { role: 'user', content: parts }] : tools;
}

function imageUrl(source: unknown, param: string): string {
  if (!isJsonObject(source)) throw invalid(param, 'expected an image source object');
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || typeof source.data !== 'string') throw invalid(param, 'a base64 source needs media_type and data strings');
    return `data:${source.media_type};base64,${source.data}`;
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string') throw invalid(`${param}.url`, 'expected a string');
    return source.url;
  }
  throw unsupported(`${param}.type`, `image sources of type ${describeValue(source.type)} are not supported (use base64 or url)`);
}

function decodeToolResult(block: JsonObject, param: string): ChatMessage {
  if (typeof block.tool_use_id !== 'string' || block.tool_use_id === '') throw invalid(`${param}.tool_use_id`, 'expected a non-empty string');
  const content = present(block.content);
  // is_error has no canonical field: the result text carries the failure, as it does for OpenAI clients.
  if (content === undefined) return { role: 'tool', tool_call_id: block.tool_use_id, content: '' };
  if (typeof content === 'string') return { role: 'tool', tool_call_id: block.tool_use_id, content };
  if (!Array.isArray(content)) throw invalid(`${param}.content`, 'expected a string or an array of text blocks');
  const parts = content.map((part, k): TextPart => {
    if (isJsonObject(part) && part.type !== 'text')
      throw unsupported(`${param}.content.${k}.type`, `tool results of type ${describeValue(part.type)} cannot be carried (text only)`);
    return { type: 'text', text: textOf(part, `${param}.content.${k}`) };
  });
  return { role: 'tool', tool_call_id: block.tool_use_id, content: parts };
}

function decodeAssistantMessage(message: JsonObject, param: string): AssistantMessage {
  if (typeof message.content === 'string') return { role: 'assistant', content: message.content };
  const texts: TextPart[] = [];
  const calls: ToolCall[] = [];
  let reasoning: string | undefined;
  let signature: string | undefined;
  contentBlocks(message, param).forEach((block, j) => {
    const at = `${param}.content.${j}`;
    switch (block.type) {
      case 'text':
        texts.push({ type: 'text', text: textOf(block, at) });
        break;
      case 'tool_use': {
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(at, 'a tool_use block needs id and name strings');
        calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        break;
      }
      case 'thinking':
        if (typeof block.thinking !== 'string') throw invalid(`${at}.thinking`, 'expected a string');
        reasoning = (reasoning ?? '') + block.thinking;
        if (typeof block.signature === 'string' && block.signature !== '') signature = block.signature;
        break;
      case 'redacted_thinking': // encrypted for Anthropic alone; the canonical shape has no place for it
        break;
      default:
        throw unsupported(`${at}.type`, `content blocks of type '${block.type}' cannot be carried to Herd's upstreams`);
    }
  });
  const result: AssistantMessage = { role: 'assistant', content: texts.length === 0 ? (calls.length > 0 ? null : '') : texts.length === 1 ? (texts[0] as TextPart).text : texts };
  if (calls.length > 0) result.tool_calls = calls;
  if (reasoning !== undefined) result.reasoning_content = reasoning;
  if (reasoning !== undefined && signature !== undefined) result.reasoning_signature = signature;
  return result;
}

function decodeTool(tool: unknown, param: string): FunctionTool {
  if (!isJsonObject(tool)) throw invalid(param, `expected an object, got ${describeValue(tool)}`);
  const type = present(tool.type);
  if (type !== undefined && type !== 'custom')
    throw unsupported(`${param}.type`, `server and client tools of type ${describeValue(type)} are not supported; define a custom tool with input_schema`);
  if (typeof tool.name !== 'string' || tool.name === '') throw invalid(`${param}.name`, 'expected a non-empty string');
  if (!isJsonObject(tool.input_schema)) throw invalid(`${param}.input_schema`, 'Field required (a JSON Schema object)');
  const description = present(tool.description);
  if (description !== undefined && typeof description !== 'string') throw invalid(`${param}.description`, 'expected a string');
  const fn: FunctionTool['function'] = { name: tool.name, parameters: tool.input_schema };
  if (description !== undefined) fn.description = description;
  return { type: 'function', function: fn };
}

function decodeToolChoice(value: unknown, request: ChatRequest): void {
  if (!isJsonObject(value)) throw invalid('tool_choice', `expected an object, got ${describeValue(value)}`);
  let choice: ToolChoice;
  switch (value.type) {
    case 'auto':
      choice = 'auto';
      break;
    case 'any':
      choice = 'required';
      break;
    case 'none':
      choice = 'none';
      break;
    case 'tool':
      if (typeof value.name !== 'string' || value.name === '') throw invalid('tool_choice.name', 'expected a non-empty string');
      choice = { type: 'function', function: { name: value.name } };
      break;
    default:
      throw invalid('tool_choice.type', `expected 'auto', 'any', 'tool' or 'none', got ${describeValue(value.type)}`);
  }
  request.tool_choice = choice;
  const disable = present(value.disable_parallel_tool_use);
  if (disable !== undefined && typeof disable !== 'boolean') throw invalid('tool_choice.disable_parallel_tool_use', 'expected a boolean');
  if (disable === true) request.parallel_tool_calls = false;
}

/**
 * The request's prompt-caching wish: the top-level cache_control, else the last block-level one (system,
 * message blocks, tool results, tools). The canonical shape has no place for breakpoints on blocks, so an
 * Anthropic upstream gets automatic caching instead, which marks the last cacheable block — where Claude
 * Code and most clients put their last breakpoint anyway.
 */
function findCacheControl(body: JsonObject): CacheControl | undefined {
  let last: unknown;
  const visit = (block: unknown) => {
    if (!isJsonObject(block)) return;
    const own = present(block.cache_control);
    if (own !== undefined) last = own;
    if (Array.isArray(block.content)) block.content.forEach(visit);
  };
  if (Array.isArray(body.tools)) body.tools.forEach(visit);
  if (Array.isArray(body.system)) body.system.forEach(visit);
  if (Array.isArray(body.messages)) body.messages.forEach(visit);
  const found = present(body.cache_control) ?? last;
  if (found === undefined) return undefined;
  if (!isJsonObject(found) || found.type !== 'ephemeral') throw invalid('cache_control', "expected {type: 'ephemeral'}");
  const ttl = present(found.ttl);
  if (ttl === undefined) return { type: 'ephemeral' };
  if (ttl !== '5m' && ttl !== '1h') throw invalid('cache_control.ttl', "expected '5m' or '1h'");
  return { type: 'ephemeral', ttl };
}

/** effort is OpenAI's reasoning_effort by another name; a JSON output format has no carrier to Anthropic upstreams yet. */
function decodeOutputConfig(value: unknown, request: ChatRequest): void {
  if (!isJsonObject(value)) throw invalid('output_config', `expected an object, got ${describeValue(value)}`);
  for (const key of Object.keys(value)) {
    if (key === 'effort') {
      const effort = present(value.effort);
      if (effort === undefined) continue;
      if (typeof effort !== 'string' || !['low', 'medium', 'high', 'xhigh', 'max'].includes(effort))
        throw invalid('output_config.effort', "expected 'low', 'medium', 'high', 'xhigh' or 'max'");
      request.reasoning_effort = effort;
    } else if (key === 'format') {
      if (present(value.format) !== undefined)
        throw unsupported('output_config.format', 'structured output formats are not supported on this endpoint; use /v1/chat/completions with response_format');
    } else throw invalid(`output_config.${key}`, 'Extra inputs are not permitted');
  }
}

function decodeThinking(value: unknown): ThinkingConfig {
  if (!isJsonObject(value)) throw invalid('thinking', `expected an object, got ${describeValue(value)}`);
  const display = present(value.display);
  if (display !== undefined && display !== 'summarized' && display !== 'omitted') throw invalid('thinking.display', "expected 'summarized' or 'omitted'");
  const shown: { display?: 'summarized' | 'omitted' } = display === undefined ? {} : { display };
  switch (value.type) {
    case 'disabled':
      return { type: 'disabled' };
    case 'between_tools':
      return { type: 'between_tools' };
    case 'adaptive':
      return { type: 'adaptive', ...shown };
    case 'enabled':
      return { type: 'enabled', budget_tokens: integer(value.budget_tokens, 'thinking.budget_tokens', 1), ...shown };
    default:
      throw invalid('thinking.type', `expected 'enabled', 'adaptive', 'between_tools' or 'disabled', got ${describeValue(value.type)}`);
  }
}
