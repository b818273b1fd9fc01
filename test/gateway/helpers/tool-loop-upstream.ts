// A local upstream for real clients (Claude Code, Codex, SDKs): speaks Anthropic Messages, OpenAI chat and
// Responses, JSON or streamed; calls a tool the request offers until a tool result comes back, then answers text.
import type { ServerResponse } from 'node:http';
import { encodeSse, sendJson, type MockHandler, type RecordedRequest, type SseFrame } from './mock-upstream.ts';

export interface ToolLoopOptions {
  /**
   * Tool name → how to call it, the first offered tool named here is called: JSON arguments for a function tool,
   * a string for a custom (freeform) tool's input.
   */
  calls: Record<string, Record<string, unknown> | string>;
  /** The final answer, given the text of the last tool result in the conversation (undefined when none). */
  finalText: (toolResult: string | undefined) => string;
}

type Json = Record<string, unknown>;
type Turn = { kind: 'text'; text: string } | { kind: 'tool'; name: string; args: Record<string, unknown> } | { kind: 'custom'; name: string; input: string };

const USAGE = { input: 21, output: 7 };
const asArray = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** The text of a tool result's content however the dialect wrote it: a string, or parts with `text`. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (typeof part.text === 'string' ? part.text : typeof part.output === 'string' ? part.output : ''))
    .join('');
}

/** The tool names a request offers: function tools by name, namespaced ones (Codex) by their inner tools too. */
function offeredTools(tools: unknown): string[] {
  const names: string[] = [];
  for (const tool of asArray(tools)) {
    const fn = tool.function as Json | undefined;
    if (typeof fn?.name === 'string') names.push(fn.name);
    else if (typeof tool.name === 'string') names.push(tool.name);
    for (const inner of asArray(tool.tools)) if (typeof inner.name === 'string') names.push(inner.name);
  }
  return names;
}

/**
 * The last tool result anywhere in the conversation, per dialect (undefined when there is none): one round
 * trip per conversation, since clients may add turns after the result (Claude Code appends system reminders).
 */
function lastToolResult(url: string, body: Json): string | undefined {
  if (url.includes('/messages')) {
    const blocks = asArray(body.messages).flatMap((message) => asArray(message.content));
    const result = blocks.filter((block) => block.type === 'tool_result').at(-1);
    return result ? textOf(result.content) : undefined;
  }
  if (url.includes('/chat/completions')) {
    const result = asArray(body.messages)
      .filter((message) => message.role === 'tool')
      .at(-1);
    return result ? textOf(result.content) : undefined;
  }
  const result = asArray(body.input)
    .filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
    .at(-1);
  return result ? textOf(result.output) : undefined;
}

function decide(url: string, body: Json, options: ToolLoopOptions): Turn {
  const result = lastToolResult(url, body);
  if (result !== undefined) return { kind: 'text', text: options.finalText(result) };
  // Codex offers its tools in an `additional_tools` input item as well as (or instead of) `tools`.
  const offered = [...offeredTools(body.tools), ...asArray(body.input).flatMap((item) => (item.type === 'additional_tools' ? offeredTools(item.tools) : []))];
  const name = offered.find((tool) => tool in options.calls);
  if (!name) return { kind: 'text', text: options.finalText(undefined) };
  const call = options.calls[name];
  return typeof call === 'string' ? { kind: 'custom', name, input: call } : { kind: 'tool', name, args: call };
}

function sendFrames(res: ServerResponse, frames: SseFrame[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end(encodeSse(frames));
}

function anthropicAnswer(res: ServerResponse, model: string, turn: Turn, stream: boolean): void {
  // Messages has no freeform tools: a custom call goes out as a tool_use whose input holds the text.
  const input = turn.kind === 'tool' ? turn.args : turn.kind === 'custom' ? { input: turn.input } : {};
  const block = turn.kind === 'text' ? { type: 'text', text: turn.text } : { type: 'tool_use', id: 'toolu_herd_1', name: turn.name, input };
  const stop = turn.kind === 'text' ? 'end_turn' : 'tool_use';
  const usage = { input_tokens: USAGE.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: USAGE.output };
  const message = { id: 'msg_herd_1', type: 'message', role: 'assistant', model, content: [block], stop_reason: stop, stop_sequence: null, usage };
  if (!stream) {
    sendJson(res, 200, message);
    return;
  }
  const start = turn.kind === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
  const delta = turn.kind === 'text' ? { type: 'text_delta', text: turn.text } : { type: 'input_json_delta', partial_json: JSON.stringify(input) };
  const event = (name: string, data: Json): SseFrame => ({ event: name, data: { type: name, ...data } });
  sendFrames(res, [
    event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: start }),
    event('content_block_delta', { index: 0, delta }),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: USAGE.output } }),
    event('message_stop', {}),
  ]);
}

function chatAnswer(res: ServerResponse, model: string, turn: Turn, stream: boolean): void {
  const call =
    turn.kind === 'tool'
      ? { id: 'call_herd_1', type: 'function', function: { name: turn.name, arguments: JSON.stringify(turn.args) } }
      : turn.kind === 'custom'
        ? { id: 'call_herd_1', type: 'custom', custom: { name: turn.name, input: turn.input } }
        : undefined;
  const text = turn.kind === 'text' ? turn.text : '';
  const finish = call ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output };
  const base = { id: 'chatcmpl-herd', created: 1741569952, model };
  if (!stream) {
    const message = call ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: text };
    sendJson(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage });
    return;
  }
  const chunk = (delta: Json, finishReason: string | null = null): SseFrame => ({
    data: { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] },
  });
  sendFrames(res, [
    chunk({ role: 'assistant', content: call ? null : '' }),
    call ? chunk({ tool_calls: [{ index: 0, ...call }] }) : chunk({ content: text }),
    chunk({}, finish),
    { data: { ...base, object: 'chat.completion.chunk', choices: [], usage } },
    { data: '[DONE]' },
  ]);
}

function responsesItem(turn: Turn): Json {
  if (turn.kind === 'text') {
    return { type: 'message', id: 'msg_herd_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
  }
  if (turn.kind === 'custom') return { type: 'custom_tool_call', id: 'ctc_herd_1', call_id: 'call_herd_1', name: turn.name, input: turn.input, status: 'completed' };
  return { type: 'function_call', id: 'fc_herd_1', call_id: 'call_herd_1', name: turn.name, arguments: JSON.stringify(turn.args), status: 'completed' };
}

/** The events between an item's `added` and `done`: its text, arguments or freeform input, whole in one delta. */
function responsesItemEvents(turn: Turn, item: Json, event: (type: string, data: Json) => SseFrame): SseFrame[] {
  const at = { item_id: item.id, output_index: 0 };
  if (turn.kind === 'custom') {
    return [event('response.custom_tool_call_input.delta', { ...at, delta: turn.input }), event('response.custom_tool_call_input.done', { ...at, input: turn.input })];
  }
  if (turn.kind === 'tool') {
    return [
      event('response.function_call_arguments.delta', { ...at, delta: item.arguments }),
      event('response.function_call_arguments.done', { ...at, name: turn.name, arguments: item.arguments }),
    ];
  }
  const part = { type: 'output_text', text: '', annotations: [] };
  const text = { ...at, content_index: 0 };
  return [
    event('response.content_part.added', { ...text, part }),
    event('response.output_text.delta', { ...text, delta: turn.text, logprobs: [] }),
    event('response.output_text.done', { ...text, text: turn.text, logprobs: [] }),
    event('response.content_part.done', { ...text, part: { ...part, text: turn.text } }),
  ];
}

function responsesAnswer(res: ServerResponse, model: string, turn: Turn, stream: boolean): void {
  const item = responsesItem(turn);
  const usage = {
    input_tokens: USAGE.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: USAGE.input + USAGE.output,
  };
  const response = (status: string, output: Json[], withUsage: boolean): Json => ({
    id: 'resp_herd_1',
    object: 'response',
    created_at: 1741569952,
    status,
    model,
    output,
    usage: withUsage ? usage : null,
  });
  if (!stream) {
    sendJson(res, 200, response('completed', [item], true));
    return;
  }
  let sequence = 0;
  const event = (type: string, data: Json): SseFrame => ({ event: type, data: { type, sequence_number: sequence++, ...data } });
  const opened = turn.kind === 'text' ? { ...item, status: 'in_progress', content: [] } : { ...item, status: 'in_progress', arguments: '', input: '' };
  sendFrames(res, [
    event('response.created', { response: response('in_progress', [], false) }),
    event('response.output_item.added', { output_index: 0, item: opened }),
    ...responsesItemEvents(turn, item, event),
    event('response.output_item.done', { output_index: 0, item }),
    event('response.completed', { response: response('completed', [item], true) }),
  ]);
}

/** The handler for startMockUpstream: one upstream serves every dialect, chosen by the request path. */
export function toolLoopHandler(options: ToolLoopOptions): MockHandler {
  return (req: RecordedRequest, res: ServerResponse) => {
    const body = (req.body ?? {}) as Json;
    const model = typeof body.model === 'string' ? body.model : 'unknown-model';
    const stream = body.stream === true;
    if (req.method !== 'POST') return sendJson(res, 404, { error: { message: `no ${req.method} ${req.url} here`, type: 'not_found' } });
    if (req.url.includes('/messages/count_tokens')) return sendJson(res, 200, { input_tokens: USAGE.input });
    const turn = decide(req.url, body, options);
    if (req.url.includes('/messages')) return anthropicAnswer(res, model, turn, stream);
    if (req.url.includes('/chat/completions')) return chatAnswer(res, model, turn, stream);
    if (req.url.includes('/responses')) return responsesAnswer(res, model, turn, stream);
    sendJson(res, 404, { error: { message: `no ${req.url} here`, type: 'not_found' } });
  };
}
