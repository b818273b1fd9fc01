// Anthropic `tools` and `tool_choice` -> canonical function tools and tool choice. Custom tools map;
// Anthropic's server and Anthropic-defined tools are recorded (dropped on bridged routes), and refused
// there when tool_choice requires one, since the answer would then quietly not use it.
import type { ChatRequest, FunctionTool, ToolChoice } from '../../protocol/chat-types.ts';
import { describeValue, isJsonObject } from '../../protocol/check-json-value.ts';
import { invalid } from './decode-messages-blocks.ts';
import { TOOL_FIELDS, toolKind } from './messages-field-table.ts';
import type { UnmodeledFields } from './unmodeled-fields.ts';

const CUSTOM: ReadonlySet<string> = new Set(['type', 'name', 'description', 'input_schema', 'strict', 'cache_control']);
const CUSTOM_ROWS = {
  defer_loading: TOOL_FIELDS['custom.defer_loading'],
  input_examples: TOOL_FIELDS['custom.input_examples'],
  eager_input_streaming: TOOL_FIELDS['custom.eager_input_streaming'],
  allowed_callers: TOOL_FIELDS['custom.allowed_callers'],
};
const TOOL_CHOICE: ReadonlySet<string> = new Set(['type', 'name', 'disable_parallel_tool_use']);

export interface DecodedTools {
  tools: FunctionTool[];
  /** Each tool only Anthropic can offer: its name (when it has one) and its dotted path. */
  anthropicOnly: Array<{ name: unknown; param: string }>;
}

export function decodeMessagesTools(value: unknown, unmodeled: UnmodeledFields): DecodedTools {
  const decoded: DecodedTools = { tools: [], anthropicOnly: [] };
  if (value === undefined) return decoded;
  if (!Array.isArray(value)) throw invalid('tools', `expected an array, got ${describeValue(value)}`);
  value.forEach((tool, i) => {
    const param = `tools.${i}`;
    if (!isJsonObject(tool)) throw invalid(param, `expected an object, got ${describeValue(tool)}`);
    const type = tool.type ?? undefined;
    if (type === undefined || type === 'custom') {
      decoded.tools.push(decodeCustomTool(tool, param, unmodeled));
      return;
    }
    if (typeof type !== 'string') throw invalid(`${param}.type`, `expected a string, got ${describeValue(type)}`);
    unmodeled.add(param, TOOL_FIELDS[toolKind(type)], tool);
    decoded.anthropicOnly.push({ name: tool.name, param });
  });
  return decoded;
}

function decodeCustomTool(tool: Record<string, unknown>, param: string, unmodeled: UnmodeledFields): FunctionTool {
  if (typeof tool.name !== 'string' || tool.name === '') throw invalid(`${param}.name`, 'expected a non-empty string');
  if (!isJsonObject(tool.input_schema)) throw invalid(`${param}.input_schema`, 'Field required (a JSON Schema object)');
  const description = tool.description ?? undefined;
  if (description !== undefined && typeof description !== 'string') throw invalid(`${param}.description`, 'expected a string');
  const strict = tool.strict ?? undefined;
  if (strict !== undefined && typeof strict !== 'boolean') throw invalid(`${param}.strict`, 'expected a boolean');
  unmodeled.others(tool, param, CUSTOM, CUSTOM_ROWS);
  const fn: FunctionTool['function'] = { name: tool.name, parameters: tool.input_schema };
  if (description !== undefined) fn.description = description;
  if (strict !== undefined) fn.strict = strict;
  return { type: 'function', function: fn };
}

/** tool_choice onto the request; a choice that requires a tool only Anthropic offers turns that tool's drop into a refusal. */
export function decodeMessagesToolChoice(value: unknown, request: ChatRequest, tools: DecodedTools, unmodeled: UnmodeledFields): void {
  if (!isJsonObject(value)) throw invalid('tool_choice', `expected an object, got ${describeValue(value)}`);
  let choice: ToolChoice;
  switch (value.type) {
    case 'auto':
      choice = 'auto';
      break;
    case 'any':
      choice = 'required';
      // Any tool will do while a client tool is left; with none, the bridged request could not call one.
      if (tools.tools.length === 0 && tools.anthropicOnly.length > 0) unmodeled.refuse(new Set(tools.anthropicOnly.map((t) => t.param)), TOOL_FIELDS['forced server tool']);
      break;
    case 'none':
      choice = 'none';
      break;
    case 'tool': {
      if (typeof value.name !== 'string' || value.name === '') throw invalid('tool_choice.name', 'expected a non-empty string');
      choice = { type: 'function', function: { name: value.name } };
      const name = value.name;
      const forced = tools.anthropicOnly.filter((t) => t.name === name).map((t) => t.param);
      if (forced.length > 0 && !tools.tools.some((t) => t.function.name === name)) unmodeled.refuse(new Set(forced), TOOL_FIELDS['forced server tool']);
      break;
    }
    default:
      throw invalid('tool_choice.type', `expected 'auto', 'any', 'tool' or 'none', got ${describeValue(value.type)}`);
  }
  request.tool_choice = choice;
  const disable = value.disable_parallel_tool_use ?? undefined;
  if (disable !== undefined && typeof disable !== 'boolean') throw invalid('tool_choice.disable_parallel_tool_use', 'expected a boolean');
  if (disable === true) request.parallel_tool_calls = false;
  unmodeled.others(value, 'tool_choice', TOOL_CHOICE);
}
