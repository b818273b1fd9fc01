// The Gemini provider against a local server replaying recorded generateContent / streamGenerateContent?alt=sse
// bodies (test/fixtures/gemini/), including safety blocks and Google error bodies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { createGeminiProvider } from '../../src/gateway/providers/gemini/gemini-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../src/gateway/providers/provider.ts';
import { UpstreamError } from '../../src/gateway/protocol/upstream-error.ts';
import { collect, sendJson, sendSse, startMockUpstream, type MockUpstream } from './helpers/mock-upstream.ts';
import { readFixtureJson, serveFixture } from './helpers/replay-fixture.ts';

const KEY = 'AIzaSy-test-key';
const request: ChatRequest = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'How many r in strawberry?' }] };

const generateResponse = readFixtureJson('gemini', 'generate-content.json') as { usageMetadata: unknown };
const usageMetadata = generateResponse.usageMetadata;

describe('gemini provider', () => {
  let upstream: MockUpstream;
  let provider: Provider;
  const signal = new AbortController().signal;

  before(async () => {
    upstream = await startMockUpstream(serveFixture('gemini', 'generate-content.json'));
    provider = createGeminiProvider({ name: 'gemini', baseUrl: upstream.url, apiKey: KEY, timeoutMs: 2000 });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('calls generateContent with the key in x-goog-api-key and maps usage (thoughts count as completion)', async () => {
    upstream.setHandler(serveFixture('gemini', 'generate-content.json'));
    const result = await provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal);
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.url, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], KEY);
    assert.ok(!sent.url.includes(KEY));
    assert.deepEqual(sent.body, { contents: [{ role: 'user', parts: [{ text: 'How many r in strawberry?' }] }] });
    assert.equal(result.response.id, 'bH6LaZW8Fp_3nsEPqtaSwQ4');
    assert.deepEqual(result.response.choices[0], {
      index: 0,
      logprobs: null,
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'There are **3** "r"s in strawberry.' },
    });
    assert.deepEqual(result.usage, {
      promptTokens: 9,
      cachedPromptTokens: 4,
      cacheWriteTokens: 0,
      completionTokens: 208,
      reasoningTokens: 185,
      reportedReasoningTokens: 185,
      estimated: false,
      raw: usageMetadata,
    });
    assert.equal(result.response.usage?.total_tokens, 217);
  });

  it('reports a blocked prompt (promptFeedback.blockReason) as a content_filter UpstreamError', async () => {
    upstream.setHandler((_req, res) =>
      sendJson(res, 200, {
        promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'x',
      }),
    );
    const err = await rejection(provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.equal(err.failure, 'content_filter');
    assert.equal(err.upstreamType, 'PROHIBITED_CONTENT');
    assert.match(err.message, /blocked the prompt \(PROHIBITED_CONTENT\)/);
  });

  it('finishes a candidate stopped for SAFETY with content_filter', async () => {
    upstream.setHandler((_req, res) =>
      sendJson(res, 200, {
        candidates: [
          {
            content: { parts: [], role: 'model' },
            finishReason: 'SAFETY',
            index: 0,
            safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }],
          },
        ],
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
      }),
    );
    const result = await provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal);
    assert.equal(result.response.choices[0].finish_reason, 'content_filter');
    assert.equal(result.rawFinishReason, 'SAFETY');
  });

  it('streams over alt=sse (CRLF framing) into chunks, last usageMetadata wins', async () => {
    upstream.setHandler(serveFixture('gemini', 'stream-text.sse'));
    const events = await collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(upstream.requests.at(-1)!.url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const chunks = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk] : []));
    assert.equal(chunks.length, 3);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: 'There are **3**' });
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), 'There are **3** "r"s in strawberry.');
    assert.equal(chunks[2].choices[0].finish_reason, 'stop');
    const usage = events.find((e): e is Extract<ProviderStreamEvent, { type: 'usage' }> => e.type === 'usage')!.usage;
    assert.equal(usage.completionTokens, 23 + 185);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'STOP' });
  });

  it('streams whole function calls as tool-call deltas and finishes with tool_calls', async () => {
    upstream.setHandler(serveFixture('gemini', 'stream-tool-call.sse'));
    const events = await collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    const chunks = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk] : []));
    const call = chunks[0].choices[0].delta.tool_calls![0];
    assert.equal(call.index, 0);
    assert.match(call.id!, /^call_[0-9a-f]{24}$/);
    assert.deepEqual(call.function, { name: 'weather', arguments: '{"location":"San Francisco"}' });
    assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'tool_calls');
  });

  it('fails a stream whose prompt was blocked', async () => {
    upstream.setHandler((_req, res) => sendSse(res, [{ data: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } } }]));
    const err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal)));
    assert.equal(err.failure, 'content_filter');
  });

  it('maps 429 RESOURCE_EXHAUSTED with google.rpc.RetryInfo to a retry delay', async () => {
    upstream.setHandler(serveFixture('gemini', 'error-429-resource-exhausted.json'));
    const err = await rejection(provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(err.code, 'UPSTREAM_RATE_LIMITED');
    assert.equal(err.upstreamType, 'RESOURCE_EXHAUSTED');
    assert.equal(err.retryAfterSeconds, 34.4);
  });

  it('maps 400 INVALID_ARGUMENT for too many tokens to context_length, and 503 UNAVAILABLE', async () => {
    upstream.setHandler(serveFixture('gemini', 'error-400-token-limit.json'));
    let err = await rejection(provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(err.failure, 'context_length');
    upstream.setHandler(serveFixture('gemini', 'error-503-unavailable.json'));
    err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal)));
    assert.equal(err.code, 'UPSTREAM_UNAVAILABLE');
  });

  it('fails a stream that ends without a finishReason, and one that never answers', async () => {
    upstream.setHandler(serveFixture('gemini', 'stream-cut.sse'));
    let err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal)));
    assert.equal(err.failure, 'interrupted');
    upstream.setHandler((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
    });
    err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash', timeoutMs: 100 }, signal)));
    assert.equal(err.code, 'UPSTREAM_TIMEOUT');
  });
});

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof UpstreamError, `expected UpstreamError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}
