// The chat service end to end against local upstreams speaking OpenAI's and Anthropic's wire formats:
// routing, retries honouring Retry-After, the fallback chain, streams (no switch after the first chunk),
// breakers, deadlines and client aborts. Sleeps are recorded, not slept, unless a test needs real time.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/core/clock.ts';
import { HerdError } from '../../../src/core/errors.ts';
import type { ChatChunk, ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { createChatService, type ChatService, type ChatServiceOptions } from '../../../src/gateway/flow/chat-service.ts';
import { UpstreamRouteError } from '../../../src/gateway/router/attempt-record.ts';
import { realSleep, type Sleep } from '../../../src/gateway/resilience/sleep.ts';
import {
  anthropicErrorBody,
  anthropicMessage,
  gatewayConfig,
  hang,
  ok,
  openAICompletion,
  openAIErrorBody,
  openAIStreamFrames,
  reset,
  scriptedUpstream,
  seededRandom,
  status,
  type ScriptedUpstream,
} from '../helpers/gateway-fixtures.ts';
import { canonicalChunk } from '../../../src/gateway/protocol/raw-sse.ts';
import { collectChunks, pause, startMockUpstream, type MockUpstream, type SseFrame } from '../helpers/mock-upstream.ts';

const frame = (data: { type: string } & Record<string, unknown>): SseFrame => ({ event: data.type, data });
const anthropicFrames: SseFrame[] = [
  frame({
    type: 'message_start',
    message: {
      id: 'msg_s',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 1 },
    },
  }),
  frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Bonjour' } }),
  frame({ type: 'content_block_stop', index: 0 }),
  frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }),
  frame({ type: 'message_stop' }),
];

const NAMES = ['anthropic', 'holysheep', 'openai', 'deepseek'] as const;
type Name = (typeof NAMES)[number];
const ENV = { ANTHROPIC_API_KEY: 'sk-ant', HOLYSHEEP_API_KEY: 'sk-hs', OPENAI_API_KEY: 'sk-oa', DEEPSEEK_API_KEY: 'sk-ds' };

const ask = (model: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model, messages: [{ role: 'user', content: 'Say hello in French' }], ...extra });

describe('chat service', () => {
  const mocks = {} as Record<Name, MockUpstream>;
  const scripts = {} as Record<Name, ScriptedUpstream>;
  let service: ChatService | undefined;
  let sleeps: number[] = [];
  const recordSleep: Sleep = async (ms, signal) => {
    sleeps.push(ms);
    if (signal.aborted) throw signal.reason;
  };

  before(async () => {
    scripts.anthropic = scriptedUpstream({ okJson: anthropicMessage('claude-sonnet-4-5', 'Bonjour'), okFrames: anthropicFrames, errorBody: anthropicErrorBody });
    for (const name of ['holysheep', 'openai', 'deepseek'] as const) {
      const model = name === 'deepseek' ? 'deepseek-chat' : 'gpt-4.1';
      scripts[name] = scriptedUpstream({
        okJson: openAICompletion(model, `Bonjour from ${name}`),
        okFrames: openAIStreamFrames(model, ['Bon', 'jour']),
        errorBody: openAIErrorBody,
      });
    }
    for (const name of NAMES) mocks[name] = await startMockUpstream(scripts[name].handler);
  });
  after(async () => {
    for (const name of NAMES) await mocks[name].close();
  });
  beforeEach(() => {
    sleeps = [];
    for (const name of NAMES) {
      mocks[name].requests.length = 0;
      scripts[name].script();
    }
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  function start(options: { extra?: Partial<Record<Name, string>>; env?: Record<string, string>; overrides?: Partial<ChatServiceOptions> } = {}): ChatService {
    const config = gatewayConfig(`
providers:
  anthropic: { type: anthropic, base_url: "${mocks.anthropic.url}", exchange_rate: 7.3, timeout_ms: 300, retry: { attempts: 2, base_ms: 10, cap_ms: 3000 } }
  holysheep: { type: openai, base_url: "${mocks.holysheep.url}/v1", exchange_rate: 1.0, timeout_ms: 300, retry: { attempts: 2, base_ms: 10, cap_ms: 3000 }${options.extra?.holysheep ?? ''} }
  openai: { type: openai, base_url: "${mocks.openai.url}/v1", exchange_rate: 7.3, timeout_ms: 300, retry: { attempts: 1 } }
  deepseek: { type: openai, base_url: "${mocks.deepseek.url}", exchange_rate: 7.3, timeout_ms: 300${options.extra?.deepseek ?? ''} }
models:
  claude-sonnet-4.5:
    aliases: [claude-sonnet-4-5]
    context_window: 200000
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5 }]
    fallbacks: [gpt-4.1]
  gpt-4.1:
    context_window: 1047576
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: holysheep }, { provider: openai }]
    fallbacks: [deepseek-v3.2]
  deepseek-v3.2:
    price: { input: 0.28, output: 0.42 }
    deployments: [{ provider: deepseek, upstream_model: deepseek-chat }]
`);
    service = createChatService({ config, env: options.env ?? ENV, random: seededRandom(3), sleep: recordSleep, ...options.overrides });
    return service;
  }
  const requestCounts = () => Object.fromEntries(NAMES.map((n) => [n, mocks[n].requests.length]));

  it('answers through an alias with the public model name, provider, attempts and upstream time', async () => {
    const { response, meta } = await start().complete(ask('claude-sonnet-4-5'));
    assert.equal(response.model, 'claude-sonnet-4.5');
    assert.equal(response.choices[0]!.message.content, 'Bonjour');
    assert.equal((mocks.anthropic.requests[0]!.body as { model: string }).model, 'claude-sonnet-4-5');
    assert.deepEqual(
      [meta.requestedModel, meta.route, meta.model, meta.provider, meta.upstreamModel, meta.attempts.length],
      ['claude-sonnet-4-5', 'alias', 'claude-sonnet-4.5', 'anthropic', 'claude-sonnet-4-5', 1],
    );
    assert.ok(meta.upstreamMs > 0 && meta.overheadMs >= 0 && meta.waitedMs === 0);
    assert.equal(meta.usage.promptTokens, 20);
    assert.equal(meta.usage.estimated, false);
    assert.equal(response.usage?.prompt_tokens, 20);
  });

  it('cheapest sends gpt-4.1 to the ¥1/$ relay rather than the ¥7.3/$ official API', async () => {
    const { meta } = await start().complete(ask('gpt-4.1'));
    assert.equal(meta.provider, 'holysheep');
    assert.deepEqual(requestCounts(), { anthropic: 0, holysheep: 1, openai: 0, deepseek: 0 });
  });

  it('retries a 429 on the same deployment after the Retry-After it asked for', async () => {
    scripts.holysheep.script(status(429, { 'retry-after': '2' }), ok);
    const { meta } = await start().complete(ask('gpt-4.1'));
    assert.deepEqual(sleeps, [2000]);
    assert.deepEqual(
      meta.attempts.map((a) => [a.provider, a.outcome, a.next, a.waitMs]),
      [
        ['holysheep', 'rate_limited', 'retry', 2000],
        ['holysheep', 'ok', undefined, undefined],
      ],
    );
    assert.equal(meta.provider, 'holysheep');
  });

  it('a Retry-After beyond cap_ms moves to the next deployment instead of sleeping', async () => {
    scripts.holysheep.script(status(429, { 'retry-after': '10' }));
    const { meta } = await start().complete(ask('gpt-4.1'));
    assert.deepEqual(sleeps, []);
    assert.equal(meta.provider, 'openai');
    assert.equal(meta.attempts[0]!.next, 'next-deployment');
  });

  it('falls back claude-sonnet-4.5 → gpt-4.1 → deepseek-v3.2 through 429, 503, timeout and reset', async () => {
    scripts.anthropic.script(status(429), status(503));
    scripts.holysheep.script(hang, reset);
    scripts.openai.script(status(503));
    const { response, meta } = await start().complete(ask('claude-sonnet-4.5'));
    assert.equal(response.model, 'deepseek-v3.2');
    assert.equal(response.choices[0]!.message.content, 'Bonjour from deepseek');
    assert.deepEqual([meta.model, meta.provider, meta.upstreamModel], ['deepseek-v3.2', 'deepseek', 'deepseek-chat']);
    assert.deepEqual(
      meta.attempts.map((a) => `${a.model}@${a.provider}:${a.outcome}→${a.next ?? ''}`),
      [
        'claude-sonnet-4.5@anthropic:rate_limited→retry',
        'claude-sonnet-4.5@anthropic:unavailable→next-deployment',
        'gpt-4.1@holysheep:timeout→retry',
        'gpt-4.1@holysheep:unavailable→next-deployment',
        'gpt-4.1@openai:unavailable→next-deployment',
        'deepseek-v3.2@deepseek:ok→',
      ],
    );
    assert.equal(sleeps.length, 2);
  });

  it('a 400 answers the client at once: no retry, no fallback', async () => {
    scripts.holysheep.script(status(400, {}, { error: { message: "Invalid value for 'temperature'", type: 'invalid_request_error', param: 'temperature', code: null } }));
    await assert.rejects(start().complete(ask('gpt-4.1')), (err: unknown) => {
      assert.ok(err instanceof UpstreamRouteError);
      assert.equal(err.failure, 'invalid_request');
      assert.equal(err.status, 400);
      assert.match(err.message, /Invalid value for 'temperature'/);
      assert.equal(err.attempts.length, 1);
      return true;
    });
    assert.deepEqual(requestCounts(), { anthropic: 0, holysheep: 1, openai: 0, deepseek: 0 });
  });

  it("a context-length error skips the model's other deployments and tries the next model", async () => {
    scripts.holysheep.script(status(400, {}, { error: { message: 'maximum context length is 1047576 tokens', type: 'invalid_request_error', code: 'context_length_exceeded' } }));
    const { meta } = await start().complete(ask('gpt-4.1'));
    assert.equal(meta.model, 'deepseek-v3.2');
    assert.deepEqual(requestCounts(), { anthropic: 0, holysheep: 1, openai: 0, deepseek: 1 });
  });

  it('when every upstream fails, the last failure comes back with the whole trail', async () => {
    scripts.holysheep.script(status(503), status(503));
    scripts.openai.script(status(503));
    scripts.deepseek.script(status(500), status(500), status(500));
    await assert.rejects(start().complete(ask('gpt-4.1')), (err: unknown) => {
      assert.ok(err instanceof UpstreamRouteError);
      assert.equal(err.code, 'UPSTREAM_ERROR');
      assert.equal(err.failure, 'server_error');
      assert.equal(err.attempts.length, 6);
      assert.match(err.message, /^`gpt-4\.1`: every upstream failed after 6 attempts; last: deepseek: upstream returned HTTP 500/);
      return true;
    });
  });

  it('streams: a failure before the first chunk falls back; the usage chunk comes only when asked for', async () => {
    scripts.holysheep.script(status(503), status(503));
    const stream = await start().stream(ask('gpt-4.1', { stream: true, stream_options: { include_usage: true } }));
    assert.deepEqual([stream.meta.model, stream.meta.provider, stream.meta.attempts.length], ['gpt-4.1', 'openai', 3]);
    const chunks = await collectChunks(stream.chunks);
    assert.ok(chunks.every((c) => c.model === 'gpt-4.1'));
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Bonjour');
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage?.prompt_tokens, 9);
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
    const result = await stream.result;
    assert.equal(result.outcome, 'completed');
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.usage.promptTokens, 9);

    const plain = await service!.stream(ask('gpt-4.1', { stream: true }));
    const plainChunks = await collectChunks(plain.chunks);
    assert.ok(plainChunks.every((c) => c.choices.length > 0 && c.usage === undefined));
  });

  it('streams from an Anthropic upstream as OpenAI chunks under the public model name', async () => {
    const stream = await start().stream(ask('claude-sonnet-4-5', { stream: true, stream_options: { include_usage: true } }));
    assert.deepEqual([stream.meta.model, stream.meta.provider, stream.meta.route], ['claude-sonnet-4.5', 'anthropic', 'alias']);
    const chunks = await collectChunks(stream.chunks);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Bonjour');
    assert.ok(chunks.every((c) => c.model === 'claude-sonnet-4.5'));
    assert.deepEqual(chunks.at(-1)!.usage, {
      prompt_tokens: 20,
      completion_tokens: 2,
      total_tokens: 22,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    assert.equal((await stream.result).finishReason, 'stop');
  });

  it('never switches upstream after the first chunk: a mid-stream reset ends the stream with an error', async () => {
    scripts.holysheep.script({ kind: 'stream-reset', after: 2 });
    const stream = await start().stream(ask('gpt-4.1', { stream: true }));
    const received: ChatChunk[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of stream.chunks) received.push(canonicalChunk(chunk));
      })(),
      (err: unknown) => {
        assert.ok(err instanceof UpstreamRouteError);
        assert.equal(err.failure, 'interrupted');
        assert.match(err.message, /^stream interrupted after 2 chunks: holysheep: /);
        return true;
      },
    );
    assert.equal(received.length, 2);
    assert.deepEqual(requestCounts(), { anthropic: 0, holysheep: 1, openai: 0, deepseek: 0 });
    const result = await stream.result;
    assert.equal(result.outcome, 'failed');
    assert.equal(result.usage.estimated, true);
    assert.equal(service!.health().breakers.find((b) => b.key === 'holysheep/gpt-4.1')!.failures, 1);
  });

  it('a client abort stops the upstream call in flight and every retry and fallback', async () => {
    scripts.holysheep.script(hang);
    const controller = new AbortController();
    const startedAt = Date.now();
    const pending = start({ overrides: { sleep: realSleep } }).complete(ask('gpt-4.1'), { signal: controller.signal });
    setTimeout(() => controller.abort(new DOMException('client went away', 'AbortError')), 50);
    await assert.rejects(pending, { name: 'AbortError', message: 'client went away' });
    assert.ok(Date.now() - startedAt < 250, 'rejected before the 300 ms upstream timeout');
    await pause(350);
    assert.deepEqual(requestCounts(), { anthropic: 0, holysheep: 1, openai: 0, deepseek: 0 });
    assert.equal(service!.health().breakers.find((b) => b.key === 'holysheep/gpt-4.1')!.inFlight, 0);
  });

  it('a client abort during a Retry-After wait ends the wait', async () => {
    scripts.holysheep.script(status(429, { 'retry-after': '2' }));
    const controller = new AbortController();
    const pending = start({ overrides: { sleep: realSleep } }).complete(ask('gpt-4.1'), { signal: controller.signal });
    setTimeout(() => controller.abort(new DOMException('gone', 'AbortError')), 60);
    await assert.rejects(pending, { name: 'AbortError' });
    assert.deepEqual(requestCounts(), { anthropic: 0, holysheep: 1, openai: 0, deepseek: 0 });
  });

  it('a client abort mid-stream releases the upstream and settles the stream as cancelled', async () => {
    mocks.holysheep.setHandler(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content: 'Bon' }, finish_reason: null }] })}\n\n`,
      );
      // …and then nothing more.
    });
    try {
      const controller = new AbortController();
      const stream = await start().stream(ask('gpt-4.1', { stream: true }), { signal: controller.signal });
      const iterator = stream.chunks[Symbol.asyncIterator]();
      assert.equal((await iterator.next()).value?.choices[0]?.delta.content, 'Bon');
      const next = iterator.next();
      controller.abort(new DOMException('gone', 'AbortError'));
      await assert.rejects(next, { name: 'AbortError' });
      assert.equal((await stream.result).outcome, 'cancelled');
      assert.equal(service!.health().breakers.find((b) => b.key === 'holysheep/gpt-4.1')!.inFlight, 0);
    } finally {
      mocks.holysheep.setHandler(scripts.holysheep.handler);
    }
  });

  it('an open breaker takes a failing deployment out of rotation until its half-open probe succeeds', async () => {
    const clock = new ManualClock();
    const svc = start({
      extra: { holysheep: ', breaker: { min_requests: 2, failure_ratio: 0.5, cooldown_ms: 1000 }' },
      overrides: { clock },
    });
    scripts.holysheep.script(status(503), status(503), status(503), status(503));
    assert.equal((await svc.complete(ask('gpt-4.1'))).meta.provider, 'openai');
    assert.equal(svc.health().breakers.find((b) => b.key === 'holysheep/gpt-4.1')!.breaker, 'open');
    const before = mocks.holysheep.requests.length;
    const { meta } = await svc.complete(ask('gpt-4.1'));
    assert.deepEqual([meta.provider, meta.attempts.length, mocks.holysheep.requests.length], ['openai', 1, before]);
    const health = svc.health().breakers.find((b) => b.key === 'holysheep/gpt-4.1')!;
    assert.deepEqual([health.breaker, health.retryInMs], ['open', 1000]);

    clock.advance(1000);
    scripts.holysheep.script(ok);
    assert.equal((await svc.complete(ask('gpt-4.1'))).meta.provider, 'holysheep', 'the probe went to holysheep and succeeded');
    assert.equal(svc.health().breakers.find((b) => b.key === 'holysheep/gpt-4.1')!.breaker, 'closed');
  });

  it('with every deployment behind an open breaker, the answer is UNAVAILABLE with a Retry-After', async () => {
    const clock = new ManualClock();
    const svc = start({ extra: { deepseek: ', retry: { attempts: 1 }, breaker: { min_requests: 1, cooldown_ms: 7500 }' }, overrides: { clock } });
    scripts.deepseek.script(status(500));
    await assert.rejects(svc.complete(ask('deepseek-v3.2')), { name: 'UpstreamRouteError', failure: 'server_error' });
    clock.advance(1000);
    await assert.rejects(svc.complete(ask('deepseek-v3.2')), (err: unknown) => {
      assert.ok(err instanceof HerdError && !(err instanceof UpstreamRouteError));
      assert.equal(err.code, 'UNAVAILABLE');
      assert.equal(err.retryAfterSeconds, 7);
      assert.match(err.message, /^The model `deepseek-v3.2` is temporarily unavailable: its upstreams are failing \(skipped: deepseek\/deepseek-chat: circuit open\)\.$/);
      return true;
    });
    assert.equal(mocks.deepseek.requests.length, 1);
  });

  it('the total deadline bounds retries and fallbacks', async () => {
    scripts.holysheep.script(hang, hang);
    const startedAt = Date.now();
    await assert.rejects(start({ overrides: { sleep: realSleep } }).complete(ask('gpt-4.1'), { deadlineMs: 150 }), (err: unknown) => {
      assert.ok(err instanceof UpstreamRouteError);
      assert.equal(err.code, 'UPSTREAM_TIMEOUT');
      assert.match(err.message, /^no answer within the 150 ms deadline after 1 attempt; last: holysheep: upstream timed out/);
      return true;
    });
    assert.ok(Date.now() - startedAt < 290);
    assert.equal(mocks.openai.requests.length, 0);
  });

  it('disabled providers: listed with the reason; their models unavailable; unknown names are NOT_FOUND', async () => {
    const svc = start({ env: { HOLYSHEEP_API_KEY: 'k', ANTHROPIC_API_KEY: 'k' } });
    assert.deepEqual(
      (await svc.listModels()).map((m) => [m.id, m.owned_by, m.herd.providers]),
      [
        ['claude-sonnet-4.5', 'anthropic', ['anthropic']],
        ['gpt-4.1', 'holysheep', ['holysheep']],
      ],
    );
    assert.deepEqual(
      (await svc.listModels((m) => m === 'gpt-4.1')).map((m) => m.id),
      ['gpt-4.1'],
    );
    const health = svc.health();
    assert.deepEqual(
      health.providers.filter((p) => !p.enabled).map((p) => [p.name, p.reason]),
      [
        ['openai', 'OPENAI_API_KEY is not set'],
        ['deepseek', 'DEEPSEEK_API_KEY is not set'],
      ],
    );
    assert.deepEqual(
      health.models.find((m) => m.name === 'deepseek-v3.2'),
      { name: 'deepseek-v3.2', available: false, reasons: ['deepseek: DEEPSEEK_API_KEY is not set'] },
    );
    await assert.rejects(
      svc.complete(ask('deepseek-v3.2')),
      (err: unknown) => err instanceof HerdError && err.code === 'UNAVAILABLE' && /deepseek: DEEPSEEK_API_KEY is not set/.test(err.message),
    );
    await assert.rejects(
      svc.complete(ask('gpt-5')),
      (err: unknown) => err instanceof HerdError && err.code === 'NOT_FOUND' && err.message.endsWith('Available models: claude-sonnet-4.5, gpt-4.1.'),
    );
  });
});
