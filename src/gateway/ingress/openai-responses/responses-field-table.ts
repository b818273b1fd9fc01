// The OpenAI Responses field table (docs/fields/openai-responses.md): what the bridge onto chat does with each
// member of a Responses request. On pass-through (an upstream with its own /responses) every member reaches the
// upstream as sent, whatever this table says.
import { type FieldTable, NOT_MODELLED, UNKNOWN_MEMBER } from '../../protocol/dialect-field-table.ts';

const same = { bridged: 'mapped', note: 'the same field in chat' } as const;
const CONTENT_UNSEEN = 'content the bridged model would not see, and the client could not tell';
const NO_STATE = 'Herd keeps no server-side state, and a bridged upstream cannot reach the state another upstream keeps';

/** Tools OpenAI runs (or whose calls its Responses API defines) with no counterpart in chat completions. */
export const HOSTED_TOOL_TYPES = [
  'web_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'web_search_2025_08_26',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer_use_preview',
  'computer_use',
  'computer',
  'mcp',
  'local_shell',
  'shell',
  'apply_patch',
  'tool_search',
  'programmatic_tool_calling',
] as const;

const hosted: FieldTable = Object.fromEntries(
  HOSTED_TOOL_TYPES.flatMap((type) => [
    [`tools[type=${type}]`, { bridged: 'drop', reason: `hosted tool ${type} runs only on OpenAI's Responses API` }],
    [`tool_choice[type=${type}]`, { bridged: 'refuse', reason: `the request requires the hosted tool ${type}, which runs only on OpenAI's Responses API` }],
  ]),
);

export const RESPONSES_FIELDS: FieldTable = {
  model: { bridged: 'mapped', note: "the route's model; the upstream's id replaces it" },
  input: { bridged: 'mapped', note: 'chat messages (items below)' },
  instructions: { bridged: 'mapped', note: 'a system message first; echoed' },
  tools: { bridged: 'mapped', note: 'chat tools (types below)' },
  tool_choice: { bridged: 'mapped', note: 'none, auto, required, or a function or custom tool by name' },
  parallel_tool_calls: same,
  max_output_tokens: { bridged: 'mapped', note: 'max_completion_tokens' },
  temperature: same,
  top_p: same,
  stream: { bridged: 'mapped', note: 'the Responses event stream, encoded from chat chunks' },
  'stream_options.include_obfuscation': { bridged: 'mapped', note: 'delivery only' },
  metadata: { bridged: 'mapped', note: 'echoed in the response; not sent upstream' },
  user: same,
  safety_identifier: same,
  prompt_cache_key: same,
  service_tier: same,
  'reasoning.effort': { bridged: 'mapped', note: 'reasoning_effort' },
  'reasoning.summary': { bridged: 'drop', reason: 'the bridge returns reasoning text where the upstream gives it, not summaries' },
  'reasoning.generate_summary': { bridged: 'drop', reason: 'the bridge returns reasoning text where the upstream gives it, not summaries' },
  'reasoning.context': { bridged: 'drop', reason: "reasoning context is kept by OpenAI's Responses API only" },
  'text.format': { bridged: 'mapped', note: 'response_format' },
  'text.verbosity': { bridged: 'mapped', note: 'verbosity' },
  store: { bridged: 'mapped', note: 'false: nothing is stored, as asked' },
  'store: true': { bridged: 'drop', reason: 'the bridge stores nothing: the answer says store: false and cannot be retrieved later' },
  truncation: { bridged: 'mapped', note: 'disabled: as chat behaves; echoed' },
  'truncation: auto': { bridged: 'drop', reason: 'chat does not truncate: a conversation over the context window is an error' },
  background: { bridged: 'mapped', note: 'false: answered in the request' },
  'background: true': { bridged: 'refuse', reason: 'the bridge answers in the request and keeps nothing to poll' },
  include: { bridged: 'drop', reason: 'the bridge produces none of the includable extras (encrypted reasoning, logprobs, tool sources)' },
  top_logprobs: { bridged: 'drop', reason: 'the bridge returns no logprobs' },
  max_tool_calls: { bridged: 'drop', reason: 'it limits hosted tool calls, and the bridge runs no hosted tools' },
  client_metadata: { bridged: 'drop', reason: "client telemetry for OpenAI's Responses API" },
  prompt_cache_retention: { bridged: 'drop', reason: "OpenAI's prompt-cache retention; other upstreams cache their own way" },
  context_management: { bridged: 'drop', reason: "compaction runs on OpenAI's Responses API only" },
  previous_response_id: { bridged: 'refuse', reason: `${NO_STATE}: send the whole conversation in 'input' (with store: false, as stateless clients do)` },
  conversation: { bridged: 'refuse', reason: `${NO_STATE}: send the whole conversation in 'input'` },
  prompt: { bridged: 'refuse', reason: "a stored prompt template the bridge cannot read: send the prompt in 'instructions' and 'input'" },
  'tools[type=function]': { bridged: 'mapped', note: 'a chat function tool' },
  'tools[type=custom]': { bridged: 'mapped', note: 'a chat custom tool (OpenAI-compatible upstreams only)' },
  'tools[type=namespace]': {
    bridged: 'mapped',
    note: 'its tools flattened to chat tools named <namespace>__<name>; calls come back with name and namespace restored',
  },
  'tools[type=(other)]': { bridged: 'drop', reason: 'a tool type Herd does not model' },
  ...hosted,
  'tool_choice[type=allowed_tools]': { bridged: 'drop', reason: "chat has no allowed-tools subset: the choice falls back to the subset's mode" },
  'tool_choice[type=(other)]': { bridged: 'refuse', reason: 'a tool choice the bridge cannot express' },
  'input[type=message]': { bridged: 'mapped', note: 'a chat message of the same role' },
  'input[type=function_call]': { bridged: 'mapped', note: "an assistant message's tool call (namespace: the flattened name)" },
  'input[type=function_call_output]': { bridged: 'mapped', note: 'a tool message' },
  'input[type=custom_tool_call]': { bridged: 'mapped', note: "an assistant message's custom tool call" },
  'input[type=custom_tool_call_output]': { bridged: 'mapped', note: 'a tool message' },
  'input[type=reasoning]': { bridged: 'mapped', note: "its summary or content text: the next assistant message's reasoning_content" },
  'input[type=reasoning].encrypted_content': { bridged: 'drop', reason: "OpenAI's encrypted reasoning state, readable by OpenAI's Responses API only" },
  'input[type=item_reference]': { bridged: 'refuse', reason: `${NO_STATE}: send the item itself` },
  'input[type=(other)]': { bridged: 'drop', reason: 'an item with no chat counterpart (hosted tool calls and their outputs, compaction, additional_tools)' },
  'input[].content[type=input_text]': { bridged: 'mapped', note: 'a text part' },
  'input[].content[type=input_image]': { bridged: 'mapped', note: 'an image_url part (detail original: high)' },
  'input[].content[type=input_image].file_id': { bridged: 'refuse', reason: `an uploaded file the bridge cannot read: ${CONTENT_UNSEEN}` },
  'input[].content[type=output_text]': { bridged: 'mapped', note: 'assistant text' },
  'input[].content[type=refusal]': { bridged: 'mapped', note: 'an assistant refusal' },
  'input[].content[type=input_file]': { bridged: 'refuse', reason: `a file: ${CONTENT_UNSEEN}` },
  'input[].content[type=input_audio]': { bridged: 'refuse', reason: `audio input: ${CONTENT_UNSEEN}` },
  'input[].content[type=(other)]': { bridged: 'refuse', reason: `a content part type Herd does not model: ${CONTENT_UNSEEN}` },
  'input[].output[type=(other)]': { bridged: 'refuse', reason: `a non-text tool output: ${CONTENT_UNSEEN}` },
  [UNKNOWN_MEMBER]: { bridged: 'drop', reason: NOT_MODELLED },
};
