// The Anthropic event translator on its own: corners the HTTP-level test does not reach.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AnthropicStreamTranslator } from '../../../../src/gateway/wire/anthropic-messages/anthropic-stream-translator.ts';
import { UpstreamError } from '../../../../src/gateway/protocol/upstream-error.ts';

describe('AnthropicStreamTranslator', () => {
  it('maps thinking to reasoning_content, ignores unknown events, merges cumulative usage', () => {
    const t = new AnthropicStreamTranslator('anthropic');
    t.translate({ type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 } } });
    t.translate({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } });
    const thinking = t.translate({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } });
    assert.deepEqual(thinking?.choices[0].delta, { reasoning_content: 'Hmm.' });
    // The signature travels too, so an Anthropic client can hand the thinking back.
    assert.deepEqual(t.translate({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } })?.choices[0].delta, {
      reasoning_signature: 'abc',
    });
    assert.equal(t.translate({ type: 'some_future_event', payload: 1 }), undefined);
    const stop = t.translate({ type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 40, input_tokens: 12, cache_read_input_tokens: null } });
    assert.equal(stop?.choices[0].finish_reason, 'length');
    t.translate({ type: 'message_stop' });
    assert.equal(t.finished, true);
    const usage = t.finalUsage!;
    // input_tokens updated by message_delta; the null cache field there leaves message_start's value.
    assert.deepEqual([usage.promptTokens, usage.cachedPromptTokens, usage.completionTokens], [17, 5, 40]);
  });

  it('keeps pre-filled tool input and numbers tool calls from 0 across text blocks', () => {
    const t = new AnthropicStreamTranslator('anthropic');
    t.translate({ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: {} } });
    t.translate({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } });
    const start = t.translate({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } } });
    assert.deepEqual(start?.choices[0].delta.tool_calls, [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]);
    assert.equal(t.translate({ type: 'content_block_stop', index: 1 }), undefined);
  });

  it('throws typed errors for `error` events', () => {
    const t = new AnthropicStreamTranslator('anthropic');
    for (const [type, code] of [
      ['overloaded_error', 'UPSTREAM_UNAVAILABLE'],
      ['rate_limit_error', 'UPSTREAM_RATE_LIMITED'],
      ['api_error', 'UPSTREAM_ERROR'],
    ]) {
      assert.throws(
        () => t.translate({ type: 'error', error: { type, message: 'x' } }),
        (err: unknown) => err instanceof UpstreamError && err.code === code && err.upstreamType === type,
      );
    }
  });
});
