// Canonical answers -> Anthropic Messages: the Message object and the named SSE event sequence.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatChunk, ChatChunkDelta, ChatResponse, FinishReason, Usage } from '../../../../src/gateway/protocol/chat-types.ts';
import { encodeMessagesResponse } from '../../../../src/gateway/wire/anthropic-messages/encode-messages-response.ts';
import { MessagesStreamEncoder } from '../../../../src/gateway/wire/anthropic-messages/encode-messages-stream.ts';
import { mapStopReason } from '../../../../src/gateway/wire/anthropic-messages/map-stop-reason.ts';

const usage: Usage = { promptTokens: 100, cachedPromptTokens: 30, cacheWriteTokens: 20, completionTokens: 7, reasoningTokens: 0, estimated: false, raw: undefined };

function response(message: ChatResponse['choices'][0]['message'], finish: FinishReason): ChatResponse {
  return { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4.1', choices: [{ index: 0, message, finish_reason: finish }] };
}

const chunk = (delta: ChatChunkDelta, finish: FinishReason | null = null): ChatChunk => ({
  id: 'msg_up',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'claude-sonnet-4-5',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** Parses `event: x\ndata: {...}\n\n` text back into [name, data] pairs, checking that name and data.type agree. */
function parseEvents(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => {
      const match = /^event: (\S+)\ndata: (.*)$/.exec(e);
      assert.ok(match, `not an Anthropic SSE event: ${e}`);
      const data = JSON.parse(match[2] as string) as Record<string, unknown>;
      assert.equal(data.type, match[1]);
      return data;
    });
}

describe('encodeMessagesResponse', () => {
  it('orders thinking, text and tool_use blocks; usage without the cached and written prompt tokens', () => {
    const message = encodeMessagesResponse(
      response(
        {
          role: 'assistant',
          content: 'Checking.',
          reasoning_content: 'Hmm.',
          reasoning_signature: 'sig',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        'tool_calls',
      ),
      { usage, rawFinishReason: 'tool_calls' },
    );
    assert.deepEqual(message, {
      id: 'msg_chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4.1',
      content: [
        { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 50, output_tokens: 7, cache_creation_input_tokens: 20, cache_read_input_tokens: 30 },
    });
  });

  it('keeps arguments that are not a JSON object instead of failing', () => {
    const message = encodeMessagesResponse(
      response({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: 'oops' } }] }, 'tool_calls'),
      {
        usage,
        rawFinishReason: null,
      },
    );
    assert.deepEqual(message.content, [{ type: 'tool_use', id: 'c', name: 'f', input: { arguments: 'oops' } }]);
  });
});

describe('mapStopReason', () => {
  it("keeps an Anthropic upstream's own reason and translates the canonical one otherwise", () => {
    assert.equal(mapStopReason('stop', 'stop_sequence'), 'stop_sequence');
    assert.equal(mapStopReason('stop', 'pause_turn'), 'pause_turn');
    assert.deepEqual(
      (['stop', 'length', 'tool_calls', 'content_filter', null] as const).map((f) => mapStopReason(f, f)),
      ['end_turn', 'max_tokens', 'tool_use', 'refusal', null],
    );
  });
});

describe('MessagesStreamEncoder', () => {
  it('opens, fills and closes one block per kind, in Anthropic’s order, with usage in message_delta', () => {
    const encoder = new MessagesStreamEncoder({ model: 'claude-sonnet-4-5', inputTokensHint: 90 });
    let text = encoder.push(chunk({ role: 'assistant', content: '' }));
    text += encoder.push(chunk({ reasoning_content: 'Hmm.' }));
    text += encoder.push(chunk({ reasoning_signature: 'sig' }));
    text += encoder.push(chunk({ content: 'Hel' }));
    text += encoder.push(chunk({ content: 'lo' }));
    text += encoder.push(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } }] }));
    text += encoder.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }));
    text += encoder.push(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '{}' } }] }));
    text += encoder.push(chunk({}, 'tool_calls'));
    text += encoder.finish({ usage, finishReason: 'tool_calls', rawFinishReason: 'tool_use' });
    const events = parseEvents(text);
    assert.deepEqual(events[0], {
      type: 'message_start',
      message: {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 90, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    assert.deepEqual(events.slice(1), [
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hel' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'lo' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_a', name: 'a', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"x":1}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'call_b', name: 'b', input: {} } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 3 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 50, output_tokens: 7, cache_creation_input_tokens: 20, cache_read_input_tokens: 30 },
      },
      { type: 'message_stop' },
    ]);
  });

  it('a stream that ends before any chunk still opens with message_start', () => {
    const events = parseEvents(new MessagesStreamEncoder({ model: 'm' }).finish({ usage, finishReason: 'stop', rawFinishReason: null }));
    assert.deepEqual(
      events.map((e) => e.type),
      ['message_start', 'ping', 'message_delta', 'message_stop'],
    );
  });
});
