// The Responses request decoder: what maps onto the chat shape, and the exact param of every refusal.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { decodeResponsesRequest } from '../../../src/gateway/dialects/openai-responses/decode-responses-request.ts';

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
    assert.equal(decoded.instructions, 'Be brief.');
    assert.equal(decoded.max_output_tokens, 50);
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

  it('text.format, verbosity and reasoning.effort map to chat; include and truncation are accepted', () => {
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
    assert.deepEqual(decoded.metadata, { team: 'a' });
    assert.equal(decoded.truncation, 'auto');
  });

  it('refuses what needs server-side state, with the param named', () => {
    refuses({ model: 'm', input: 'hi', previous_response_id: 'resp_1' }, 'UNSUPPORTED', 'previous_response_id', /no server-side response state/);
    refuses({ model: 'm', input: 'hi', conversation: 'conv_1' }, 'UNSUPPORTED', 'conversation');
    refuses({ model: 'm', input: 'hi', background: true }, 'UNSUPPORTED', 'background');
    refuses({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] }, 'UNSUPPORTED', 'input[0].type');
    refuses({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }, 'UNSUPPORTED', 'input[0].content[0].file_id');
    assert.doesNotThrow(() => decodeResponsesRequest({ model: 'm', input: 'hi', background: false }));
  });

  it('refuses hosted tools and unknown items, and bad values with the Responses param', () => {
    refuses({ model: 'm', input: 'hi', tools: [{ type: 'web_search' }] }, 'UNSUPPORTED', 'tools[0].type');
    refuses({ model: 'm', input: [{ type: 'computer_call_output', call_id: 'x' }] }, 'UNSUPPORTED', 'input[0].type');
    refuses({ model: 'm', input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] }, 'INVALID_ARG', 'input[0].call_id', /does not answer/);
    refuses({ model: 'm', input: 'hi', max_output_tokens: 0 }, 'INVALID_ARG', 'max_output_tokens');
    refuses({ model: 'm', input: 'hi', temperature: 3 }, 'INVALID_ARG', 'temperature');
    refuses({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } }, 'INVALID_ARG', 'tool_choice.name');
    refuses({ model: 'm', input: 'hi', messages: [] }, 'INVALID_ARG', 'messages', /Unrecognized argument/);
    refuses({ model: 'm' }, 'INVALID_ARG', 'input');
    refuses({ model: 'm', input: [] }, 'INVALID_ARG', 'input');
    refuses({ model: 'm', input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] }, 'INVALID_ARG', 'input[0].content[0].type');
    refuses({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'x' }] }] }, 'UNSUPPORTED', 'input[0].content[0].type');
  });
});
