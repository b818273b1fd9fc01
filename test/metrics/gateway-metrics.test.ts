// The herd_gateway_* families: per-request counters and histograms from plain samples (bounded labels,
// exact USD sums), gauges read from cache, queue and breaker state at scrape time, and the cost of one sample.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { registerGatewayRequestMetrics, type GatewayRequestSample } from '../../src/metrics/gateway-metrics.ts';
import { registerGatewayStateMetrics, type GatewayStateSources } from '../../src/metrics/gateway-state-metrics.ts';
import { parseExposition, sampleValue, type ExpositionFamily } from './parse-exposition.ts';

const tokens = { promptTokens: 12, cachedPromptTokens: 4, cacheWriteTokens: 0, completionTokens: 3, reasoningTokens: 1 };

function setup() {
  const registry = new Registry();
  const metrics = registerGatewayRequestMetrics({ registry, models: ['gpt-4.1', 'deepseek-v3.2'], providers: ['holysheep', 'openai'] });
  const scrape = async () => parseExposition(await registry.metrics());
  return { registry, metrics, scrape };
}

/** A histogram child (`_bucket`, `_sum`, `_count`): parseExposition files them under the family's name. */
function seriesValue(families: Map<string, ExpositionFamily>, family: string, suffix: 'bucket' | 'sum' | 'count', labels: Record<string, string> = {}): number | undefined {
  const matches = (families.get(family)?.samples ?? []).filter((s) => s.name === `${family}_${suffix}` && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(matches.length <= 1, `${family}_${suffix} ${JSON.stringify(labels)} matches ${matches.length} samples`);
  return matches[0]?.value;
}

const answered = (overrides: Partial<GatewayRequestSample> = {}): GatewayRequestSample => ({
  model: 'gpt-4.1',
  provider: 'holysheep',
  statusClass: '2xx',
  cache: 'miss',
  tokens,
  usdMicros: 1,
  upstreamMs: 300,
  queuedMs: 0,
  overheadMs: 0.2,
  ...overrides,
});

test('nothing is exposed before the first request, but every family has its TYPE', async () => {
  const { scrape } = setup();
  const families = await scrape();
  assert.equal(families.get('herd_gateway_requests_total')?.type, 'counter');
  assert.equal(families.get('herd_gateway_tokens_total')?.type, 'counter');
  assert.equal(families.get('herd_gateway_cost_usd_total')?.type, 'counter');
  assert.equal(families.get('herd_gateway_cache_saved_usd_total')?.type, 'counter');
  for (const h of ['upstream_latency_seconds', 'time_to_first_token_seconds', 'queue_wait_seconds', 'overhead_seconds']) {
    assert.equal(families.get(`herd_gateway_${h}`)?.type, 'histogram', h);
  }
  assert.deepEqual(families.get('herd_gateway_requests_total')?.samples, []);
});

test('requests by model, provider, status class and cache; tokens by kind; cost summed exactly in USD', async () => {
  const { metrics, scrape } = setup();
  // 0.1 + 0.2 in floating point is not 0.3: the sum is kept in integer micros and divided once.
  for (const usdMicros of [100_000, 200_000]) metrics.onRequestFinished(answered({ usdMicros }));
  metrics.onRequestFinished(answered({ model: 'deepseek-v3.2', usdMicros: 7 }));
  metrics.onRequestFinished(answered({ statusClass: '5xx', cache: 'off', tokens: undefined, usdMicros: undefined, upstreamMs: undefined, overheadMs: undefined }));
  const f = await scrape();
  const gpt = { model: 'gpt-4.1', provider: 'holysheep' };
  assert.equal(sampleValue(f, 'herd_gateway_requests_total', { ...gpt, status_class: '2xx', cache: 'miss' }), 2);
  assert.equal(sampleValue(f, 'herd_gateway_requests_total', { ...gpt, status_class: '5xx', cache: 'off' }), 1);
  assert.equal(sampleValue(f, 'herd_gateway_requests_total', { model: 'deepseek-v3.2', status_class: '2xx' }), 1);
  assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'prompt' }), 24);
  assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'cached_prompt' }), 8);
  assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'cache_write' }), 0);
  assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'completion' }), 6);
  assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { ...gpt, kind: 'reasoning' }), 2);
  assert.match(f.get('herd_gateway_cost_usd_total')?.samples.find((s) => s.labels['model'] === 'gpt-4.1')?.line ?? '', / 0\.3$/);
  assert.equal(sampleValue(f, 'herd_gateway_cost_usd_total', { model: 'deepseek-v3.2' }), 0.000007);
  assert.equal(seriesValue(f, 'herd_gateway_upstream_latency_seconds', 'count', { provider: 'holysheep' }), 3);
  assert.equal(seriesValue(f, 'herd_gateway_upstream_latency_seconds', 'bucket', { provider: 'holysheep', le: '0.25' }), 0);
  assert.equal(seriesValue(f, 'herd_gateway_upstream_latency_seconds', 'bucket', { provider: 'holysheep', le: '0.5' }), 3);
  assert.equal(seriesValue(f, 'herd_gateway_queue_wait_seconds', 'count'), 4);
});

test('labels stay bounded: a model or provider outside config is "unknown"; "none" means no upstream was tried', async () => {
  const { metrics, scrape } = setup();
  metrics.onRequestFinished({ model: 'gpt-5-turbo-from-the-client', provider: 'none', statusClass: '4xx', cache: 'off', overheadMs: 0.05 });
  metrics.onRequestFinished(answered({ provider: 'a-provider-from-another-replica', cache: 'hit', tokens: undefined, usdMicros: undefined, savedUsdMicros: 3 }));
  const f = await scrape();
  assert.equal(sampleValue(f, 'herd_gateway_requests_total', { model: 'unknown', provider: 'none', status_class: '4xx', cache: 'off' }), 1);
  assert.equal(sampleValue(f, 'herd_gateway_requests_total', { model: 'gpt-4.1', provider: 'unknown', cache: 'hit' }), 1);
  assert.equal(sampleValue(f, 'herd_gateway_cache_saved_usd_total', { model: 'gpt-4.1', provider: 'unknown' }), 0.000003);
  const values = new Set((f.get('herd_gateway_requests_total')?.samples ?? []).flatMap((s) => [s.labels['model'], s.labels['provider']]));
  assert.deepEqual([...values].sort(), ['gpt-4.1', 'none', 'unknown']);
});

test('a cache hit counts its saving, not tokens or cost; overhead is split by cache outcome at µs resolution', async () => {
  const { metrics, scrape } = setup();
  metrics.onRequestFinished({ model: 'gpt-4.1', provider: 'holysheep', statusClass: '2xx', cache: 'hit', savedUsdMicros: 250, overheadMs: 0.08 });
  metrics.onRequestFinished(answered({ overheadMs: 3 }));
  const f = await scrape();
  assert.equal(sampleValue(f, 'herd_gateway_cache_saved_usd_total', { model: 'gpt-4.1' }), 0.00025);
  assert.equal(sampleValue(f, 'herd_gateway_tokens_total', { kind: 'prompt' }), 12, 'the miss only');
  assert.equal(sampleValue(f, 'herd_gateway_cost_usd_total', { model: 'gpt-4.1' }), 0.000001);
  assert.equal(seriesValue(f, 'herd_gateway_overhead_seconds', 'bucket', { cache: 'hit', le: '0.00005' }), 0);
  assert.equal(seriesValue(f, 'herd_gateway_overhead_seconds', 'bucket', { cache: 'hit', le: '0.0001' }), 1);
  assert.equal(seriesValue(f, 'herd_gateway_overhead_seconds', 'bucket', { cache: 'miss', le: '0.0025' }), 0);
  assert.equal(seriesValue(f, 'herd_gateway_overhead_seconds', 'bucket', { cache: 'miss', le: '0.005' }), 1);
});

test('time to first token only for streams, by provider', async () => {
  const { metrics, scrape } = setup();
  metrics.onRequestFinished(answered({ ttftMs: 180, upstreamMs: 900 }));
  metrics.onRequestFinished(answered({ provider: 'openai' }));
  const f = await scrape();
  assert.equal(seriesValue(f, 'herd_gateway_time_to_first_token_seconds', 'count', { provider: 'holysheep' }), 1);
  assert.equal(seriesValue(f, 'herd_gateway_time_to_first_token_seconds', 'bucket', { provider: 'holysheep', le: '0.2' }), 1);
  assert.equal(seriesValue(f, 'herd_gateway_time_to_first_token_seconds', 'count', { provider: 'openai' }), undefined);
});

test('state gauges read their sources at each scrape: cache, queue depth, breaker state', async () => {
  const registry = new Registry();
  const cache = { memoryHits: 5, redisHits: 2, misses: 9, evictions: 1, entries: 4, bytes: 2048 };
  let waiting = { HIGH: 1, NORMAL: 2, BATCH: 3 };
  const sources: GatewayStateSources = {
    cache: () => cache,
    modelQueues: () => [
      { upstreamModel: 'holysheep/gpt-4.1', waiting },
      { upstreamModel: 'openai/gpt-4.1', waiting: { HIGH: 0, NORMAL: 0, BATCH: 0 } },
    ],
    providerQueues: () => [{ provider: 'holysheep', waiting: { HIGH: 0, NORMAL: 1, BATCH: 0 } }],
    breakers: () => [
      { provider: 'holysheep', upstreamModel: 'gpt-4.1', breaker: 'closed' },
      { provider: 'openai', upstreamModel: 'gpt-4.1', breaker: 'half_open' },
      { provider: 'anthropic', upstreamModel: 'claude-sonnet-4-5', breaker: 'open' },
    ],
  };
  registerGatewayStateMetrics(registry, sources);
  let f = parseExposition(await registry.metrics());
  assert.equal(sampleValue(f, 'herd_gateway_cache_hits_total', { tier: 'memory' }), 5);
  assert.equal(sampleValue(f, 'herd_gateway_cache_hits_total', { tier: 'redis' }), 2);
  assert.equal(sampleValue(f, 'herd_gateway_cache_misses_total'), 9);
  assert.equal(sampleValue(f, 'herd_gateway_cache_evictions_total'), 1);
  assert.equal(sampleValue(f, 'herd_gateway_cache_entries'), 4);
  assert.equal(sampleValue(f, 'herd_gateway_cache_bytes'), 2048);
  assert.equal(f.get('herd_gateway_cache_entries')?.type, 'gauge');
  assert.equal(sampleValue(f, 'herd_gateway_queue_depth', { upstream: 'holysheep/gpt-4.1' }), 6);
  assert.equal(sampleValue(f, 'herd_gateway_queue_depth', { upstream: 'openai/gpt-4.1' }), 0);
  assert.equal(sampleValue(f, 'herd_gateway_provider_queue_depth', { provider: 'holysheep' }), 1);
  assert.equal(sampleValue(f, 'herd_gateway_breaker_state', { provider: 'holysheep' }), 0);
  assert.equal(sampleValue(f, 'herd_gateway_breaker_state', { provider: 'openai' }), 1);
  assert.equal(sampleValue(f, 'herd_gateway_breaker_state', { provider: 'anthropic', upstream_model: 'claude-sonnet-4-5' }), 2);

  cache.misses = 10;
  waiting = { HIGH: 0, NORMAL: 0, BATCH: 0 };
  f = parseExposition(await registry.metrics());
  assert.equal(sampleValue(f, 'herd_gateway_cache_misses_total'), 10);
  assert.equal(sampleValue(f, 'herd_gateway_queue_depth', { upstream: 'holysheep/gpt-4.1' }), 0);
});

test('requests in flight: the count the exchanges keep, read at each scrape', async () => {
  const registry = new Registry();
  const inFlight = { value: 3 };
  registerGatewayStateMetrics(registry, { requestsInFlight: () => inFlight.value });
  assert.equal(sampleValue(parseExposition(await registry.metrics()), 'herd_gateway_requests_in_flight'), 3);
  inFlight.value = 0;
  const f = parseExposition(await registry.metrics());
  assert.equal(sampleValue(f, 'herd_gateway_requests_in_flight'), 0);
  assert.equal(f.get('herd_gateway_requests_in_flight')?.type, 'gauge');
});

test('a missing source registers no family', async () => {
  const registry = new Registry();
  registerGatewayStateMetrics(registry, { breakers: () => [] });
  const names = [...parseExposition(await registry.metrics()).keys()];
  assert.deepEqual(names, ['herd_gateway_breaker_state']);
});

test('a burst of samples is accepted and the cost per sample is reported', (t) => {
  const { metrics } = setup();
  const sample = answered({ ttftMs: 120 });
  for (let i = 0; i < 20_000; i++) metrics.onRequestFinished(sample);
  const n = 200_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) metrics.onRequestFinished(sample);
  const perCallUs = Number(process.hrtime.bigint() - start) / n / 1000;
  // Measured 0.5 µs (a cache hit) to 2 µs (a stream) here, nearly all in prom-client's labelled observe().
  // Reported, not asserted: timed assertions flake on a shared machine.
  t.diagnostic(`${perCallUs.toFixed(3)} µs per sample`);
  assert.ok(Number.isFinite(perCallUs));
});
