// Anthropic Messages request -> canonical ChatRequest: what maps, what is recorded for bridged routes, and the refusals Anthropic itself makes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../../src/core/errors.ts';
import { decodeMessagesRequest } from '../../../../src/gateway/ingress/anthropic-messages/decode-messages-request.ts';

const base = { model: 'claude-sonnet-4-5', max_tokens: 100 };

function refusal(body: unknown, code: 'INVALID_ARG' | 'UNSUPPORTED', param: string, options = {}): void {
  assert.throws(
    () => decodeMessagesRequest(body, options),
    (err: unknown) => err instanceof HerdError && err.code === code && err.param === param && err.message.startsWith(`${param}: `),
  );
}

describe('decodeMessagesRequest', () => {
  it('maps system, sampling, stop sequences, metadata and the client headers', () => {
    const request = decodeMessagesRequest(
      {
        ...base,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0.2,
        top_p: 0.9,
        top_k: 10,
        stop_sequences: ['END'],
        metadata: { user_id: 'u-1' },
        stream: true,
      },
      { headers: { version: '2023-06-01', beta: 'b1' } },
    );
    assert.deepEqual(request, {
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 100,
      stream: true,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 10,
      stop: ['END'],
      user: 'u-1',
      anthropic_headers: { version: '2023-06-01', beta: 'b1' },
    });
  });

  it('takes system blocks and images (base64 and url); cache_control becomes the request-level one', () => {
    const request = decodeMessagesRequest({
      ...base,
      cache_control: { type: 'ephemeral' },
      system: [{ type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'text', text: 'What are these?', cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
    });
    assert.deepEqual(request.cache_control, { type: 'ephemeral' });
    assert.deepEqual(request.messages, [
      { role: 'system', content: [{ type: 'text', text: 'Rules.' }] },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'text', text: 'What are these?' },
        ],
      },
    ]);
  });

  it('turns the last block-level cache breakpoint into automatic caching, unless the request sets its own', () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }] }];
    const system = [{ type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral' } }];
    assert.deepEqual(decodeMessagesRequest({ ...base, system, messages }).cache_control, { type: 'ephemeral', ttl: '1h' });
    assert.deepEqual(decodeMessagesRequest({ ...base, system, messages, cache_control: { type: 'ephemeral' } }).cache_control, { type: 'ephemeral' });
    assert.equal(decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: 'x' }] }).cache_control, undefined);
    refusal({ ...base, messages, cache_control: { type: 'persistent' } }, 'INVALID_ARG', 'cache_control');
  });

  it('turns tool_use into tool_calls, tool_result into tool messages ahead of the turn, and keeps signed thinking', () => {
    const request = decodeMessagesRequest({
      ...base,
      tools: [{ name: 'get_weather', description: 'By city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Use the tool.', signature: 'sig' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Sunny' }], is_error: false },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    });
    assert.deepEqual(request.messages, [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        reasoning_content: 'Use the tool.',
        reasoning_signature: 'sig',
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: 'Sunny' }] },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    assert.deepEqual(request.tools, [
      { type: 'function', function: { name: 'get_weather', description: 'By city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ]);
    assert.deepEqual(request.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.equal(request.parallel_tool_calls, false);
    assert.deepEqual(request.thinking, { type: 'enabled', budget_tokens: 2048 });
  });

  it('maps tool_choice any/auto/none and output_config.effort; takes adaptive thinking', () => {
    const choice = (type: string) => decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: 'x' }], tool_choice: { type } }).tool_choice;
    assert.deepEqual([choice('any'), choice('auto'), choice('none')], ['required', 'auto', 'none']);
    const request = decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: 'x' }], output_config: { effort: 'high' }, thinking: { type: 'adaptive' } });
    assert.equal(request.reasoning_effort, 'high');
    assert.deepEqual(request.thinking, { type: 'adaptive' });
  });

  it('count_tokens needs no max_tokens and refuses sampling settings', () => {
    const request = decodeMessagesRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { countOnly: true });
    assert.equal(request.max_tokens, undefined);
    refusal({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, 'INVALID_ARG', 'max_tokens', { countOnly: true });
  });

  it('still refuses what Anthropic itself refuses, naming the field in its dotted form', () => {
    const messages = [{ role: 'user', content: 'x' }];
    refusal({ model: 'm', messages }, 'INVALID_ARG', 'max_tokens');
    refusal({ ...base, max_tokens: -1, messages }, 'INVALID_ARG', 'max_tokens');
    refusal({ ...base, messages: [] }, 'INVALID_ARG', 'messages');
    refusal({ ...base, messages, temperature: 1.5 }, 'INVALID_ARG', 'temperature');
    refusal({ ...base, messages: [{ role: 'tool', content: 'x' }] }, 'INVALID_ARG', 'messages.0.role');
    refusal({ ...base, messages: [{ role: 'user', content: [{ text: 'no type' }] }] }, 'INVALID_ARG', 'messages.0.content.0');
    refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64' } }] }] }, 'INVALID_ARG', 'messages.0.content.0.source');
    refusal({ ...base, messages, tools: [{ name: 't' }] }, 'INVALID_ARG', 'tools.0.input_schema');
    refusal({ ...base, messages, tools: [{ type: 7, name: 't' }] }, 'INVALID_ARG', 'tools.0.type');
    refusal({ ...base, messages, tool_choice: { type: 'maybe' } }, 'INVALID_ARG', 'tool_choice.type');
    refusal({ ...base, messages, output_config: { format: { type: 'xml' } } }, 'INVALID_ARG', 'output_config.format.type');
    refusal({ ...base, messages, thinking: { type: 'enabled' } }, 'INVALID_ARG', 'thinking.budget_tokens');
    refusal({ ...base, messages, thinking: { type: 'sometimes' } }, 'INVALID_ARG', 'thinking.type');
    refusal('not an object', 'INVALID_ARG', 'body');
  });

  it('takes system turns anywhere in messages, as system messages in place', () => {
    const request = decodeMessagesRequest({
      ...base,
      system: 'Top.',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Mid.' },
            { type: 'text', text: 'More.' },
          ],
        },
        { role: 'user', content: 'c' },
        { role: 'system', content: 'Last.' },
      ],
    });
    assert.deepEqual(request.messages, [
      { role: 'system', content: 'Top.' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      {
        role: 'system',
        content: [
          { type: 'text', text: 'Mid.' },
          { type: 'text', text: 'More.' },
        ],
      },
      { role: 'user', content: 'c' },
      { role: 'system', content: 'Last.' },
    ]);
    assert.equal(request.unmodeled, undefined);
  });

  it('records unknown members at every level, by dotted path and as sent, instead of refusing them', () => {
    const extra = { kept: [1, 2] };
    const request = decodeMessagesRequest({
      ...base,
      client_metadata: extra,
      metadata: { user_id: 'u', session: 's' },
      system: [{ type: 'text', text: 'S', origin: 'sys' }],
      messages: [
        { role: 'user', id: 'm0', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', scope: 'global' }, lang: 'fr' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 't', input: {}, caller: { type: 'direct' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'r', note: 'n' }], status: 'ok' }] },
      ],
      tools: [{ name: 't', input_schema: { type: 'object' }, defer_loading: true, color: 'red' }],
      tool_choice: { type: 'auto', urgency: 'high' },
      thinking: { type: 'adaptive', depth: 3 },
      output_config: { effort: 'low', task_budget: { total: 9 }, tone: 'dry' },
      context_management: { edits: [] },
      nothing: null,
    });
    assert.deepEqual(Object.fromEntries((request.unmodeled ?? []).map((f) => [f.param, f.bridged])), {
      client_metadata: 'drop',
      'metadata.session': 'drop',
      'system.0.origin': 'drop',
      'messages.0.id': 'drop',
      'messages.0.content.0.lang': 'drop',
      'messages.0.content.0.cache_control.scope': 'drop',
      'messages.1.content.0.caller': 'drop',
      'messages.2.content.0.status': 'drop',
      'messages.2.content.0.content.0.note': 'drop',
      'tools.0.defer_loading': 'drop',
      'tools.0.color': 'drop',
      'tool_choice.urgency': 'drop',
      'thinking.depth': 'drop',
      'output_config.task_budget': 'drop',
      'output_config.tone': 'drop',
      context_management: 'drop',
    });
    assert.equal(request.unmodeled?.find((f) => f.param === 'client_metadata')?.value, extra, 'the value is the member as sent (it is part of the cache key)');
    assert.equal(request.user, 'u');
    assert.equal(request.reasoning_effort, 'low');
    assert.deepEqual(request.tools, [{ type: 'function', function: { name: 't', parameters: { type: 'object' } } }]);
  });

  it('maps every thinking setting, keeping budget_tokens 0 (off) rather than losing it', () => {
    const thinking = (value: unknown) => decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: 'x' }], thinking: value }).thinking;
    assert.deepEqual(thinking({ type: 'enabled', budget_tokens: 0 }), { type: 'enabled', budget_tokens: 0 });
    assert.deepEqual(thinking({ type: 'enabled', budget_tokens: 2048, display: 'summarized' }), { type: 'enabled', budget_tokens: 2048, display: 'summarized' });
    assert.deepEqual(thinking({ type: 'adaptive', display: 'omitted' }), { type: 'adaptive', display: 'omitted' });
    assert.deepEqual(thinking({ type: 'disabled' }), { type: 'disabled' });
    assert.deepEqual(thinking({ type: 'between_tools' }), { type: 'between_tools' });
  });

  it('keeps thinking in the history; redacted thinking and server tool blocks are recorded as dropped', () => {
    const request = decodeMessagesRequest({
      ...base,
      messages: [
        { role: 'user', content: 'Search.' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Plan.', signature: 'sig' },
            { type: 'redacted_thinking', data: 'enc' },
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'text', text: 'Found it.' },
          ],
        },
        { role: 'user', content: 'Thanks.' },
      ],
    });
    assert.deepEqual(request.messages[1], { role: 'assistant', content: 'Found it.', reasoning_content: 'Plan.', reasoning_signature: 'sig' });
    assert.deepEqual(
      request.unmodeled?.map((f) => [f.param, f.bridged]),
      [
        ['messages.1.content.1', 'drop'],
        ['messages.1.content.2', 'drop'],
        ['messages.1.content.3', 'drop'],
      ],
    );
  });

  it('puts a tool result’s images in a user message right after the tool messages; is_error true is recorded', () => {
    const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0=' };
    const request = decodeMessagesRequest({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: 'Screenshot:' },
                { type: 'image', source: png },
              ],
            },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'image', source: png }], is_error: true },
            { type: 'text', text: 'Compare them.' },
          ],
        },
      ],
    });
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0=' } };
    assert.deepEqual(request.messages, [
      { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: 'Screenshot:' }] },
      { role: 'tool', tool_call_id: 'toolu_2', content: '' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images from the result of tool call toolu_1:' },
          image,
          { type: 'text', text: 'Images from the result of tool call toolu_2:' },
          image,
          { type: 'text', text: 'Compare them.' },
        ],
      },
    ]);
    assert.deepEqual(
      request.unmodeled?.map((f) => f.param),
      ['messages.0.content.1.is_error'],
    );
  });

  it('drops server tools, but refuses them when tool_choice requires one', () => {
    const messages = [{ role: 'user', content: 'x' }];
    const custom = { name: 'calc', input_schema: { type: 'object' } };
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 };
    const kinds = (body: Record<string, unknown>) => decodeMessagesRequest({ ...base, messages, ...body }).unmodeled?.map((f) => `${f.param}:${f.bridged}`);
    assert.deepEqual(kinds({ tools: [custom, search] }), ['tools.1:drop']);
    assert.deepEqual(kinds({ tools: [custom, search], tool_choice: { type: 'any' } }), ['tools.1:drop']);
    assert.deepEqual(kinds({ tools: [search], tool_choice: { type: 'any' } }), ['tools.0:refuse']);
    assert.deepEqual(kinds({ tools: [custom, search], tool_choice: { type: 'tool', name: 'web_search' } }), ['tools.1:refuse']);
    assert.deepEqual(kinds({ tools: [custom, search], tool_choice: { type: 'tool', name: 'calc' } }), ['tools.1:drop']);
    assert.deepEqual(
      kinds({
        tools: [
          { type: 'bash_20250124', name: 'bash' },
          { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
        ],
      }),
      ['tools.0:drop', 'tools.1:drop'],
    );
  });

  it('maps output_config.format (and the beta output_format) to a json_schema response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const expected = { type: 'json_schema', json_schema: { name: 'output', schema } };
    assert.deepEqual(
      decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: 'x' }], output_config: { format: { type: 'json_schema', schema } } }).response_format,
      expected,
    );
    assert.deepEqual(decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: 'x' }], output_format: { type: 'json_schema', schema } }).response_format, expected);
  });

  it('refuses documents and images it cannot carry only on bridged routes (recorded as refuse, not thrown)', () => {
    const request = decodeMessagesRequest({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            { type: 'image', source: { type: 'file', file_id: 'file_1' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Notes.' }, title: 'N', context: 'From the wiki' },
            { type: 'search_result', source: 'https://x', title: 'X', content: [{ type: 'text', text: 'Result.' }] },
            { type: 'container_upload', file_id: 'file_2' },
          ],
        },
      ],
    });
    assert.deepEqual(request.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'N\n\nFrom the wiki\n\nNotes.' },
          { type: 'text', text: 'X\nhttps://x\n\nResult.' },
        ],
      },
    ]);
    assert.deepEqual(
      request.unmodeled?.map((f) => `${f.param}:${f.bridged}`),
      ['messages.0.content.0:refuse', 'messages.0.content.1:refuse', 'messages.0.content.4:drop'],
    );
  });

  it('count_tokens ignores what it does not model', () => {
    const request = decodeMessagesRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], context_management: {}, mcp_servers: [] }, { countOnly: true });
    assert.deepEqual(
      request.unmodeled?.map((f) => f.param),
      ['context_management', 'mcp_servers'],
    );
  });
});
