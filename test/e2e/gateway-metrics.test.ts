// The gateway's herd_gateway_* series on the real metrics endpoint, after real requests with the openai
// SDK against a local upstream: one count per request however it ended, tokens, USD cost, cache, state gauges.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { hang, openAICompletion, openAIErrorBody, openAIStreamFrames, scriptedUpstream, status, type ScriptedUpstream } from '../gateway/helpers/gateway-fixtures.ts';
import { startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { parseExposition, sampleValue, type ExpositionFamily } from '../metrics/parse-exposition.ts';

const MASTER = 'sk-herd-master-key-for-the-metrics-tests-0123456789';
const ENV = { HOLYSHEEP_API_KEY: 'sk-upstream-hs', HERD_METRICS_MASTER: MASTER };
type Families = Map<string, ExpositionFamily>;

describe('gateway metrics on the shared registry', () => {
  let relay: MockUpstream;
  let script: ScriptedUpstream;
  let server: HerdServer;
  let client: OpenAI;
  let brokeKey: string;
  let sent = 0;

  before(async () => {
    script = scriptedUpstream({ okJson: openAICompletion('gpt-4.1', 'Bonjour'), okFrames: openAIStreamFrames('gpt-4.1', ['Bon', 'jour']), errorBody: openAIErrorBody });
    relay = await startMockUpstream(script.handler);
    const dir = mkdtempSync(join(tmpdir(), 'herd-gateway-metrics-'));
    const db = join(dir, 'herd.db');
    const store = await TestKeys.open(db);
    brokeKey = (await store.create({ name: 'broke', allowedModels: '*', budgetDayMicros: 1 })).secret;
    await store.close();
    // Settling in USD with a ¥1/$-style rate of 1.0 makes the cost exactly the list price: tokens × USD per million.
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_METRICS_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 20 }
providers:
  holysheep: { type: openai, base_url: "${relay.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 2, base_ms: 5, cap_ms: 20 } }
  openai: { type: openai, exchange_rate: 7.3 }
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: holysheep }, { provider: openai }]
  deepseek-v3.2:
    price: { input: 0.28, output: 0.42 }
    deployments: [{ provider: holysheep, upstream_model: deepseek-chat }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
    client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
    await relay.close();
  });

  const scrape = async (): Promise<Families> => parseExposition(await (await fetch(`${server.metricsUrl}/metrics`)).text());
  /** The observer reports once billing has settled, which may be just after the client has its answer. */
  const requestsCounted = async (): Promise<Families> => {
    for (let i = 0; ; i++) {
      const families = await scrape();
      const counted = (families.get('herd_gateway_requests_total')?.samples ?? []).reduce((sum, s) => sum + s.value, 0);
      if (counted >= sent || i === 100) {
        assert.equal(counted, sent, 'one count per request that reached the gateway');
        return families;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const histogramCount = (f: Families, family: string, labels: Record<string, string>) =>
    f.get(family)?.samples.find((s) => s.name === `${family}_count` && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  const gpt = { model: 'gpt-4.1', provider: 'holysheep' };
  const ask = { model: 'gpt4', messages: [{ role: 'user' as const, content: 'hello metrics' }] };

  it('answered requests: count, tokens by kind, USD cost, upstream latency, time to first token', async () => {
    const first = await client.chat.completions.create({ ...ask, temperature: 0 }).withResponse();
    sent++;
    assert.equal(first.response.headers.get('x-herd-cache'), 'miss');
    const stream = await client.chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
    sent++;
    for await (const _chunk of stream) {
      /* read to the end */
    }

    const f = await requestsCounted();
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { ...gpt, status_class: '2xx', cache: 'miss' }), 1);
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { ...gpt, status_class: '2xx', cache: 'off' }), 1);
    // Completion: 12 prompt (4 cached) + 3 completion; stream: 9 + 2.
    assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'prompt' }), 21);
    assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'cached_prompt' }), 4);
    assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'completion' }), 5);
    // (12×2 + 3×8) + (9×2 + 2×8) = 48 + 34 micro-USD.
    assert.equal(sampleValue(f, 'herd_gateway_cost_usd_total', gpt), 0.000082);
    assert.equal(histogramCount(f, 'herd_gateway_upstream_latency_seconds', { provider: 'holysheep' }), 2);
    assert.equal(histogramCount(f, 'herd_gateway_time_to_first_token_seconds', { provider: 'holysheep' }), 1);
    assert.equal(histogramCount(f, 'herd_gateway_overhead_seconds', { cache: 'miss' }), 1);
    assert.equal(histogramCount(f, 'herd_gateway_queue_wait_seconds', {}), 2);
  });

  it('a cache hit counts as a hit with the cost it saved, and the cache counters agree', async () => {
    const hit = await client.chat.completions.create({ ...ask, temperature: 0 }).withResponse();
    sent++;
    assert.equal(hit.response.headers.get('x-herd-cache'), 'hit');
    const f = await requestsCounted();
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { ...gpt, status_class: '2xx', cache: 'hit' }), 1);
    assert.equal(sampleValue(f, 'herd_gateway_cache_saved_usd_total', gpt), 0.000048);
    assert.equal(sampleValue(f, 'herd_gateway_cost_usd_total', gpt), 0.000082, 'a hit costs nothing');
    assert.equal(histogramCount(f, 'herd_gateway_overhead_seconds', { cache: 'hit' }), 1);
    assert.equal(sampleValue(f, 'herd_gateway_cache_hits_total', { tier: 'memory' }), 1);
    assert.equal(sampleValue(f, 'herd_gateway_cache_misses_total'), 1);
    assert.equal(sampleValue(f, 'herd_gateway_cache_entries'), 1);
  });

  it('failures count once each, by status class, with bounded labels', async () => {
    await assert.rejects(client.chat.completions.create({ ...ask, model: 'gpt-5-turbo-from-a-client' }), OpenAI.NotFoundError);
    sent++;
    script.script(status(503), status(503));
    await assert.rejects(client.chat.completions.create({ ...ask, model: 'deepseek-v3.2' }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 503);
    sent++;
    const broke = new OpenAI({ apiKey: brokeKey, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
    await assert.rejects(broke.chat.completions.create(ask), (err: unknown) => err instanceof OpenAI.RateLimitError && err.code === 'insufficient_quota');
    sent++;
    script.script({ kind: 'stream-reset', after: 2 });
    const cut = await client.chat.completions.create({ ...ask, stream: true });
    sent++;
    await assert.rejects(async () => {
      for await (const _chunk of cut) {
        /* until the cut */
      }
    });

    const f = await requestsCounted();
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { model: 'unknown', provider: 'none', status_class: '4xx', cache: 'off' }), 1);
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { model: 'deepseek-v3.2', provider: 'holysheep', status_class: '5xx' }), 1);
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { model: 'gpt-4.1', provider: 'none', status_class: '4xx' }), 1, 'refused by the budget before any upstream');
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { ...gpt, status_class: '2xx', cache: 'off' }), 2, 'a stream cut after its first chunk was answered 200');
    const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    assert.doesNotMatch(text, /gpt-5-turbo|model="gpt4"/, "no label value comes from the client's model string");
  });

  it('answers refused before the gateway count too: a bad key, malformed JSON, no messages, a body too large to read', async () => {
    const before = sampleValue(await requestsCounted(), 'herd_gateway_requests_total', { model: 'unknown', provider: 'none', status_class: '4xx', cache: 'off' }) ?? 0;
    const post = (body: string, apiKey = MASTER, headers: Record<string, string> = {}) =>
      fetch(`${server.httpUrl}/v1/chat/completions`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
      });
    const answers = [
      await post(JSON.stringify(ask), 'sk-not-a-key-of-this-gateway-0123456789'),
      await post('{"model": "gpt4", "messages": ['),
      await post(JSON.stringify({ model: 'gpt4', messages: [] })),
      // Through Fastify (a content coding it does not know), refused before the exchange runs.
      await post(JSON.stringify(ask), MASTER, { 'content-encoding': 'br' }),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [401, 400, 400, 400],
    );
    sent += answers.length;
    const f = await requestsCounted();
    assert.equal(sampleValue(f, 'herd_gateway_requests_total', { model: 'unknown', provider: 'none', status_class: '4xx', cache: 'off' }), before + answers.length);
  });

  it('state gauges: breaker per deployment, queue depth per upstream model', async () => {
    const f = await scrape();
    assert.equal(f.get('herd_gateway_breaker_state')?.type, 'gauge');
    assert.equal(sampleValue(f, 'herd_gateway_breaker_state', { provider: 'holysheep', upstream_model: 'gpt-4.1' }), 0);
    const deepseek = sampleValue(f, 'herd_gateway_breaker_state', { provider: 'holysheep', upstream_model: 'deepseek-chat' });
    assert.ok(deepseek !== undefined && [0, 1, 2].includes(deepseek));
    assert.equal(sampleValue(f, 'herd_gateway_breaker_state', { provider: 'openai' }), undefined, 'a disabled provider has no deployment to watch');
    assert.equal(sampleValue(f, 'herd_gateway_queue_depth', { upstream: 'holysheep/gpt-4.1' }), 0);
  });

  it('requests in flight: a request waiting on its upstream counts until the client leaves', async () => {
    const until = async (value: number) => {
      for (let i = 0; i < 200; i++) {
        if (sampleValue(await scrape(), 'herd_gateway_requests_in_flight') === value) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.fail(`herd_gateway_requests_in_flight never read ${value}`);
    };
    await until(0);
    script.script(hang, hang);
    const controller = new AbortController();
    const pending = fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask),
      signal: controller.signal,
    }).catch(() => undefined);
    sent++;
    await until(1);
    controller.abort();
    await pending;
    await until(0);
  });
});
