// Anthropic Messages request -> canonical ChatRequest: what maps, and the clear refusals for what cannot.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../../src/core/errors.ts';
import { decodeMessagesRequest } from '../../../../src/gateway/dialects/anthropic-messages/decode-messages-request.ts';

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

  it('refuses what cannot map, naming the field in Anthropic’s dotted form', () => {
    const messages = [{ role: 'user', content: 'x' }];
    refusal({ model: 'm', messages }, 'INVALID_ARG', 'max_tokens');
    refusal({ ...base, messages: [] }, 'INVALID_ARG', 'messages');
    refusal({ ...base, messages, frequency_penalty: 1 }, 'INVALID_ARG', 'frequency_penalty');
    refusal({ ...base, messages, container: 'c' }, 'UNSUPPORTED', 'container');
    refusal({ ...base, messages, temperature: 1.5 }, 'INVALID_ARG', 'temperature');
    refusal({ ...base, messages: [{ role: 'system', content: 'x' }] }, 'INVALID_ARG', 'messages.0.role');
    refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }, 'UNSUPPORTED', 'messages.0.content.0.type');
    refusal({ ...base, messages, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'UNSUPPORTED', 'tools.0.type');
    refusal({ ...base, messages, tools: [{ name: 't' }] }, 'INVALID_ARG', 'tools.0.input_schema');
    refusal(
      { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }] }] },
      'UNSUPPORTED',
      'messages.0.content.0.content.0.type',
    );
    refusal({ ...base, messages, output_config: { format: { type: 'json_schema', schema: {} } } }, 'UNSUPPORTED', 'output_config.format');
    refusal({ ...base, messages, thinking: { type: 'enabled' } }, 'INVALID_ARG', 'thinking.budget_tokens');
    refusal('not an object', 'INVALID_ARG', 'body');
  });
});
