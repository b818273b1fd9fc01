// A Responses request's tools and tool_choice as chat's: function and custom tools map; a namespace's tools are
// flattened to chat tools named `<namespace>__<name>` (restored in the answer, restore-namespaced-names.ts);
// hosted and unknown tools are left to the field table (dropped, or refused when tool_choice requires them).
import type { ChatTool, CustomToolFormat, ToolChoice, UnmodeledField } from '../../protocol/chat-types.ts';
import { expectArray, expectBoolean, expectObject, expectOneOf, expectString, invalidParam, type JsonObject } from '../../protocol/check-json-value.ts';
import { collectUnknownKeys, createUnmodeled } from '../../protocol/dialect-field-table.ts';
import { RESPONSES_FIELDS } from './responses-field-table.ts';
import type { NamespacedNames, ResponsesCustomTool, ResponsesEcho, ResponsesTool } from '../../wire/openai-responses/responses-types.ts';

export interface DecodedTools {
  /** As the response echoes them: decoded function and custom tools, other tools as sent. */
  echo: ResponsesEcho['tools'];
  chat: ChatTool[];
  /** Flattened chat name → the namespace and name the client declared; undefined without namespaces. */
  namespaced: NamespacedNames | undefined;
}

/** The chat name of `name` in `namespace`: reversible through the map the decoder builds, never by splitting. */
export function flattenNamespacedName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

// OpenAI's documented limit for function names.
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const TOOL_KEYS = new Set(['type', 'name', 'description', 'parameters', 'strict']);
const CUSTOM_TOOL_KEYS = new Set(['type', 'name', 'description', 'format']);
const NAMESPACE_KEYS = new Set(['type', 'name', 'description', 'tools']);

export function decodeResponsesTools(value: unknown, unmodeled: UnmodeledField[]): DecodedTools {
  const names = new Set<string>();
  const out: DecodedTools = { echo: [], chat: [], namespaced: undefined };
  expectArray(value, 'tools').forEach((item, i) => {
    const at = `tools[${i}]`;
    const tool = expectObject(item, at);
    const type = expectString(tool.type, `${at}.type`);
    if (type === 'function' || type === 'custom') {
      const decoded = decodeTool(tool, type, at, names, unmodeled);
      out.echo.push(decoded);
      out.chat.push(toChatTool(decoded, decoded.name));
    } else if (type === 'namespace') {
      collectUnknownKeys(tool, NAMESPACE_KEYS, at, RESPONSES_FIELDS, unmodeled);
      const namespace = expectString(tool.name, `${at}.name`, { nonEmpty: true });
      out.namespaced ??= new Map();
      expectArray(tool.tools, `${at}.tools`).forEach((entry, j) => {
        const inner = expectObject(entry, `${at}.tools[${j}]`);
        if (inner.type !== 'function' && inner.type !== 'custom') {
          unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'tools[type=(other)]', `tools.${i}.tools.${j}`, inner));
          return;
        }
        const decoded = decodeTool(inner, inner.type, `${at}.tools[${j}]`, undefined, unmodeled);
        const flat = flattenNamespacedName(namespace, decoded.name);
        if (names.has(flat)) throw invalidParam(`${at}.tools[${j}].name`, `duplicate tool name '${flat}'`);
        names.add(flat);
        out.namespaced?.set(flat, { namespace, name: decoded.name });
        out.chat.push(toChatTool(decoded, flat));
      });
      out.echo.push(tool);
    } else {
      const key = `tools[type=${type}]`;
      unmodeled.push(createUnmodeled(RESPONSES_FIELDS, Object.hasOwn(RESPONSES_FIELDS, key) ? key : 'tools[type=(other)]', `tools.${i}`, tool));
      out.echo.push(tool);
    }
  });
  return out;
}

/** A function or custom tool; `names` (top-level tools) checks duplicates, a namespace checks its flattened names. */
function decodeTool(tool: JsonObject, type: 'function' | 'custom', at: string, names: Set<string> | undefined, unmodeled: UnmodeledField[]): ResponsesTool {
  collectUnknownKeys(tool, type === 'function' ? TOOL_KEYS : CUSTOM_TOOL_KEYS, at, RESPONSES_FIELDS, unmodeled);
  const name = expectString(tool.name, `${at}.name`);
  if (!FUNCTION_NAME.test(name)) throw invalidParam(`${at}.name`, 'must be 1-64 characters of a-z, A-Z, 0-9, underscore or dash');
  if (names !== undefined) {
    if (names.has(name)) throw invalidParam(`${at}.name`, `duplicate tool name '${name}'`);
    names.add(name);
  }
  if (type === 'custom') return decodeCustomTool(tool, name, at, unmodeled);
  return {
    type: 'function',
    name,
    description: tool.description != null ? expectString(tool.description, `${at}.description`) : null,
    parameters: tool.parameters != null ? expectObject(tool.parameters, `${at}.parameters`) : null,
    strict: tool.strict != null ? expectBoolean(tool.strict, `${at}.strict`) : null,
  };
}

function decodeCustomTool(tool: JsonObject, name: string, at: string, unmodeled: UnmodeledField[]): ResponsesCustomTool {
  const out: ResponsesCustomTool = { type: 'custom', name };
  if (tool.description != null) out.description = expectString(tool.description, `${at}.description`);
  if (tool.format != null) {
    const format = expectObject(tool.format, `${at}.format`);
    const type = expectOneOf(format.type, `${at}.format.type`, ['text', 'grammar'] as const);
    if (type === 'text') {
      collectUnknownKeys(format, FORMAT_TEXT_KEYS, `${at}.format`, RESPONSES_FIELDS, unmodeled);
      out.format = { type };
    } else {
      collectUnknownKeys(format, FORMAT_GRAMMAR_KEYS, `${at}.format`, RESPONSES_FIELDS, unmodeled);
      const syntax = expectOneOf(format.syntax, `${at}.format.syntax`, ['lark', 'regex'] as const);
      out.format = { type, syntax, definition: expectString(format.definition, `${at}.format.definition`) };
    }
  }
  return out;
}
const FORMAT_TEXT_KEYS = new Set(['type']);
const FORMAT_GRAMMAR_KEYS = new Set(['type', 'syntax', 'definition']);

/** Responses' tool as chat's, under `name`: a custom tool's grammar moves under `grammar` (chat's shape). */
function toChatTool(tool: ResponsesTool, name: string): ChatTool {
  if (tool.type === 'custom') {
    const custom: { name: string; description?: string; format?: CustomToolFormat } = { name };
    if (tool.description !== undefined) custom.description = tool.description;
    if (tool.format !== undefined) {
      custom.format = tool.format.type === 'text' ? { type: 'text' } : { type: 'grammar', grammar: { definition: tool.format.definition, syntax: tool.format.syntax } };
    }
    return { type: 'custom', custom };
  }
  const out: ChatTool = { type: 'function', function: { name } };
  if (tool.description !== null) out.function.description = tool.description;
  if (tool.parameters !== null) out.function.parameters = tool.parameters;
  if (tool.strict !== null) out.function.strict = tool.strict;
  return out;
}

/** tool_choice as echoed, and as chat's (undefined: nothing chat can say; the table's entry is recorded). */
export function decodeResponsesToolChoice(value: unknown, tools: DecodedTools, unmodeled: UnmodeledField[]): { echo: ResponsesEcho['tool_choice']; chat: ToolChoice | undefined } {
  if (typeof value === 'string') {
    const choice = expectOneOf(value, 'tool_choice', ['none', 'auto', 'required'] as const);
    return { echo: choice, chat: choice };
  }
  const object = expectObject(value, 'tool_choice');
  const type = expectString(object.type, 'tool_choice.type');
  if (type === 'function' || type === 'custom') {
    collectUnknownKeys(object, CHOICE_KEYS, 'tool_choice', RESPONSES_FIELDS, unmodeled);
    const name = expectString(object.name, 'tool_choice.name');
    const flat = object.namespace != null ? flattenNamespacedName(expectString(object.namespace, 'tool_choice.namespace'), name) : name;
    const known = tools.chat.some((tool) => (tool.type === 'custom' ? tool.custom.name : tool.function.name) === flat && tool.type === type);
    if (!known) throw invalidParam('tool_choice.name', `'${name}' is not one of the ${type} tools`);
    return { echo: object, chat: type === 'custom' ? { type, custom: { name: flat } } : { type, function: { name: flat } } };
  }
  if (type === 'allowed_tools') {
    const mode = expectOneOf(object.mode, 'tool_choice.mode', ['auto', 'required'] as const);
    unmodeled.push(createUnmodeled(RESPONSES_FIELDS, 'tool_choice[type=allowed_tools]', 'tool_choice', object));
    return { echo: object, chat: mode };
  }
  const key = `tool_choice[type=${type}]`;
  unmodeled.push(createUnmodeled(RESPONSES_FIELDS, Object.hasOwn(RESPONSES_FIELDS, key) ? key : 'tool_choice[type=(other)]', 'tool_choice', object));
  return { echo: object, chat: undefined };
}
const CHOICE_KEYS = new Set(['type', 'name', 'namespace']);
