// The Responses request decoder: what maps onto the chat shape, and the exact param of every refusal.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../../src/core/errors.ts';
import { decodeResponsesRequest } from '../../../../src/gateway/ingress/openai-responses/decode-responses-request.ts';

function refuses(body: unknown, code: 'INVALID_ARG' | 'UNSUPPORTED', param: string, message?: RegExp): void {
  assert.throws(
    () => decodeResponsesRequest(body),
    (err: unknown) => {
      assert.ok(err instanceof HerdError, String(err));
      assert.equal(err.code, code, err.message);
      assert.equal(err.param, param, err.message);
      if (message) assert.match(err.message, message);
      return true;
    },
  );
}

describe('decodeResponsesRequest', () => {
  it('a string input is one user message; instructions a system message before it', () => {
    const { request, decoded } = decodeResponsesRequest({
      model: 'gpt-4.1',
      input: 'hi',
      instructions: 'Be brief.',
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      store: false,
    });
    assert.deepEqual(request, {
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 50,
    });
    assert.equal(decoded.echo.instructions, 'Be brief.');
    assert.equal(decoded.echo.max_output_tokens, 50);
  });

  it('message items with input_text, input_image and output_text parts; developer and assistant roles', () => {
    const { request } = decodeResponsesRequest({
      model: 'm',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'rules' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          ],
        },
        { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'a cat', annotations: [], logprobs: [] }] },
        { role: 'user', content: 'thanks' },
      ],
    });
    assert.deepEqual(request.messages, [
      { role: 'developer', content: [{ type: 'text', text: 'rules' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'a cat' }] },
      { role: 'user', content: 'thanks' },
    ]);
  });

  it('consecutive function_call items are one assistant turn; outputs are tool messages; replayed reasoning rides along', () => {
    const { request } = decodeResponsesRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'two cities' }], encrypted_content: 'opaque' },
        { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
        { type: 'function_call', call_id: 'c2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'c1', output: '21' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: '25' }] },
      ],
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
    });
    assert.deepEqual(request.messages.slice(1), [
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'two cities',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '21' },
      { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: '25' }] },
    ]);
    assert.deepEqual(request.tools, [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: true } }]);
    assert.deepEqual(request.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.equal(request.parallel_tool_calls, false);
  });

  it('text.format, verbosity and reasoning.effort map to chat; include, reasoning.summary and truncation: auto are dropped when bridged', () => {
    const { request, decoded } = decodeResponsesRequest({
      model: 'm',
      input: 'hi',
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
      reasoning: { effort: 'high', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      metadata: { team: 'a' },
      user: 'u1',
      stream: true,
    });
    assert.deepEqual(request.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } });
    assert.equal(request.verbosity, 'low');
    assert.equal(request.reasoning_effort, 'high');
    assert.equal(request.stream, true);
    assert.equal(request.user, 'u1');
    assert.deepEqual(decoded.echo.metadata, { team: 'a' });
    assert.equal(decoded.echo.truncation, 'auto');
    assert.deepEqual(
      request.unmodeled?.map((f) => [f.param, f.bridged]),
      [
        ['include', 'drop'],
        ['reasoning.summary', 'drop'],
        ['truncation', 'drop'],
      ],
    );
  });

  it('records what needs server-side state as refused when bridged, with the param named, instead of throwing', () => {
    const fates = (body: Record<string, unknown>) => decodeResponsesRequest({ model: 'm', input: 'hi', ...body }).request.unmodeled?.map((f) => [f.param, f.bridged, f.reason]);
    assert.deepEqual(fates({ previous_response_id: 'resp_1' })?.[0]?.slice(0, 2), ['previous_response_id', 'refuse']);
    assert.match(String(fates({ previous_response_id: 'resp_1' })?.[0]?.[2]), /no server-side state/);
    assert.deepEqual(fates({ conversation: 'conv_1' })?.[0]?.slice(0, 2), ['conversation', 'refuse']);
    assert.deepEqual(fates({ background: true })?.[0]?.slice(0, 2), ['background', 'refuse']);
    assert.deepEqual(fates({ prompt: { id: 'pmpt_1' } })?.[0]?.slice(0, 2), ['prompt', 'refuse']);
    assert.equal(fates({ background: false, store: false }), undefined);
    const items = decodeResponsesRequest({
      model: 'm',
      input: [
        { type: 'item_reference', id: 'msg_1' },
        {
          role: 'user',
          content: [
            { type: 'input_image', file_id: 'file_1' },
            { type: 'input_file', file_data: 'x' },
          ],
        },
      ],
    }).request;
    assert.deepEqual(
      items.unmodeled?.map((f) => [f.param, f.bridged]),
      [
        ['input.0', 'refuse'],
        ['input.1.content.0.file_id', 'refuse'],
        ['input.1.content.1', 'refuse'],
      ],
    );
    assert.deepEqual(items.messages, [{ role: 'user', content: [] }]);
  });

  it('a Codex request: client_metadata, namespace tools, hosted tools, unknown items and reasoning members are accepted', () => {
    const { request, decoded } = decodeResponsesRequest({
      model: 'gpt-5-codex',
      instructions: 'You are Codex.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
        { type: 'additional_tools', tools: [{ type: 'function', name: 'extra' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'look around' }], content: null, encrypted_content: 'gAAAA' },
        { type: 'function_call', call_id: 'c1', namespace: 'mcp_fs', name: 'list_dir', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'a.txt' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
        { type: 'compaction', encrypted_content: 'x' },
      ],
      tools: [
        { type: 'function', name: 'shell', parameters: { type: 'object' }, strict: false },
        {
          type: 'namespace',
          name: 'mcp_fs',
          description: 'files',
          tools: [{ type: 'function', name: 'list_dir', description: 'ls', parameters: { type: 'object' }, defer_loading: true }],
        },
        { type: 'web_search', external_web_access: false },
        { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto', context: 'all' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'thread-1',
      text: { verbosity: 'low' },
      client_metadata: { 'x-codex-turn': '1' },
    });
    assert.deepEqual(
      request.unmodeled?.map((f) => [f.param, f.bridged]),
      [
        ['include', 'drop'],
        ['client_metadata', 'drop'],
        ['input.1', 'drop'],
        ['input.2.encrypted_content', 'drop'],
        ['input.5', 'drop'],
        ['input.6', 'drop'],
        ['reasoning.summary', 'drop'],
        ['reasoning.context', 'drop'],
        ['tools.1.tools.0.defer_loading', 'drop'],
        ['tools.2', 'drop'],
      ],
    );
    assert.equal(request.reasoning_effort, 'medium');
    assert.equal(request.prompt_cache_key, 'thread-1');
    assert.equal(request.verbosity, 'low');
    assert.deepEqual(
      request.tools?.map((t) => (t.type === 'function' ? t.function.name : t.custom.name)),
      ['shell', 'mcp_fs__list_dir', 'apply_patch'],
    );
    assert.deepEqual(request.messages[2], {
      role: 'assistant',
      content: null,
      reasoning_content: 'look around',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'mcp_fs__list_dir', arguments: '{}' } }],
    });
    assert.deepEqual([...(decoded.namespaced ?? [])], [['mcp_fs__list_dir', { namespace: 'mcp_fs', name: 'list_dir' }]]);
    // The response echoes the tools as the client declared them.
    assert.equal((decoded.echo.tools[1] as { type: string }).type, 'namespace');
    assert.equal((decoded.echo.tools[2] as { type: string }).type, 'web_search');
  });

  it('a tool_choice requiring a hosted tool is refused when bridged; allowed_tools keeps its mode', () => {
    const hosted = decodeResponsesRequest({ model: 'm', input: 'hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }).request;
    assert.deepEqual(
      hosted.unmodeled?.map((f) => [f.param, f.bridged]),
      [
        ['tools.0', 'drop'],
        ['tool_choice', 'refuse'],
      ],
    );
    const allowed = decodeResponsesRequest({
      model: 'm',
      input: 'hi',
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'f' }] },
    }).request;
    assert.equal(allowed.tool_choice, 'required');
    assert.deepEqual(
      allowed.unmodeled?.map((f) => f.param),
      ['tool_choice'],
    );
  });

  it('refuses bad values of what it models, with the Responses param', () => {
    refuses({ model: 'm', input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] }, 'INVALID_ARG', 'input[0].call_id', /does not answer/);
    refuses({ model: 'm', input: 'hi', max_output_tokens: 0 }, 'INVALID_ARG', 'max_output_tokens');
    refuses({ model: 'm', input: 'hi', temperature: 3 }, 'INVALID_ARG', 'temperature');
    refuses({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } }, 'INVALID_ARG', 'tool_choice.name');
    refuses({ model: 'm' }, 'INVALID_ARG', 'input');
    refuses({ model: 'm', input: [] }, 'INVALID_ARG', 'input');
    refuses({ model: 'm', input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] }, 'INVALID_ARG', 'input[0].content[0].type');
    refuses(
      {
        model: 'm',
        input: 'hi',
        tools: [
          { type: 'namespace', name: 'a', tools: [{ type: 'function', name: 'b' }] },
          { type: 'function', name: 'a__b' },
        ],
      },
      'INVALID_ARG',
      'tools[1].name',
      /duplicate/,
    );
  });
});
