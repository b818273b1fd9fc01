// The Anthropic provider against a local server replaying recorded Messages API bodies
// (test/fixtures/anthropic/): responses, the full streaming event sequence, error bodies and faults.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatChunk, ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { createAnthropicProvider } from '../../src/gateway/providers/anthropic/anthropic-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../src/gateway/providers/provider.ts';
import { UpstreamError } from '../../src/gateway/protocol/upstream-error.ts';
import { collect, encodeSse, startMockUpstream, type MockUpstream } from './helpers/mock-upstream.ts';
import { offsetAfterEvents, readFixture, readFixtureJson, readFixtureSseData, replayFixture, serveFixture } from './helpers/replay-fixture.ts';

const KEY = 'sk-ant-api03-test-key';
const request: ChatRequest = {
  model: 'claude-sonnet-4.5',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
  ],
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
};

const message = readFixtureJson('anthropic', 'message.json') as { usage: unknown };
const toolStream = readFixture('anthropic', 'messages-tool-use.sse');

describe('anthropic provider', () => {
  let upstream: MockUpstream;
  let provider: Provider;
  const signal = new AbortController().signal;

  before(async () => {
    upstream = await startMockUpstream(serveFixture('anthropic', 'message.json'));
    provider = createAnthropicProvider({ name: 'anthropic', baseUrl: upstream.url, apiKey: KEY, timeoutMs: 2000 });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('posts to /v1/messages with x-api-key and anthropic-version, and converts the message', async () => {
    upstream.setHandler(serveFixture('anthropic', 'message.json'));
    const result = await provider.chat({ request, upstreamModel: 'claude-sonnet-4-5' }, signal);
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.url, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], KEY);
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.equal(sent.headers.authorization, undefined);
    assert.deepEqual((sent.body as { system: unknown }).system, [{ type: 'text', text: 'Be brief.' }]);
    assert.equal((sent.body as { max_tokens: number }).max_tokens, 4096);

    assert.equal(result.response.model, 'claude-sonnet-4-5-20250929');
    assert.deepEqual(result.response.choices[0], {
      index: 0,
      logprobs: null,
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: "I'll check the weather.",
        tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
    });
    assert.equal(result.rawFinishReason, 'tool_use');
    // OpenAI counts cached tokens inside prompt_tokens: 50 + 100 read + 20 written.
    assert.deepEqual(result.usage, {
      promptTokens: 170,
      cachedPromptTokens: 100,
      cacheWriteTokens: 20,
      completionTokens: 30,
      reasoningTokens: 0,
      estimated: false,
      raw: message.usage,
    });
    assert.equal(result.response.usage?.prompt_tokens, 170);
    assert.equal(result.response.usage?.prompt_tokens_details?.cached_tokens, 100);
  });

  it('translates the full streaming event sequence into OpenAI chunks with tool-call deltas', async () => {
    upstream.setHandler(serveFixture('anthropic', 'messages-tool-use.sse'));
    const events = await collect(provider.stream({ request, upstreamModel: 'claude-sonnet-4-5' }, signal));
    assert.equal((upstream.requests.at(-1)!.body as { stream: boolean }).stream, true);
    const chunks = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk] : []));
    assert.ok(chunks.every((c) => c.id === 'msg_014p7gG3wDgGV9EUtLvnow3U' && c.object === 'chat.completion.chunk'));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), 'Let me check.');
    assert.deepEqual(toolCalls(chunks), [
      { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '{"city": "Paris"}' },
      { id: 'toolu_02', name: 'now', arguments: '{}' },
    ]);
    assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'tool_calls');
    const usage = events.find((e): e is Extract<ProviderStreamEvent, { type: 'usage' }> => e.type === 'usage')!.usage;
    assert.equal(usage.promptTokens, 600);
    assert.equal(usage.cachedPromptTokens, 128);
    assert.equal(usage.completionTokens, 89);
    assert.equal(usage.estimated, false);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'tool_calls', rawFinishReason: 'tool_use' });
  });

  it('emits warnings first for settings Anthropic ignores', async () => {
    upstream.setHandler(serveFixture('anthropic', 'messages-tool-use.sse'));
    const events = await collect(provider.stream({ request: { ...request, seed: 7 }, upstreamModel: 'claude-sonnet-4-5' }, signal));
    assert.deepEqual(events[0], { type: 'warnings', warnings: [{ param: 'seed', message: "Anthropic does not support 'seed'; it was not sent" }] });
  });

  it('turns an `error` event mid-stream into an UpstreamError after the chunks already sent', async () => {
    upstream.setHandler(serveFixture('anthropic', 'messages-error-mid-stream.sse'));
    const seen: ProviderStreamEvent[] = [];
    const err = await rejection(
      (async () => {
        for await (const e of provider.stream({ request, upstreamModel: 'c' }, signal)) seen.push(e);
      })(),
    );
    assert.equal(err.code, 'UPSTREAM_UNAVAILABLE');
    assert.equal(err.upstreamType, 'overloaded_error');
    assert.match(err.message, /overloaded_error: Overloaded/);
    assert.equal(seen.length, 2);
  });

  it('maps HTTP 529 overloaded, 429 with retry-after, and a too-long prompt', async () => {
    upstream.setHandler(serveFixture('anthropic', 'error-529-overloaded.json'));
    let err = await rejection(provider.chat({ request, upstreamModel: 'c' }, signal));
    assert.equal(err.code, 'UPSTREAM_UNAVAILABLE');
    assert.equal(err.status, 529);

    upstream.setHandler(serveFixture('anthropic', 'error-429-rate-limit.json'));
    err = await rejection(provider.chat({ request, upstreamModel: 'c' }, signal));
    assert.equal(err.code, 'UPSTREAM_RATE_LIMITED');
    assert.equal(err.retryAfterSeconds, 12);

    upstream.setHandler(serveFixture('anthropic', 'error-400-prompt-too-long.json'));
    err = await rejection(provider.chat({ request, upstreamModel: 'c' }, signal));
    assert.equal(err.failure, 'context_length');
    assert.equal(err.transient, false);
  });

  it('fails a stream that ends before message_stop', async () => {
    upstream.setHandler(serveFixture('anthropic', 'messages-cut.sse'));
    const err = await rejection(collect(provider.stream({ request, upstreamModel: 'c' }, signal)));
    assert.equal(err.failure, 'interrupted');
    assert.match(err.message, /before message_stop/);
  });

  it('fails a connection reset mid-stream and malformed event data', async () => {
    upstream.setHandler(serveFixture('anthropic', 'messages-tool-use.sse', { resetAfterBytes: offsetAfterEvents(toolStream, 3) }));
    let err = await rejection(collect(provider.stream({ request, upstreamModel: 'c' }, signal)));
    assert.equal(err.failure, 'interrupted');
    const start = readFixtureSseData('anthropic', 'messages-tool-use.sse')[0]!;
    const broken = encodeSse([
      { event: 'message_start', data: start },
      { event: 'content_block_delta', data: '{"type": "content_block_delta", "index": 0, "delta": {' },
    ]);
    upstream.setHandler((_req, res) => replayFixture(res, { ...toolStream, body: Buffer.from(broken), text: broken }));
    err = await rejection(collect(provider.stream({ request, upstreamModel: 'c' }, signal)));
    assert.equal(err.failure, 'malformed');
  });
});

function toolCalls(chunks: ChatChunk[]): Array<{ id: string; name: string; arguments: string }> {
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0].delta.tool_calls ?? []) {
      calls[delta.index] ??= { id: '', name: '', arguments: '' };
      if (delta.id) calls[delta.index].id = delta.id;
      if (delta.function?.name) calls[delta.index].name = delta.function.name;
      calls[delta.index].arguments += delta.function?.arguments ?? '';
    }
  }
  return calls;
}

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof UpstreamError, `expected UpstreamError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}
