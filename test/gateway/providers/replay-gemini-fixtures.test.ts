// The Gemini provider replaying recorded bodies (test/fixtures/gemini/) for what the provider tests do not
// cover: thought parts, unknown fields, more Google error bodies, an error event mid-stream, embeddings.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { createGeminiProvider } from '../../../src/gateway/providers/gemini/gemini-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../../src/gateway/providers/provider.ts';
import { collect, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';
import { usageOf, deltasOf, failure } from '../helpers/provider-events.ts';
import { readFixture, serveFixture } from '../helpers/replay-fixture.ts';

const MODEL = 'gemini-2.5-flash';
const request: ChatRequest = { model: MODEL, messages: [{ role: 'user', content: 'How many r in strawberry?' }] };
const signal = new AbortController().signal;

describe('gemini provider on recorded fixtures', () => {
  let upstream: MockUpstream;
  let provider: Provider;

  before(async () => {
    upstream = await startMockUpstream(serveFixture('gemini', 'stream-text.sse'));
    provider = createGeminiProvider({ name: 'gemini', baseUrl: upstream.url, apiKey: 'AIzaSy-test', timeoutMs: 2000 });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('streams thought parts as reasoning_content, the answer as content, thoughts counted as completion', async () => {
    upstream.setHandler(serveFixture('gemini', 'stream-thinking.sse'));
    const events = await collect(provider.stream({ request, upstreamModel: MODEL }, signal));
    const deltas = deltasOf(events);
    assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), '**Counting letters**\n\nI need to count the r characters.');
    assert.equal(deltas.map((d) => d.content ?? '').join(''), 'There are 3.');
    const usage = usageOf(events)!;
    assert.deepEqual([usage.promptTokens, usage.completionTokens, usage.reasoningTokens, usage.estimated], [12, 58, 50, false]);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'STOP' });
  });

  it('reads a CRLF stream cut into pieces anywhere the same way', async () => {
    for (const pieceBytes of [1, 13, 0]) {
      upstream.setHandler(serveFixture('gemini', 'stream-text.sse', { pieceBytes }));
      const events = await collect(provider.stream({ request, upstreamModel: MODEL }, signal));
      assert.equal(
        deltasOf(events)
          .map((d) => d.content ?? '')
          .join(''),
        'There are **3** "r"s in strawberry.',
        `pieces of ${pieceBytes}`,
      );
    }
  });

  it('ignores unknown fields of a whole answer', async () => {
    upstream.setHandler(serveFixture('gemini', 'generate-content.json'));
    const result = await provider.chat({ request, upstreamModel: MODEL }, signal);
    assert.equal(result.response.choices[0]?.message.content, 'There are **3** "r"s in strawberry.');
    assert.equal(result.usage.reasoningTokens, 185);
  });

  it('turns recorded Google error bodies into error kinds', async () => {
    const cases: Array<[string, string, string, number | undefined]> = [
      ['error-429-resource-exhausted.json', 'UPSTREAM_RATE_LIMITED', 'rate_limited', 34.4],
      ['error-403-permission-denied.json', 'UPSTREAM_ERROR', 'auth', undefined],
      ['error-500-internal.json', 'UPSTREAM_ERROR', 'server_error', undefined],
      ['error-503-unavailable.json', 'UPSTREAM_UNAVAILABLE', 'unavailable', undefined],
    ];
    for (const [file, code, kind, retryAfter] of cases) {
      upstream.setHandler(serveFixture('gemini', file));
      const err = await failure(collect(provider.stream({ request, upstreamModel: MODEL }, signal)));
      assert.deepEqual([err.code, err.failure, err.retryAfterSeconds, err.status], [code, kind, retryAfter, readFixture('gemini', file).status], file);
    }
  });

  it('treats 400 API_KEY_INVALID as an auth failure, not a bad request', async () => {
    upstream.setHandler(serveFixture('gemini', 'error-400-api-key-invalid.json'));
    const err = await failure(provider.chat({ request, upstreamModel: MODEL }, signal));
    assert.equal(err.failure, 'auth');
  });

  it('fails a stream on an error event mid-stream with that error, after the chunk before it', async () => {
    upstream.setHandler(serveFixture('gemini', 'stream-error-mid-stream.sse'));
    const seen: ProviderStreamEvent[] = [];
    const err = await failure(
      (async () => {
        for await (const e of provider.stream({ request, upstreamModel: MODEL }, signal)) seen.push(e);
      })(),
    );
    assert.equal(err.failure, 'unavailable');
    assert.match(err.message, /overloaded/);
    assert.equal(seen.filter((e) => e.type === 'chunk').length, 1);
    assert.ok(!seen.some((e) => e.type === 'done'));
  });

  it('reads recorded batchEmbedContents vectors in input order', async () => {
    upstream.setHandler(serveFixture('gemini', 'batch-embed-contents.json'));
    const result = await provider.embed!({ inputs: ['a', 'b'], upstreamModel: 'gemini-embedding-001' }, signal);
    assert.equal(upstream.requests.at(-1)?.url, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.deepEqual(
      result.vectors.map((v) => Array.from(v)),
      [[0.013168523, -0.008711934, -0.046782676, 0.000699695].map(Math.fround), [-0.024032867, 0.010357147, 0.031093106, -0.019811237].map(Math.fround)],
    );
  });
});
