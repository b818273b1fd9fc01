// Canonical request -> OpenAI-compatible body: passed through, except what only Anthropic upstreams take.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { convertOpenAIRequest } from '../../src/gateway/providers/openai/convert-openai-request.ts';

it('does not send top_k, cache_control or the Anthropic client headers to an OpenAI-compatible upstream, and sends thinking as reasoning_effort', () => {
  const body = convertOpenAIRequest(
    {
      model: 'claude-via-relay',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 10,
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      anthropic_headers: { version: '2023-06-01' },
      cache_control: { type: 'ephemeral' },
    },
    'upstream-id',
    false,
  );
  assert.deepEqual(body, { model: 'upstream-id', stream: false, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, reasoning_effort: 'low' });
});

it('keeps replayed reasoning but not its Anthropic signature', () => {
  const body = convertOpenAIRequest(
    {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'ok', reasoning_content: 'think', reasoning_signature: 'sig' },
      ],
    },
    'u',
    false,
  );
  assert.deepEqual(body.messages[1], { role: 'assistant', content: 'ok', reasoning_content: 'think' });
});
