// Custom (freeform) tools are OpenAI's alone: Anthropic, Gemini and Triton text models have no tool that
// takes free text, so a request carrying one is refused with a 400 naming the param, before anything
// is sent. These narrow the canonical tool shapes to the function ones those converters understand.
import { HerdError } from '../../core/errors.ts';
import type { ChatRequest, ChatTool, FunctionTool, FunctionToolCall, ToolCall, ToolChoice } from '../protocol/chat-types.ts';

function refuse(param: string, upstream: string): HerdError {
  return new HerdError('UNSUPPORTED', `${upstream} has no custom (freeform) tools: only OpenAI-compatible upstreams take them; use a function tool instead.`, {
    param,
  });
}

/** `tool` (at `param`, e.g. tools[2]) when it is a function tool; a custom one is refused. */
export function asFunctionTool(tool: ChatTool, param: string, upstream: string): FunctionTool {
  if (tool.type !== 'function') throw refuse(`${param}.type`, upstream);
  return tool;
}

/** `call` (at `param`, e.g. messages[3].tool_calls[0]) when it is a function call; a custom one is refused. */
export function asFunctionCall(call: ToolCall, param: string, upstream: string): FunctionToolCall {
  if (call.type !== 'function') throw refuse(`${param}.type`, upstream);
  return call;
}

/** The function a named tool choice forces; a custom one is refused. */
export function functionChoiceName(choice: Exclude<ToolChoice, string>, upstream: string): string {
  if (choice.type !== 'function') throw refuse('tool_choice.type', upstream);
  return choice.function.name;
}

/** Refuses every custom tool, custom tool choice and custom call in the history of `request`. */
export function refuseCustomTools(request: ChatRequest, upstream: string): void {
  for (const [i, tool] of (request.tools ?? []).entries()) asFunctionTool(tool, `tools[${i}]`, upstream);
  if (request.tool_choice !== undefined && typeof request.tool_choice !== 'string') functionChoiceName(request.tool_choice, upstream);
  for (const [i, message] of request.messages.entries()) {
    if (message.role !== 'assistant') continue;
    for (const [j, call] of (message.tool_calls ?? []).entries()) asFunctionCall(call, `messages[${i}].tool_calls[${j}]`, upstream);
  }
}
