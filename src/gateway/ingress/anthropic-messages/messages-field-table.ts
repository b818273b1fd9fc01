// The Anthropic Messages field table: for every request field, message role, content block type and tool
// kind, what a bridged route (a non-Anthropic upstream) does with it — mapped onto the canonical request,
// dropped (named in x-herd-dropped) or refused — and why. Pass-through routes send the client's body as is.
// The decoder reads its reasons from here; docs/fields/anthropic-messages.md shows the same rows (a test compares).

import type { FieldFate } from '../../protocol/dialect-field-table.ts';

/** A row of the table: the shared fate type every dialect's table uses (dialect-field-table.ts). */
export type FieldRow = FieldFate;

const mapped = (note: string): FieldRow => ({ bridged: 'mapped', note });
const dropped = (reason: string): FieldRow => ({ bridged: 'drop', reason });
const refused = (reason: string): FieldRow => ({ bridged: 'refuse', reason });

const SERVER_RESULT = dropped("the result of an Anthropic server tool in an earlier turn, which other upstreams cannot replay; the turn's text is carried");
const ANTHROPIC_SETTING = (what: string) => dropped(`${what}; other upstreams have no such setting`);
const SERVER_TOOL = (what: string) => dropped(`${what} runs on Anthropic's servers; other upstreams are not offered it`);
const DEFINED_TOOL = (what: string) => dropped(`${what} is defined by Anthropic (its schema is Anthropic's, not the request's); other upstreams are not offered it`);

/** Top-level fields, and the members of the settings objects, in Anthropic's dotted paths. */
export const REQUEST_FIELDS = {
  model: mapped('`model`'),
  messages: mapped('`messages` (see Message roles and Content blocks)'),
  max_tokens: mapped('`max_tokens` (required; 0 allowed, as Anthropic allows it to warm the cache)'),
  system: mapped('a system message ahead of the conversation'),
  stop_sequences: mapped('`stop`'),
  stream: mapped('`stream`'),
  temperature: mapped('`temperature` (0 to 1)'),
  top_p: mapped('`top_p`'),
  top_k: mapped('`top_k` (Anthropic upstreams only)'),
  tools: mapped('`tools` (see Tools)'),
  'tool_choice.type': mapped('`tool_choice`: auto, any as required, tool as the named function, none'),
  'tool_choice.name': mapped('the function `tool_choice` names'),
  'tool_choice.disable_parallel_tool_use': mapped('`parallel_tool_calls: false`'),
  'thinking.type': mapped('`thinking`: enabled, adaptive, between_tools, disabled'),
  'thinking.budget_tokens': mapped('`thinking.budget_tokens` (0 is kept, not dropped: it means off)'),
  'thinking.display': mapped('`thinking.display`'),
  'metadata.user_id': mapped('`user`'),
  'output_config.effort': mapped('`reasoning_effort`'),
  'output_config.format': mapped('`response_format` (json_schema)'),
  output_format: mapped('`response_format` (json_schema): the beta name of output_config.format'),
  cache_control: mapped('`cache_control` (the top-level one, else the last block-level one)'),
  'output_config.task_budget': ANTHROPIC_SETTING("a token budget Anthropic counts across an agent's turns"),
  service_tier: ANTHROPIC_SETTING("Anthropic's capacity tier"),
  speed: ANTHROPIC_SETTING("Anthropic's fast mode"),
  inference_geo: ANTHROPIC_SETTING('where Anthropic runs the request'),
  diagnostics: ANTHROPIC_SETTING("Anthropic's request diagnostics"),
  user_profile_id: ANTHROPIC_SETTING('an Anthropic user profile'),
  workspace_id: ANTHROPIC_SETTING('an Anthropic workspace'),
  fallbacks: ANTHROPIC_SETTING("Anthropic's own model fallbacks (Herd's route has its own)"),
  fallback_credit_token: ANTHROPIC_SETTING("Anthropic's own model fallbacks (Herd's route has its own)"),
  context_management: dropped("Anthropic's context editing; without it the upstream reads the whole history, which it can still answer"),
  container: dropped("the container of Anthropic's code execution tool, which other upstreams are not offered either"),
  mcp_servers: dropped("remote MCP servers Anthropic's API calls for the model; other upstreams answer without their tools"),
  'metadata.*': dropped('metadata only Anthropic reads'),
  '*': dropped('a member Herd does not model (any other, at any level); Anthropic upstreams get it as sent'),
} as const satisfies Record<string, FieldRow>;

/** messages[].role and the members of a message. */
export const MESSAGE_FIELDS = {
  'role: user': mapped('a user message; its tool_result blocks become tool messages ahead of it'),
  'role: assistant': mapped('an assistant message (text, tool calls, thinking)'),
  'role: system': mapped('a system message in place (Gemini: a user turn in place, as it has no system role there)'),
  content: mapped('the message content (a string, or blocks: see Content blocks)'),
} as const satisfies Record<string, FieldRow>;

/** Content blocks by type (and source, where the source decides), and block members with a fate of their own. */
export const BLOCK_FIELDS = {
  text: mapped('a text part'),
  'image (base64)': mapped('an `image_url` part (a data URL); inside a tool_result, in a user message right after the tool results'),
  'image (url)': mapped('an `image_url` part; inside a tool_result, in a user message right after the tool results'),
  'image (file or other source)': refused('a Files API file only Anthropic can read; without it the answer would silently ignore the image'),
  'document (text)': mapped('a text part: title, context, then the text'),
  'document (content)': mapped('text and `image_url` parts: title, context, then the content'),
  'document (base64)': refused('a PDF the canonical request cannot carry; without it the answer would silently ignore the document'),
  'document (url)': refused('a PDF the canonical request cannot carry; without it the answer would silently ignore the document'),
  'document (file or other source)': refused('a Files API file only Anthropic can read; without it the answer would silently ignore the document'),
  search_result: mapped('a text part: title, source, then the content'),
  thinking: mapped('`reasoning_content` and `reasoning_signature` on the assistant message'),
  redacted_thinking: dropped('thinking encrypted for Anthropic alone'),
  tool_use: mapped('a function tool call'),
  tool_result: mapped('a tool message (text); its images and documents follow in a user message'),
  compaction: mapped('a text part: the summary of the compacted history'),
  'compaction (no summary)': dropped('opaque compaction state only Anthropic can read'),
  server_tool_use: dropped('a call of an Anthropic server tool in an earlier turn, which other upstreams cannot replay'),
  web_search_tool_result: SERVER_RESULT,
  web_fetch_tool_result: SERVER_RESULT,
  code_execution_tool_result: SERVER_RESULT,
  bash_code_execution_tool_result: SERVER_RESULT,
  text_editor_code_execution_tool_result: SERVER_RESULT,
  tool_search_tool_result: SERVER_RESULT,
  advisor_tool_result: SERVER_RESULT,
  mcp_tool_use: dropped("a call of a remote MCP tool by Anthropic's MCP connector in an earlier turn"),
  mcp_tool_result: dropped("the result of a remote MCP tool run by Anthropic's MCP connector in an earlier turn"),
  container_upload: dropped("a file for Anthropic's code execution container"),
  tool_reference: dropped("a tool reference for Anthropic's tool search"),
  tool_addition: dropped("a change to the offered tools for Anthropic's tool search; other upstreams keep the request's tools"),
  tool_removal: dropped("a change to the offered tools for Anthropic's tool search; other upstreams keep the request's tools"),
  fallback: dropped('marks an Anthropic model fallback in an earlier answer (Anthropic ignores it too)'),
  'misplaced block': dropped('a block in a turn where the canonical message has no place for it (an image in an assistant turn, a tool_use in a user turn)'),
  'other block type': dropped('a block type Herd does not model'),
  'block.cache_control': mapped("the request's `cache_control` (the last breakpoint)"),
  'text.citations': dropped('citations of an earlier answer; the text is carried'),
  'document.citations': dropped('asks Anthropic to cite the document; other upstreams answer without citations'),
  'search_result.citations': dropped('asks Anthropic to cite the result; other upstreams answer without citations'),
  'tool_use.caller': dropped("who called the tool (Anthropic's programmatic tool calling)"),
  'tool_result.is_error': dropped("the canonical tool message has no error flag; the result's text carries the failure"),
} as const satisfies Record<string, FieldRow>;

/** Tools by kind (a server tool by its type without the date), and the members of a custom tool. */
export const TOOL_FIELDS = {
  custom: mapped('a function tool (no type, or type custom)'),
  'custom.name': mapped('`function.name`'),
  'custom.description': mapped('`function.description`'),
  'custom.input_schema': mapped('`function.parameters`'),
  'custom.strict': mapped('`function.strict`'),
  'custom.cache_control': mapped("the request's `cache_control` (the last breakpoint)"),
  'custom.defer_loading': dropped("loads the tool through Anthropic's tool search; other upstreams see every tool at once"),
  'custom.input_examples': dropped('examples only Anthropic shows the model'),
  'custom.eager_input_streaming': dropped("Anthropic's streaming of tool input without buffering"),
  'custom.allowed_callers': dropped("Anthropic's programmatic tool calling"),
  web_search: SERVER_TOOL('web search'),
  web_fetch: SERVER_TOOL('web fetch'),
  code_execution: SERVER_TOOL('code execution'),
  tool_search_tool_bm25: SERVER_TOOL('tool search'),
  tool_search_tool_regex: SERVER_TOOL('tool search'),
  advisor: SERVER_TOOL('the advisor'),
  mcp_toolset: SERVER_TOOL("an MCP toolset (Anthropic's MCP connector)"),
  bash: DEFINED_TOOL('the bash tool'),
  text_editor: DEFINED_TOOL('the text editor tool'),
  computer: DEFINED_TOOL('computer use'),
  computer_toolset: DEFINED_TOOL('the computer toolset'),
  browser_toolset: DEFINED_TOOL('the browser toolset'),
  memory: DEFINED_TOOL('the memory tool'),
  'other tool type': dropped('a tool type Herd does not model'),
  'forced server tool': refused('tool_choice requires a tool only Anthropic can offer; without it the answer would not use it'),
} as const satisfies Record<string, FieldRow>;

export const MESSAGES_FIELD_TABLE = {
  'Request fields': REQUEST_FIELDS,
  'Message roles': MESSAGE_FIELDS,
  'Content blocks': BLOCK_FIELDS,
  Tools: TOOL_FIELDS,
} as const satisfies Record<string, Record<string, FieldRow>>;

/** A server tool's kind: its type without the date (`web_search_20250305` → `web_search`). */
export function toolKind(type: string): keyof typeof TOOL_FIELDS {
  const kind = type.replace(/_\d{8}$/, '');
  return kind in TOOL_FIELDS && !kind.includes('.') && kind !== 'custom' && kind !== 'forced server tool' ? (kind as keyof typeof TOOL_FIELDS) : 'other tool type';
}
