// Canonical request -> Anthropic Messages request: the pure mapping, no HTTP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { convertAnthropicClientHeaders, convertAnthropicRequest } from '../../src/gateway/providers/anthropic/convert-anthropic-request.ts';

const options = { defaultMaxTokens: 4096, stream: false };
const convert = (request: Omit<ChatRequest, 'model'>) => convertAnthropicRequest({ model: 'claude', ...request }, 'claude-sonnet-4-5', options);

describe('convertAnthropicRequest', () => {
  it('lifts leading system and developer messages into `system` and defaults max_tokens', () => {
    const { body, warnings } = convert({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
      ],
    });
    assert.deepEqual(body, {
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Answer in French.' },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    assert.deepEqual(warnings, []);
  });

  it('refuses a system message after the conversation started, naming it', () => {
    assert.throws(
      () =>
        convert({
          messages: [
            { role: 'user', content: 'a' },
            { role: 'system', content: 'b' },
          ],
        }),
      (err: unknown) => err instanceof HerdError && err.code === 'UNSUPPORTED' && err.param === 'messages[1].role',
    );
  });

  it('turns tool calls and results into tool_use / tool_result blocks and merges same-role turns', () => {
    const { body } = convert({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'user', content: 'Be brief.' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
        { role: 'user', content: 'Thanks. Which is warmer?' },
      ],
    });
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather in Paris and Rome?' },
          { type: 'text', text: 'Be brief.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: '24C' },
          { type: 'text', text: 'Thanks. Which is warmer?' },
        ],
      },
    ]);
  });

  it('rejects tool arguments that are not a JSON object, with the param', () => {
    assert.throws(
      () =>
        convert({
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
          ],
        }),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && err.param === 'messages[1].tool_calls[0].function.arguments',
    );
  });

  it('maps tools and every tool_choice form', () => {
    const tools = [
      { type: 'function' as const, function: { name: 'weather', description: 'Get weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function' as const, function: { name: 'now' } },
    ];
    const base = { messages: [{ role: 'user' as const, content: 'x' }], tools };
    assert.deepEqual(convert(base).body.tools, [
      { name: 'weather', description: 'Get weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    assert.equal(convert(base).body.tool_choice, undefined);
    assert.deepEqual(convert({ ...base, tool_choice: 'auto' }).body.tool_choice, { type: 'auto' });
    assert.deepEqual(convert({ ...base, tool_choice: 'required' }).body.tool_choice, { type: 'any' });
    assert.deepEqual(convert({ ...base, tool_choice: 'none' }).body.tool_choice, { type: 'none' });
    assert.deepEqual(convert({ ...base, tool_choice: { type: 'function', function: { name: 'now' } } }).body.tool_choice, { type: 'tool', name: 'now' });
    assert.deepEqual(convert({ ...base, parallel_tool_calls: false }).body.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  });

  it('maps sampling, stop, user and max_completion_tokens; images inline and by URL', () => {
    const { body } = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop: 'END',
      user: 'user-42',
      max_tokens: 100,
      max_completion_tokens: 200,
    });
    assert.equal(body.max_tokens, 200);
    assert.deepEqual(body.stop_sequences, ['END']);
    assert.equal(body.temperature, 0.5);
    assert.equal(body.top_p, 0.9);
    assert.deepEqual(body.metadata, { user_id: 'user-42' });
    assert.deepEqual(body.messages[0].content.slice(1), [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('errors on what Anthropic cannot do and warns on what it ignores', () => {
    const messages = [{ role: 'user' as const, content: 'x', name: 'alice' }];
    assert.throws(
      () => convert({ messages, n: 2 }),
      (err: unknown) => err instanceof HerdError && err.param === 'n',
    );
    assert.throws(
      () => convert({ messages, temperature: 1.5 }),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && err.param === 'temperature',
    );
    assert.throws(
      () => convert({ messages, response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } } }),
      (err: unknown) => err instanceof HerdError && err.code === 'UNSUPPORTED' && err.param === 'response_format',
    );
    const { warnings } = convert({
      messages: [...messages, { role: 'assistant', content: 'ok', reasoning_content: 'thinking' }],
      presence_penalty: 0.5,
      seed: 1,
      response_format: { type: 'json_object' },
    });
    assert.deepEqual(
      warnings.map((w) => w.param),
      ['presence_penalty', 'seed', 'response_format', 'messages[0].name', 'messages[1].reasoning_content'],
    );
  });

  it('sends top_k, thinking and cache_control, replays signed thinking first in its turn, and takes the client headers', () => {
    const request: ChatRequest = {
      model: 'claude',
      top_k: 8,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      cache_control: { type: 'ephemeral', ttl: '1h' },
      anthropic_headers: { version: '2023-06-01', beta: 'interleaved-thinking-2025-05-14' },
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'Call it.',
          reasoning_signature: 'sig',
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 't1', content: 'Sunny' },
      ],
    };
    const { body, warnings } = convertAnthropicRequest(request, 'claude-sonnet-4-5', options);
    assert.equal(body.top_k, 8);
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.deepEqual(body.cache_control, { type: 'ephemeral', ttl: '1h' });
    assert.deepEqual(body.messages[1]?.content, [
      { type: 'thinking', thinking: 'Call it.', signature: 'sig' },
      { type: 'tool_use', id: 't1', name: 'w', input: {} },
    ]);
    assert.deepEqual(warnings, []);
    assert.deepEqual(convertAnthropicClientHeaders(request), { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' });
    assert.equal(convertAnthropicClientHeaders({ model: 'claude', messages: [] }), undefined);
  });
});
