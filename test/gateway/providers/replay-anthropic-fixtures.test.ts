// The Anthropic provider replaying recorded Messages bodies (test/fixtures/anthropic/) for what the provider
// tests do not cover: thinking, unknown fields, multi-byte text cut anywhere, pass-through bytes, more errors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { readUpstreamBytes } from '../../../src/gateway/protocol/upstream-bytes.ts';
import { createAnthropicProvider } from '../../../src/gateway/providers/anthropic/anthropic-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../../src/gateway/providers/provider.ts';
import { collect, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';
import { usageOf, deltasOf, failure } from '../helpers/provider-events.ts';
import { readFixture, serveFixture } from '../helpers/replay-fixture.ts';

const MODEL = 'claude-sonnet-4-5-20250929';
const request: ChatRequest = { model: 'claude-sonnet-4.5', messages: [{ role: 'user', content: 'What is 27 * 453?' }], max_tokens: 1024 };
const body = { model: 'claude-sonnet-4.5', max_tokens: 1024, messages: [{ role: 'user', content: 'What is 27 * 453?' }] };
const signal = new AbortController().signal;
type Raw = Extract<ProviderStreamEvent, { type: 'raw' }>;

describe('anthropic provider on recorded fixtures', () => {
  let upstream: MockUpstream;
  let provider: Provider;

  before(async () => {
    upstream = await startMockUpstream(serveFixture('anthropic', 'messages-text.sse'));
    provider = createAnthropicProvider({ name: 'anthropic', baseUrl: upstream.url, apiKey: 'sk-ant-test', timeoutMs: 2000 });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('streams a thinking block as reasoning_content with its signature, then the answer', async () => {
    upstream.setHandler(serveFixture('anthropic', 'messages-thinking.sse'));
    const events = await collect(provider.stream({ request, upstreamModel: MODEL }, signal));
    const deltas = deltasOf(events);
    assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), 'The user asks 27 * 453. 27 * 453 = 12231.');
    assert.equal(deltas.map((d) => d.reasoning_signature ?? '').join(''), 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds');
    assert.equal(deltas.map((d) => d.content ?? '').join(''), '27 × 453 = 12,231');
    const usage = usageOf(events)!;
    assert.deepEqual([usage.promptTokens, usage.completionTokens, usage.estimated], [46, 62, false]);
    assert.ok(usage.reasoningTokens > 0 && usage.reasoningTokens < 62, `reasoning tokens ${usage.reasoningTokens}`);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'end_turn' });
  });

  it('ignores unknown fields at every level and keeps multi-byte text whole across piece cuts', async () => {
    for (const pieceBytes of [0, 1, 7, 61]) {
      upstream.setHandler(serveFixture('anthropic', 'messages-text.sse', { pieceBytes }));
      const events = await collect(provider.stream({ request, upstreamModel: MODEL }, signal));
      assert.equal(
        deltasOf(events)
          .map((d) => d.content ?? '')
          .join(''),
        'Hello! How can I help — today? 👋',
        `pieces of ${pieceBytes}`,
      );
      assert.deepEqual([usageOf(events)?.promptTokens, usageOf(events)?.completionTokens], [12, 14]);
      assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'end_turn' });
    }
  });

  it('passes the recorded stream through byte for byte, message_stop last', async () => {
    const recorded = readFixture('anthropic', 'messages-text.sse');
    for (const pieceBytes of [1, 61]) {
      upstream.setHandler(serveFixture('anthropic', 'messages-text.sse', { pieceBytes }));
      const events = await collect(provider.stream({ request, upstreamModel: MODEL, passThrough: { dialect: 'anthropic-messages', body: { ...body, stream: true } } }, signal));
      const raws = events.filter((e): e is Raw => e.type === 'raw');
      assert.equal(raws.map((r) => r.text).join(''), recorded.text, `pieces of ${pieceBytes}`);
      assert.match(raws.at(-1)!.text, /^event: message_stop\n/);
      assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'end_turn' });
    }
  });

  it('hands a Messages client the recorded JSON bytes of a message', async () => {
    upstream.setHandler(serveFixture('anthropic', 'message.json'));
    const result = await provider.chat({ request, upstreamModel: MODEL, passThrough: { dialect: 'anthropic-messages', body } }, signal);
    assert.equal(readUpstreamBytes(result.response, 'anthropic-messages'), readFixture('anthropic', 'message.json').text);
    assert.equal(result.response.choices[0]?.finish_reason, 'tool_calls');
  });

  it('turns recorded error bodies into error kinds, before a stream starts as well', async () => {
    const cases: Array<[string, string, string, number | undefined]> = [
      ['error-401-authentication.json', 'UPSTREAM_ERROR', 'auth', undefined],
      ['error-500-api-error.json', 'UPSTREAM_ERROR', 'server_error', undefined],
      ['error-529-overloaded.json', 'UPSTREAM_UNAVAILABLE', 'unavailable', undefined],
      ['error-429-rate-limit.json', 'UPSTREAM_RATE_LIMITED', 'rate_limited', 12],
    ];
    for (const [file, code, kind, retryAfter] of cases) {
      upstream.setHandler(serveFixture('anthropic', file));
      const err = await failure(collect(provider.stream({ request, upstreamModel: MODEL }, signal)));
      assert.deepEqual([err.code, err.failure, err.retryAfterSeconds, err.status], [code, kind, retryAfter, readFixture('anthropic', file).status], file);
    }
  });

  it('fails a pass-through stream on an error event and on a cut, after the pieces already sent', async () => {
    for (const [file, kind] of [
      ['messages-error-mid-stream.sse', 'unavailable'],
      ['messages-cut.sse', 'interrupted'],
    ] as const) {
      upstream.setHandler(serveFixture('anthropic', file));
      const seen: ProviderStreamEvent[] = [];
      const err = await failure(
        (async () => {
          for await (const e of provider.stream({ request, upstreamModel: MODEL, passThrough: { dialect: 'anthropic-messages', body: { ...body, stream: true } } }, signal)) {
            seen.push(e);
          }
        })(),
      );
      assert.equal(err.failure, kind, file);
      assert.ok(!seen.some((e) => e.type === 'done'), file);
      assert.ok(!readFixture('anthropic', file).text.includes('message_stop'));
    }
  });
});
