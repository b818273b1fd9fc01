// An Anthropic Messages request body (POST /v1/messages, /v1/messages/count_tokens) -> the canonical
// ChatRequest. Tolerant: what it does not map is recorded in `unmodeled` by the field table
// (messages-field-table.ts), never refused here; known fields keep the checks Anthropic makes (param: Anthropic's dotted path).
import type { AnthropicClientHeaders, CacheControl, ChatRequest, ResponseFormat, ThinkingConfig } from '../../protocol/chat-types.ts';
import { describeValue, isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { invalid } from './decode-messages-blocks.ts';
import { decodeMessagesToolChoice, decodeMessagesTools } from './decode-messages-tools.ts';
import { decodeMessagesTurns, decodeSystemTurn } from './decode-messages-turns.ts';
import { type FieldRow, REQUEST_FIELDS } from './messages-field-table.ts';
import { UnmodeledFields } from './unmodeled-fields.ts';

export interface DecodeMessagesOptions {
  /** count_tokens: no max_tokens, no sampling or streaming settings. */
  countOnly?: boolean;
  /** The client's anthropic-version / anthropic-beta, for Anthropic upstreams. */
  headers?: AnthropicClientHeaders;
}

/** Fields of /v1/messages that count_tokens refuses, as Anthropic does. */
const MESSAGE_ONLY = ['max_tokens', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata'];
const READ = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'output_format', 'cache_control', ...MESSAGE_ONLY]);
/** The top-level rows with a fate of their own (the rest of the table is about nested members). */
const TOP_LEVEL_ROWS: Readonly<Record<string, FieldRow>> = Object.fromEntries(
  Object.entries(REQUEST_FIELDS).filter(([name, row]) => row.bridged !== 'mapped' && /^[a-z_]+$/.test(name)),
);
const METADATA = new Set(['user_id']);
const OUTPUT_CONFIG = new Set(['effort', 'format']);
const THINKING = new Set(['type', 'budget_tokens', 'display']);
const CACHE_CONTROL = new Set(['type', 'ttl']);
const FORMAT = new Set(['type', 'schema']);
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];

export function decodeMessagesRequest(body: unknown, options: DecodeMessagesOptions = {}): ChatRequest {
  if (!isJsonObject(body)) throw invalid('body', `expected a JSON object, got ${describeValue(body)}`);
  const unmodeled = new UnmodeledFields();
  if (options.countOnly) {
    for (const key of MESSAGE_ONLY) if (body[key] !== undefined) throw invalid(key, 'Extra inputs are not permitted');
  }
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalid('model', 'Field required (a non-empty string)');
  const system = present(body.system);
  if (system !== undefined && typeof system !== 'string' && !Array.isArray(system))
    throw invalid('system', `expected a string or an array of text blocks, got ${describeValue(system)}`);
  const messages = [...(system === undefined ? [] : decodeSystemTurn(system, 'system', unmodeled)), ...decodeMessagesTurns(body.messages, unmodeled)];
  const request: ChatRequest = { model, messages };
  if (!options.countOnly) decodeSettings(body, request, unmodeled);

  const output = present(body.output_config);
  if (output !== undefined) decodeOutputConfig(output, request, unmodeled);
  const format = present(body.output_format);
  if (format !== undefined && request.response_format === undefined) request.response_format = decodeFormat(format, 'output_format', unmodeled);
  const tools = decodeMessagesTools(present(body.tools), unmodeled);
  if (tools.tools.length > 0) request.tools = tools.tools;
  const toolChoice = present(body.tool_choice);
  if (toolChoice !== undefined) decodeMessagesToolChoice(toolChoice, request, tools, unmodeled);
  const thinking = present(body.thinking);
  if (thinking !== undefined) request.thinking = decodeThinking(thinking, unmodeled);
  const cacheControl = findCacheControl(body, unmodeled);
  if (cacheControl !== undefined) request.cache_control = cacheControl;
  if (options.headers !== undefined && (options.headers.version !== undefined || options.headers.beta !== undefined)) request.anthropic_headers = options.headers;
  unmodeled.others(body, '', READ, TOP_LEVEL_ROWS);
  if (unmodeled.fields.length > 0) request.unmodeled = unmodeled.fields;
  return request;
}

function decodeSettings(body: JsonObject, request: ChatRequest, unmodeled: UnmodeledFields): void {
  const maxTokens = present(body.max_tokens);
  if (maxTokens === undefined) throw invalid('max_tokens', 'Field required');
  request.max_tokens = integer(maxTokens, 'max_tokens', 0);
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
    unmodeled.others(metadata, 'metadata', METADATA, {}, REQUEST_FIELDS['metadata.*']);
  }
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

/**
 * The request's prompt-caching wish: the top-level cache_control, else the last block-level one (system,
 * message blocks, tool results, tools). The canonical shape has no place for breakpoints on blocks, so an
 * Anthropic upstream gets automatic caching instead, which marks the last cacheable block — where Claude
 * Code and most clients put their last breakpoint anyway.
 */
function findCacheControl(body: JsonObject, unmodeled: UnmodeledFields): CacheControl | undefined {
  let last: unknown;
  const visit = (block: unknown, param: string) => {
    if (!isJsonObject(block)) return;
    const own = present(block.cache_control);
    if (own !== undefined) {
      last = own;
      if (isJsonObject(own)) unmodeled.others(own, `${param}.cache_control`, CACHE_CONTROL);
    }
    if (!Array.isArray(block.content)) return;
    block.content.forEach((inner, i) => {
      visit(inner, `${param}.content.${i}`);
    });
  };
  const visitAll = (list: unknown, param: string) => {
    if (!Array.isArray(list)) return;
    list.forEach((item, i) => {
      visit(item, `${param}.${i}`);
    });
  };
  visitAll(body.tools, 'tools');
  visitAll(body.system, 'system');
  visitAll(body.messages, 'messages');
  const top = present(body.cache_control);
  if (isJsonObject(top)) unmodeled.others(top, 'cache_control', CACHE_CONTROL);
  const found = top ?? last;
  if (found === undefined) return undefined;
  if (!isJsonObject(found) || found.type !== 'ephemeral') throw invalid('cache_control', "expected {type: 'ephemeral'}");
  const ttl = present(found.ttl);
  if (ttl === undefined) return { type: 'ephemeral' };
  if (ttl !== '5m' && ttl !== '1h') throw invalid('cache_control.ttl', "expected '5m' or '1h'");
  return { type: 'ephemeral', ttl };
}

/** effort is OpenAI's reasoning_effort by another name; format is its response_format. */
function decodeOutputConfig(value: unknown, request: ChatRequest, unmodeled: UnmodeledFields): void {
  if (!isJsonObject(value)) throw invalid('output_config', `expected an object, got ${describeValue(value)}`);
  const effort = present(value.effort);
  if (effort !== undefined) {
    if (typeof effort !== 'string' || !EFFORTS.includes(effort)) throw invalid('output_config.effort', "expected 'low', 'medium', 'high', 'xhigh' or 'max'");
    request.reasoning_effort = effort;
  }
  const format = present(value.format);
  if (format !== undefined) request.response_format = decodeFormat(format, 'output_config.format', unmodeled);
  unmodeled.others(value, 'output_config', OUTPUT_CONFIG, { task_budget: REQUEST_FIELDS['output_config.task_budget'] });
}

/** Anthropic's JSON output format carries a bare schema; OpenAI's wants it named. */
function decodeFormat(value: unknown, param: string, unmodeled: UnmodeledFields): ResponseFormat {
  if (!isJsonObject(value) || value.type !== 'json_schema') throw invalid(`${param}.type`, "expected 'json_schema'");
  if (!isJsonObject(value.schema)) throw invalid(`${param}.schema`, 'Field required (a JSON Schema object)');
  unmodeled.others(value, param, FORMAT);
  return { type: 'json_schema', json_schema: { name: 'output', schema: value.schema } };
}

/** budget_tokens 0 is kept as sent: it means no thinking, which a truthy check would lose. */
function decodeThinking(value: unknown, unmodeled: UnmodeledFields): ThinkingConfig {
  if (!isJsonObject(value)) throw invalid('thinking', `expected an object, got ${describeValue(value)}`);
  const display = present(value.display);
  if (display !== undefined && typeof display !== 'string') throw invalid('thinking.display', `expected a string, got ${describeValue(display)}`);
  // A display mode newer than Herd (Claude Code sends 'updates') reaches Anthropic on pass-through; bridged it is dropped.
  const known = display === 'summarized' || display === 'omitted';
  if (display !== undefined && !known) unmodeled.add('thinking.display', REQUEST_FIELDS['*'], display);
  const shown: { display?: 'summarized' | 'omitted' } = known ? { display } : {};
  unmodeled.others(value, 'thinking', THINKING);
  switch (value.type) {
    case 'disabled':
      return { type: 'disabled' };
    case 'between_tools':
      return { type: 'between_tools' };
    case 'adaptive':
      return { type: 'adaptive', ...shown };
    case 'enabled':
      return { type: 'enabled', budget_tokens: integer(value.budget_tokens, 'thinking.budget_tokens', 0), ...shown };
    default:
      throw invalid('thinking.type', `expected 'enabled', 'adaptive', 'between_tools' or 'disabled', got ${describeValue(value.type)}`);
  }
}
