// The OpenAI provider replaying recorded wire bodies (test/fixtures/openai/) for what the provider tests
// do not cover: reasoning deltas, pass-through of chat, Responses and completions bytes, embeddings.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { readUpstreamBytes } from '../../../src/gateway/protocol/upstream-bytes.ts';
import { createOpenAIProvider } from '../../../src/gateway/providers/openai/openai-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../../src/gateway/providers/provider.ts';
import { collect, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';
import { usageOf, failure } from '../helpers/provider-events.ts';
import { readFixture, serveFixture } from '../helpers/replay-fixture.ts';

const request: ChatRequest = { model: 'gpt-4.1', messages: [{ role: 'user', content: 'How many r in strawberry?' }] };
const signal = new AbortController().signal;
type Raw = Extract<ProviderStreamEvent, { type: 'raw' }>;
const rawText = (events: ProviderStreamEvent[]) =>
  events
    .filter((e): e is Raw => e.type === 'raw')
    .map((e) => e.text)
    .join('');

describe('openai provider on recorded fixtures', () => {
  let upstream: MockUpstream;
  let provider: Provider;

  before(async () => {
    upstream = await startMockUpstream(serveFixture('openai', 'chat-text.sse'));
    provider = createOpenAIProvider({ name: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-test', timeoutMs: 2000, endpoints: ['responses', 'completions'] });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('streams reasoning_content deltas apart from the answer, with the reported reasoning tokens', async () => {
    upstream.setHandler(serveFixture('openai', 'chat-reasoning.sse'));
    const events = await collect(provider.stream({ request, upstreamModel: 'deepseek-reasoner' }, signal));
    const deltas = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk.choices[0]!.delta] : []));
    assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), "Count the r's: s-t-r-a-w-b-e-r-r-y.");
    assert.equal(deltas.map((d) => d.content ?? '').join(''), 'Three.');
    const usage = usageOf(events)!;
    assert.deepEqual([usage.promptTokens, usage.completionTokens, usage.reasoningTokens, usage.reportedReasoningTokens, usage.estimated], [14, 40, 38, 38, false]);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'stop' });
  });

  it('passes a chat stream through as its recorded bytes (unknown fields and all), [DONE] left to the client side', async () => {
    const recorded = readFixture('openai', 'chat-text.sse');
    upstream.setHandler(serveFixture('openai', 'chat-text.sse'));
    const stream = { ...request, stream: true, stream_options: { include_usage: true } };
    const events = await collect(provider.stream({ request: stream, upstreamModel: 'gpt-4.1', passThrough: { dialect: 'openai-chat' } }, signal));
    assert.equal(rawText(events), recorded.text.replace('data: [DONE]\n\n', ''));
    assert.ok(rawText(events).includes('"x_future_delta_field":{"kept":true}'));
    assert.deepEqual([usageOf(events)?.promptTokens, usageOf(events)?.completionTokens], [9, 2]);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'stop' });
  });

  it('hands a chat client the recorded JSON bytes of a completion', async () => {
    const recorded = readFixture('openai', 'chat-completion.json');
    upstream.setHandler(serveFixture('openai', 'chat-completion.json'));
    const result = await provider.chat({ request, upstreamModel: 'gpt-4.1', passThrough: { dialect: 'openai-chat' } }, signal);
    assert.equal(readUpstreamBytes(result.response, 'openai-chat'), recorded.text);
  });

  it('passes a Responses stream through on /responses as recorded, and reads its usage', async () => {
    const recorded = readFixture('openai', 'responses-text.sse');
    upstream.setHandler(serveFixture('openai', 'responses-text.sse'));
    const body = { model: 'gpt-4.1', input: 'Say hello', stream: true };
    const events = await collect(provider.stream({ request, upstreamModel: 'gpt-4.1-2025-04-14', passThrough: { dialect: 'openai-responses', body } }, signal));
    assert.equal(upstream.requests.at(-1)?.url, '/v1/responses');
    assert.equal(rawText(events), recorded.text);
    assert.deepEqual([usageOf(events)?.promptTokens, usageOf(events)?.completionTokens, usageOf(events)?.estimated], [11, 4, false]);
    assert.equal(events.at(-1)?.type, 'done');
  });

  it('fails a Responses stream cut before response.completed as interrupted', async () => {
    upstream.setHandler(serveFixture('openai', 'responses-cut.sse'));
    const body = { model: 'gpt-4.1', input: 'Say hello', stream: true };
    const err = await failure(collect(provider.stream({ request, upstreamModel: 'gpt-4.1', passThrough: { dialect: 'openai-responses', body } }, signal)));
    assert.equal(err.failure, 'interrupted');
  });

  it('hands a Responses client the recorded JSON bytes, read back as chat for the ledger', async () => {
    const recorded = readFixture('openai', 'responses.json');
    upstream.setHandler(serveFixture('openai', 'responses.json'));
    const body = { model: 'gpt-4.1', input: 'Say hello' };
    const result = await provider.chat({ request, upstreamModel: 'gpt-4.1', passThrough: { dialect: 'openai-responses', body } }, signal);
    assert.equal(readUpstreamBytes(result.response, 'openai-responses'), recorded.text);
    assert.equal(result.response.choices[0]?.message.content, 'Hello there!');
    assert.deepEqual([result.usage.promptTokens, result.usage.completionTokens], [11, 4]);
  });

  it('passes a legacy completions stream and answer through on /completions', async () => {
    const recorded = readFixture('openai', 'completions-text.sse');
    upstream.setHandler(serveFixture('openai', 'completions-text.sse'));
    const body = { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', stream: true, stream_options: { include_usage: true } };
    const events = await collect(provider.stream({ request, upstreamModel: 'gpt-3.5-turbo-instruct', passThrough: { dialect: 'openai-completions', body } }, signal));
    assert.equal(upstream.requests.at(-1)?.url, '/v1/completions');
    assert.equal(rawText(events), recorded.text.replace('data: [DONE]\n\n', ''));
    assert.deepEqual([usageOf(events)?.promptTokens, usageOf(events)?.completionTokens], [5, 4]);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'stop' });

    upstream.setHandler(serveFixture('openai', 'completions.json'));
    const result = await provider.chat(
      { request, upstreamModel: 'gpt-3.5-turbo-instruct', passThrough: { dialect: 'openai-completions', body: { model: 'x', prompt: 'Say hello' } } },
      signal,
    );
    assert.equal(readUpstreamBytes(result.response, 'openai-completions'), readFixture('openai', 'completions.json').text);
    assert.equal(result.response.choices[0]?.message.content, '\n\nHello!');
  });

  it('reads recorded embeddings in input order with the upstream count', async () => {
    upstream.setHandler(serveFixture('openai', 'embeddings.json'));
    const result = await provider.embed!({ inputs: ['a', 'b'], upstreamModel: 'text-embedding-3-small' }, signal);
    assert.deepEqual(
      result.vectors.map((v) => Array.from(v)),
      [[0.0023064255, -0.009327292, -0.0028842222, 0.017649224].map(Math.fround), [-0.011023187, 0.0042513306, 0.020011254, -0.0075421317].map(Math.fround)],
    );
    assert.equal(result.usage.promptTokens, 8);
  });

  it('turns recorded error bodies into the error kinds the router retries by, on a stream as well', async () => {
    const cases: Array<[string, string, string, number | undefined]> = [
      ['error-429-rate-limit.json', 'UPSTREAM_RATE_LIMITED', 'rate_limited', 7],
      ['error-401-invalid-api-key.json', 'UPSTREAM_ERROR', 'auth', undefined],
      ['error-503-overloaded.json', 'UPSTREAM_UNAVAILABLE', 'unavailable', undefined],
    ];
    for (const [file, code, kind, retryAfter] of cases) {
      upstream.setHandler(serveFixture('openai', file));
      const err = await failure(collect(provider.stream({ request, upstreamModel: 'gpt-4.1' }, signal)));
      assert.deepEqual([err.code, err.failure, err.retryAfterSeconds], [code, kind, retryAfter], file);
    }
  });
});
