// Request validation: what is accepted as-is, and the exact `param` of every rejection.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../../src/core/errors.ts';
import { validateChatRequest } from '../../../../src/gateway/ingress/openai-chat/validate-chat-request.ts';

function rejects(body: unknown, param: string, message?: RegExp): void {
  assert.throws(
    () => validateChatRequest(body),
    (err: unknown) => {
      assert.ok(err instanceof HerdError, String(err));
      assert.equal(err.code, 'INVALID_ARG');
      assert.equal(err.param, param, err.message);
      if (message) assert.match(err.message, message);
      return true;
    },
  );
}

const user = { role: 'user', content: 'hi' };

describe('validateChatRequest', () => {
  it('accepts a full request and returns it typed, dropping JSON nulls', () => {
    const body = {
      model: 'gpt-4.1',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } },
          ],
          name: 'ann',
        },
        // What the openai SDK hands back as completion.choices[0].message, pushed straight into history.
        {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          audio: null,
          function_call: null,
          reasoning_content: 'DeepSeek thinking',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      ],
      temperature: 0,
      top_p: 1,
      max_tokens: 10,
      max_completion_tokens: 20,
      stop: ['a', 'b'],
      n: 1,
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' }, strict: true } },
      user: 'u',
      stream: true,
      stream_options: { include_usage: true, include_obfuscation: false },
      seed: 3,
      presence_penalty: -2,
      frequency_penalty: 2,
      logprobs: true,
      top_logprobs: 5,
      logit_bias: { '50256': -100 },
      reasoning_effort: 'low',
      metadata: { team: 'a' },
      store: false,
      service_tier: 'auto',
      prompt_cache_key: 'k',
      safety_identifier: 's',
      verbosity: 'low',
      suffix: null,
    };
    const request = validateChatRequest(body);
    const { suffix: _null, ...expected } = body;
    const assistant = expected.messages[2] as Record<string, unknown>;
    delete assistant.refusal;
    delete assistant.annotations;
    delete assistant.audio;
    delete assistant.function_call;
    assert.deepEqual(request, expected);
  });

  it('treats explicit nulls as absent', () => {
    assert.deepEqual(validateChatRequest({ model: 'm', messages: [user], temperature: null, stop: null, tools: null }), {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('names the offending param', () => {
    rejects([], 'body');
    rejects({ messages: [user] }, 'model');
    rejects({ model: 'm', messages: [] }, 'messages', /at least one/);
    rejects({ model: 'm', messages: [user, user, { role: 'robot', content: 'x' }] }, 'messages[2].role', /'system', 'developer'/);
    rejects({ model: 'm', messages: [{ role: 'user' }] }, 'messages[0].content');
    rejects({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] }] }, 'messages[0].content[0].image_url.url');
    rejects({ model: 'm', messages: [{ role: 'assistant', content: null }] }, 'messages[0].content');
    rejects(
      { model: 'm', messages: [{ role: 'assistant', content: 'x', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f' } }] }] },
      'messages[0].tool_calls[0].function.arguments',
    );
    rejects({ model: 'm', messages: [user, { role: 'tool', tool_call_id: 'nope', content: 'x' }] }, 'messages[1].tool_call_id', /does not answer/);
  });

  it('rejects out-of-range values instead of clamping them', () => {
    rejects({ model: 'm', messages: [user], temperature: 2.5 }, 'temperature', /between 0 and 2, got 2.5/);
    rejects({ model: 'm', messages: [user], top_p: -0.1 }, 'top_p');
    rejects({ model: 'm', messages: [user], max_tokens: 0 }, 'max_tokens');
    rejects({ model: 'm', messages: [user], max_tokens: 1.5 }, 'max_tokens', /integer/);
    rejects({ model: 'm', messages: [user], n: 129 }, 'n');
    rejects({ model: 'm', messages: [user], presence_penalty: 3 }, 'presence_penalty');
    rejects({ model: 'm', messages: [user], logit_bias: { '1': 101 } }, 'logit_bias.1');
  });

  it('checks cross-field rules as OpenAI does', () => {
    rejects({ model: 'm', messages: [user], top_logprobs: 2 }, 'top_logprobs', /logprobs/);
    rejects({ model: 'm', messages: [user], stream_options: { include_usage: true } }, 'stream_options', /stream is true/);
    rejects({ model: 'm', messages: [user], tool_choice: 'auto' }, 'tool_choice', /tools/);
    const tools = [{ type: 'function', function: { name: 'f' } }];
    rejects({ model: 'm', messages: [user], tools, tool_choice: { type: 'function', function: { name: 'g' } } }, 'tool_choice.function.name');
    rejects({ model: 'm', messages: [user], tools: [{ type: 'function', function: { name: 'bad name' } }] }, 'tools[0].function.name');
    rejects({ model: 'm', messages: [user], tools: [...tools, ...tools] }, 'tools[1].function.name', /duplicate/);
    rejects({ model: 'm', messages: [user], response_format: { type: 'json_schema' } }, 'response_format.json_schema');
  });

  it('records members it does not model instead of refusing them, with their fate when bridged', () => {
    const audio = { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } };
    const request = validateChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }, audio], colour: 'red' }],
      temprature: 0.5,
      functions: [{ name: 'f' }],
      tools: [{ type: 'web_search' }, { type: 'function', function: { name: 'f', defer_loading: true } }],
      stream: true,
      stream_options: { include_usage: true, x_new: 1 },
      response_format: { type: 'json_object', extra: null },
      nothing: null,
    });
    assert.deepEqual(request.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    assert.deepEqual(request.tools, [{ type: 'function', function: { name: 'f' } }]);
    assert.deepEqual(
      request.unmodeled?.map((f) => [f.param, f.bridged]),
      [
        ['temprature', 'drop'],
        ['functions', 'refuse'],
        ['messages.0.colour', 'drop'],
        ['messages.0.content.0.cache_control', 'drop'],
        ['messages.0.content.1', 'refuse'],
        ['stream_options.x_new', 'drop'],
        ['tools.0', 'drop'],
        ['tools.1.function.defer_loading', 'drop'],
      ],
    );
    // The value is the member as sent: part of the cache key.
    assert.equal(request.unmodeled?.find((f) => f.param === 'messages.0.content.1')?.value, (request.unmodeled ?? [])[4]?.value);
    assert.deepEqual(request.unmodeled?.[4]?.value, audio);
  });

  it('keeps a legacy or audio assistant turn without content, and a tool choice of a type it does not model', () => {
    const request = validateChatRequest({
      model: 'm',
      messages: [user, { role: 'assistant', content: null, audio: { id: 'audio_1' } }],
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } },
    });
    assert.equal(request.tool_choice, undefined);
    assert.deepEqual(
      request.unmodeled?.map((f) => [f.param, f.bridged]),
      [
        ['messages.1.audio', 'refuse'],
        ['tool_choice', 'refuse'],
      ],
    );
  });

  it('has no unmodeled list when everything is modelled', () => {
    assert.equal('unmodeled' in validateChatRequest({ model: 'm', messages: [user], temperature: 1 }), false);
  });
});

describe('custom (freeform) tools', () => {
  const messages = [{ role: 'user', content: 'patch it' }];
  const tool = { type: 'custom', custom: { name: 'apply_patch', description: 'd', format: { type: 'grammar', grammar: { definition: 'start: /.+/', syntax: 'lark' } } } };

  it('accepts custom tools, a custom tool_choice and custom calls in the history as sent', () => {
    const request = validateChatRequest({
      model: 'm',
      tools: [tool],
      tool_choice: { type: 'custom', custom: { name: 'apply_patch' } },
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
    });
    assert.deepEqual(request.tools, [tool]);
    assert.deepEqual(request.tool_choice, { type: 'custom', custom: { name: 'apply_patch' } });
  });

  it('rejects a bad grammar syntax, an unknown custom choice and a custom call without input, naming the param', () => {
    rejects(
      { model: 'm', messages, tools: [{ type: 'custom', custom: { name: 'p', format: { type: 'grammar', grammar: { definition: 'x', syntax: 'peg' } } } }] },
      'tools[0].custom.format.grammar.syntax',
    );
    rejects({ model: 'm', messages, tools: [tool], tool_choice: { type: 'custom', custom: { name: 'other' } } }, 'tool_choice.custom.name');
    rejects(
      { model: 'm', messages: [...messages, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'p' } }] }] },
      'messages[1].tool_calls[0].custom.input',
    );
  });
});
