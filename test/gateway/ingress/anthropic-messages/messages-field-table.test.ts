// Walks the Anthropic Messages field table: every row has a sample request, and the decoder does what the
// row says (mapped members land in the canonical request, dropped and refused ones in `unmodeled` with the
// row's reason); docs/fields/anthropic-messages.md shows the same rows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatRequest } from '../../../../src/gateway/protocol/chat-types.ts';
import { decodeMessagesRequest } from '../../../../src/gateway/ingress/anthropic-messages/decode-messages-request.ts';
import { type FieldRow, MESSAGES_FIELD_TABLE } from '../../../../src/gateway/ingress/anthropic-messages/messages-field-table.ts';
import { describeFate, FATE_WORDS } from '../../../../src/gateway/protocol/dialect-field-table.ts';

type Body = Record<string, unknown>;
/** A request exercising one row: for mapped rows, `carried` checks where it landed; otherwise `param` is where it is recorded. */
interface Sample {
  body: Body;
  param?: string;
  carried?: (request: ChatRequest) => void;
}

const base = { model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
const top = (extra: Body, param?: string, carried?: Sample['carried']): Sample => ({ body: { ...base, ...extra }, ...(param ? { param } : {}), ...(carried ? { carried } : {}) });
const user = (block: Body, carried?: Sample['carried']): Sample => ({
  body: { ...base, messages: [{ role: 'user', content: [block] }] },
  param: 'messages.0.content.0',
  ...(carried ? { carried } : {}),
});
const assistant = (block: Body, carried?: Sample['carried']): Sample => ({
  body: {
    ...base,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [block] },
    ],
  },
  param: 'messages.1.content.0',
  ...(carried ? { carried } : {}),
});
const inToolResult = (block: Body): Sample => ({
  body: { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [block] }] }] },
  param: 'messages.0.content.0.content.0',
});
const tool = (extra: Body, param = 'tools.0', carried?: Sample['carried']): Sample => ({
  body: { ...base, tools: [{ name: 't', input_schema: { type: 'object' }, ...extra }] },
  param,
  ...(carried ? { carried } : {}),
});
const serverTool = (type: string): Sample => ({ body: { ...base, tools: [{ type, name: type.replace(/_\d{8}$/, '') }] }, param: 'tools.0' });
const text = (t: string) => ({ type: 'text', text: t });
const fn = (r: ChatRequest) => (r.tools?.[0]?.type === 'function' ? r.tools[0].function : undefined);

const REQUEST: Record<string, Sample> = {
  model: top({}, undefined, (r) => assert.equal(r.model, 'claude-x')),
  messages: top({}, undefined, (r) => assert.deepEqual(r.messages, [{ role: 'user', content: 'hi' }])),
  max_tokens: top({ max_tokens: 0 }, undefined, (r) => assert.equal(r.max_tokens, 0)),
  system: top({ system: 'S' }, undefined, (r) => assert.deepEqual(r.messages[0], { role: 'system', content: 'S' })),
  stop_sequences: top({ stop_sequences: ['E'] }, undefined, (r) => assert.deepEqual(r.stop, ['E'])),
  stream: top({ stream: true }, undefined, (r) => assert.equal(r.stream, true)),
  temperature: top({ temperature: 0.5 }, undefined, (r) => assert.equal(r.temperature, 0.5)),
  top_p: top({ top_p: 0.5 }, undefined, (r) => assert.equal(r.top_p, 0.5)),
  top_k: top({ top_k: 5 }, undefined, (r) => assert.equal(r.top_k, 5)),
  tools: tool({}, undefined, (r) => assert.equal(fn(r)?.name, 't')),
  'tool_choice.type': top({ tool_choice: { type: 'any' } }, undefined, (r) => assert.equal(r.tool_choice, 'required')),
  'tool_choice.name': top({ tools: [{ name: 't', input_schema: {} }], tool_choice: { type: 'tool', name: 't' } }, undefined, (r) =>
    assert.deepEqual(r.tool_choice, { type: 'function', function: { name: 't' } }),
  ),
  'tool_choice.disable_parallel_tool_use': top({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } }, undefined, (r) => assert.equal(r.parallel_tool_calls, false)),
  'thinking.type': top({ thinking: { type: 'adaptive' } }, undefined, (r) => assert.deepEqual(r.thinking, { type: 'adaptive' })),
  'thinking.budget_tokens': top({ thinking: { type: 'enabled', budget_tokens: 0 } }, undefined, (r) => assert.deepEqual(r.thinking, { type: 'enabled', budget_tokens: 0 })),
  'thinking.display': top({ thinking: { type: 'adaptive', display: 'omitted' } }, undefined, (r) => assert.deepEqual(r.thinking, { type: 'adaptive', display: 'omitted' })),
  'metadata.user_id': top({ metadata: { user_id: 'u' } }, undefined, (r) => assert.equal(r.user, 'u')),
  'output_config.effort': top({ output_config: { effort: 'high' } }, undefined, (r) => assert.equal(r.reasoning_effort, 'high')),
  'output_config.format': top({ output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } }, undefined, (r) =>
    assert.deepEqual(r.response_format, { type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' } } }),
  ),
  output_format: top({ output_format: { type: 'json_schema', schema: { type: 'object' } } }, undefined, (r) => assert.equal(r.response_format?.type, 'json_schema')),
  cache_control: top({ cache_control: { type: 'ephemeral', ttl: '1h' } }, undefined, (r) => assert.deepEqual(r.cache_control, { type: 'ephemeral', ttl: '1h' })),
  'output_config.task_budget': top({ output_config: { task_budget: { type: 'tokens', total: 1000 } } }, 'output_config.task_budget'),
  'metadata.*': top({ metadata: { user_id: 'u', tier: 'gold' } }, 'metadata.tier'),
  '*': top({ frobnicate: { deep: true } }, 'frobnicate'),
};
// Top-level settings only Anthropic has: each recorded under its own name.
for (const [name, row] of Object.entries(MESSAGES_FIELD_TABLE['Request fields'])) {
  if (row.bridged !== 'mapped' && /^[a-z_]+$/.test(name)) REQUEST[name] = top({ [name]: { some: 'value' } }, name);
}

const MESSAGE: Record<string, Sample> = {
  'role: user': top({}, undefined, (r) => assert.equal(r.messages[0]?.role, 'user')),
  'role: assistant': top(
    {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
    },
    undefined,
    (r) => assert.deepEqual(r.messages[1], { role: 'assistant', content: 'b' }),
  ),
  'role: system': top(
    {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'system', content: 'b' },
        { role: 'user', content: 'c' },
      ],
    },
    undefined,
    (r) => assert.deepEqual(r.messages[1], { role: 'system', content: 'b' }),
  ),
  content: top({ messages: [{ role: 'user', content: [text('a')] }] }, undefined, (r) => assert.deepEqual(r.messages[0], { role: 'user', content: [text('a')] })),
};

const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0=' };
const userParts = (r: ChatRequest) => r.messages[0]?.content;
const BLOCKS: Record<string, Sample> = {
  text: user(text('a'), (r) => assert.deepEqual(userParts(r), [text('a')])),
  'image (base64)': user({ type: 'image', source: png }, (r) => assert.deepEqual(userParts(r), [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0=' } }])),
  'image (url)': user({ type: 'image', source: { type: 'url', url: 'https://x/cat.png' } }, (r) =>
    assert.deepEqual(userParts(r), [{ type: 'image_url', image_url: { url: 'https://x/cat.png' } }]),
  ),
  'image (file or other source)': user({ type: 'image', source: { type: 'file', file_id: 'file_1' } }),
  'document (text)': user({ type: 'document', title: 'T', source: { type: 'text', media_type: 'text/plain', data: 'body' } }, (r) =>
    assert.deepEqual(userParts(r), [text('T\n\nbody')]),
  ),
  'document (content)': user({ type: 'document', source: { type: 'content', content: [text('c'), { type: 'image', source: png }] } }, (r) =>
    assert.deepEqual(userParts(r), [text('c'), { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0=' } }]),
  ),
  'document (base64)': user({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }),
  'document (url)': user({ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } }),
  'document (file or other source)': user({ type: 'document', source: { type: 'file', file_id: 'file_1' } }),
  search_result: user({ type: 'search_result', title: 'T', source: 'https://x', content: [text('r')] }, (r) => assert.deepEqual(userParts(r), [text('T\nhttps://x\n\nr')])),
  thinking: assistant({ type: 'thinking', thinking: 'hm', signature: 's' }, (r) => assert.equal((r.messages[1] as { reasoning_content?: string }).reasoning_content, 'hm')),
  redacted_thinking: assistant({ type: 'redacted_thinking', data: 'enc' }),
  tool_use: assistant({ type: 'tool_use', id: 'toolu_1', name: 't', input: {} }, (r) => assert.equal((r.messages[1] as { tool_calls?: unknown[] }).tool_calls?.length, 1)),
  tool_result: user({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }, (r) =>
    assert.deepEqual(r.messages[0], { role: 'tool', tool_call_id: 'toolu_1', content: 'ok' }),
  ),
  compaction: assistant({ type: 'compaction', content: 'summary' }, (r) => assert.deepEqual(r.messages[1], { role: 'assistant', content: 'summary' })),
  'compaction (no summary)': assistant({ type: 'compaction', encrypted_content: 'enc' }),
  server_tool_use: assistant({ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } }),
  web_search_tool_result: assistant({ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] }),
  web_fetch_tool_result: assistant({ type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_1', content: {} }),
  code_execution_tool_result: assistant({ type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: {} }),
  bash_code_execution_tool_result: assistant({ type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: {} }),
  text_editor_code_execution_tool_result: assistant({ type: 'text_editor_code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: {} }),
  tool_search_tool_result: assistant({ type: 'tool_search_tool_result', tool_use_id: 'srvtoolu_1', content: {} }),
  advisor_tool_result: assistant({ type: 'advisor_tool_result', tool_use_id: 'srvtoolu_1', content: {} }),
  mcp_tool_use: assistant({ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'n', server_name: 's', input: {} }),
  mcp_tool_result: assistant({ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', content: [text('r')] }),
  container_upload: user({ type: 'container_upload', file_id: 'file_1' }),
  tool_reference: inToolResult({ type: 'tool_reference', tool_name: 't' }),
  tool_addition: user({ type: 'tool_addition', tool: { type: 'tool_reference', tool_name: 't' } }),
  tool_removal: user({ type: 'tool_removal', tool: { type: 'tool_reference', tool_name: 't' } }),
  fallback: assistant({ type: 'fallback', from: { model: 'a' }, to: { model: 'b' } }),
  'misplaced block': assistant({ type: 'image', source: png }),
  'other block type': user({ type: 'hologram', beam: 1 }),
  'block.cache_control': user({ ...text('a'), cache_control: { type: 'ephemeral' } }, (r) => assert.deepEqual(r.cache_control, { type: 'ephemeral' })),
  'text.citations': { ...assistant({ ...text('a'), citations: [{ type: 'char_location' }] }), param: 'messages.1.content.0.citations' },
  'document.citations': {
    ...user({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' }, citations: { enabled: true } }),
    param: 'messages.0.content.0.citations',
  },
  'search_result.citations': {
    ...user({ type: 'search_result', title: 'T', source: 's', content: [text('r')], citations: { enabled: true } }),
    param: 'messages.0.content.0.citations',
  },
  'tool_use.caller': { ...assistant({ type: 'tool_use', id: 'toolu_1', name: 't', input: {}, caller: { type: 'direct' } }), param: 'messages.1.content.0.caller' },
  'tool_result.is_error': { ...user({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'boom', is_error: true }), param: 'messages.0.content.0.is_error' },
};

const TOOLS: Record<string, Sample> = {
  custom: tool({ type: 'custom' }, undefined, (r) => assert.equal(r.tools?.[0]?.type, 'function')),
  'custom.name': tool({}, undefined, (r) => assert.equal(fn(r)?.name, 't')),
  'custom.description': tool({ description: 'd' }, undefined, (r) => assert.equal(fn(r)?.description, 'd')),
  'custom.input_schema': tool({}, undefined, (r) => assert.deepEqual(fn(r)?.parameters, { type: 'object' })),
  'custom.strict': tool({ strict: true }, undefined, (r) => assert.equal(fn(r)?.strict, true)),
  'custom.cache_control': tool({ cache_control: { type: 'ephemeral' } }, undefined, (r) => assert.deepEqual(r.cache_control, { type: 'ephemeral' })),
  'custom.defer_loading': tool({ defer_loading: true }, 'tools.0.defer_loading'),
  'custom.input_examples': tool({ input_examples: [{ a: 1 }] }, 'tools.0.input_examples'),
  'custom.eager_input_streaming': tool({ eager_input_streaming: true }, 'tools.0.eager_input_streaming'),
  'custom.allowed_callers': tool({ allowed_callers: ['direct'] }, 'tools.0.allowed_callers'),
  web_search: serverTool('web_search_20250305'),
  web_fetch: serverTool('web_fetch_20250910'),
  code_execution: serverTool('code_execution_20250825'),
  tool_search_tool_bm25: serverTool('tool_search_tool_bm25_20251119'),
  tool_search_tool_regex: serverTool('tool_search_tool_regex'),
  advisor: serverTool('advisor_20260301'),
  mcp_toolset: { body: { ...base, tools: [{ type: 'mcp_toolset', mcp_server_name: 's' }] }, param: 'tools.0' },
  bash: serverTool('bash_20250124'),
  text_editor: serverTool('text_editor_20250728'),
  computer: serverTool('computer_20250124'),
  computer_toolset: serverTool('computer_toolset_20260801'),
  browser_toolset: serverTool('browser_toolset_20260801'),
  memory: serverTool('memory_20250818'),
  'other tool type': serverTool('teleporter_20300101'),
  'forced server tool': {
    body: {
      ...base,
      tools: [
        { name: 't', input_schema: {} },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      tool_choice: { type: 'tool', name: 'web_search' },
    },
    param: 'tools.1',
  },
};

const SAMPLES: Record<keyof typeof MESSAGES_FIELD_TABLE, Record<string, Sample>> = {
  'Request fields': REQUEST,
  'Message roles': MESSAGE,
  'Content blocks': BLOCKS,
  Tools: TOOLS,
};

function check(name: string, row: FieldRow, sample: Sample): void {
  const request = decodeMessagesRequest(sample.body);
  if (row.bridged === 'mapped') {
    assert.ok(sample.carried, `${name}: a mapped row's sample says where it lands`);
    sample.carried(request);
    assert.deepEqual(request.unmodeled ?? [], [], `${name}: a mapped member is not recorded as unmodeled`);
    return;
  }
  const found = request.unmodeled?.find((f) => f.param === sample.param);
  assert.ok(found, `${name}: expected '${sample.param}' in unmodeled, got ${JSON.stringify(request.unmodeled?.map((f) => f.param))}`);
  assert.equal(found.bridged, row.bridged, name);
  assert.equal(found.reason, describeFate(row), name);
}

describe('the Anthropic Messages field table', () => {
  for (const [section, rows] of Object.entries(MESSAGES_FIELD_TABLE)) {
    const samples = SAMPLES[section as keyof typeof MESSAGES_FIELD_TABLE];
    it(`${section}: every row has a sample, and the decoder does what the row says`, () => {
      assert.deepEqual(Object.keys(samples).sort(), Object.keys(rows).sort(), 'a row without a sample (or a sample without a row)');
      for (const [name, row] of Object.entries(rows)) check(name, row, samples[name] as Sample);
    });
  }

  it('docs/fields/anthropic-messages.md shows the same rows, section by section', () => {
    const doc = readFileSync(new URL('../../../../docs/fields/anthropic-messages.md', import.meta.url), 'utf8');
    const shown = new Map<string, string[]>();
    let section = '';
    for (const line of doc.split('\n')) {
      if (line.startsWith('## ')) section = line.slice(3).trim();
      else if (line.startsWith('| `')) shown.set(section, [...(shown.get(section) ?? []), line]);
    }
    for (const [name, rows] of Object.entries(MESSAGES_FIELD_TABLE)) {
      const expected = Object.entries(rows).map(([field, row]) => `| \`${field}\` | ${FATE_WORDS[row.bridged]} | ${describeFate(row)} |`);
      assert.deepEqual(shown.get(name), expected, `section '${name}' of docs/fields/anthropic-messages.md differs from messages-field-table.ts`);
    }
    assert.deepEqual([...shown.keys()], Object.keys(MESSAGES_FIELD_TABLE));
  });
});
