// Anthropic thinking through the provider: carried as reasoning_content with its signature (answer and
// translated stream), and counted by Herd into reasoningTokens on every path (Anthropic reports none apart).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { createAnthropicProvider } from '../../../src/gateway/providers/anthropic/anthropic-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../../src/gateway/providers/provider.ts';
import { countTokens } from '../../../src/gateway/protocol/usage-estimate.ts';
import { collect, sendJson, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';
import { readFixture, replayFixture } from '../helpers/replay-fixture.ts';

const MODEL = 'claude-sonnet-4-5-20250929';
const THINKING = ['The user asks about Paris. ', 'Weather needs a tool; answer briefly.'];
const request: ChatRequest = { model: 'claude', messages: [{ role: 'user', content: 'Weather in Paris?' }], reasoning_effort: 'low' };
const message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: MODEL,
  content: [
    { type: 'thinking', thinking: THINKING.join(''), signature: 'sig-1' },
    { type: 'redacted_thinking', data: 'opaque' },
    { type: 'text', text: 'Sunny.' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 60 },
};
/** A recorded thinking stream (test/fixtures/anthropic/messages-thinking.sse) and the thinking it carries. */
const stream = readFixture('anthropic', 'messages-thinking.sse');
const STREAM_THINKING = ['The user asks 27 * 453. ', '27 * 453 = 12231.'];
const STREAM_SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';

const usageOf = (events: ProviderStreamEvent[]) => events.find((e): e is Extract<ProviderStreamEvent, { type: 'usage' }> => e.type === 'usage')!.usage;

describe('anthropic provider: thinking carried and counted', () => {
  let upstream: MockUpstream;
  let provider: Provider;
  let expected: number;
  let streamExpected: number;
  const signal = new AbortController().signal;

  before(async () => {
    expected = await countTokens(THINKING.join(''));
    streamExpected = await countTokens(STREAM_THINKING.join(''));
    upstream = await startMockUpstream((req, res) => ((req.body as { stream?: boolean }).stream === true ? replayFixture(res, stream) : sendJson(res, 200, message)));
    provider = createAnthropicProvider({ name: 'anthropic', baseUrl: upstream.url, apiKey: 'sk-ant-test', timeoutMs: 2000 });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('an answer: reasoning_content and signature; reasoningTokens is the thinking counted, none reported apart', async () => {
    const result = await provider.chat({ request, upstreamModel: MODEL }, signal);
    assert.deepEqual((upstream.requests.at(-1)!.body as { thinking: unknown }).thinking, { type: 'enabled', budget_tokens: 2048 });
    const answer = result.response.choices[0]!.message;
    assert.equal(answer.reasoning_content, THINKING.join(''));
    assert.equal(answer.reasoning_signature, 'sig-1');
    assert.ok(expected > 0 && expected < 60);
    assert.equal(result.usage.reasoningTokens, expected);
    assert.equal(result.usage.reportedReasoningTokens, undefined);
    assert.equal(result.usage.completionTokens, 60);
    assert.equal(result.response.usage?.completion_tokens_details?.reasoning_tokens, expected);
  });

  it('a translated stream: thinking deltas, then the signature, then text; usage counts the thinking', async () => {
    const events = await collect(provider.stream({ request, upstreamModel: MODEL }, signal));
    const deltas = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk.choices[0]!.delta] : []));
    assert.deepEqual(
      deltas.filter((d) => d.reasoning_content !== undefined).map((d) => d.reasoning_content),
      STREAM_THINKING,
    );
    const signature = deltas.findIndex((d) => d.reasoning_signature === STREAM_SIGNATURE);
    assert.ok(signature > 0 && signature < deltas.findIndex((d) => d.content === '27 × 453 = 12,231'));
    assert.ok(streamExpected > 0 && streamExpected < 62);
    assert.equal(usageOf(events).reasoningTokens, streamExpected);
  });

  it("a Messages client's pass-through stream: the raw events go on, the thinking is still counted", async () => {
    const body = { model: 'claude', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'Weather in Paris?' }] };
    const events = await collect(provider.stream({ request, upstreamModel: MODEL, passThrough: { dialect: 'anthropic-messages', body } }, signal));
    assert.ok(events.some((e) => e.type === 'raw'));
    assert.equal(usageOf(events).reasoningTokens, streamExpected);
    assert.equal(usageOf(events).reportedReasoningTokens, undefined);
  });
});
