// Triton-named metrics against the real server: traffic through KServe HTTP, then GET /metrics on
// the metrics server computed from the very statistics GET /v2/models/stats answers, value for value.
// Also the metrics server's own HTTP behaviour: 404/405 in `{"error"}` shape, HEAD, gzip, clean close.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, get as httpGet } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import type { HerdServer } from '../../src/app.ts';
import { convertModelStatisticsToSnapshot, createServingStatsSource } from '../../src/http/convert-model-statistics-to-snapshot.ts';
import { startMetricsServer, type MetricsServer } from '../../src/http/metrics-server.ts';
import { createComputedCounter } from '../../src/metrics/computed-metric.ts';
import { createMetricsRegistry } from '../../src/metrics/create-metrics-registry.ts';
import { registerInferenceMetrics } from '../../src/metrics/inference-metrics.ts';
import type { LoadedModel } from '../../src/serving/repository/model-repository-manager.ts';
import type { ModelStatistics } from '../../src/serving/stats.ts';
import { parseExposition, sampleValue, type ExpositionFamily } from '../metrics/parse-exposition.ts';
import { EXAMPLE_REPOSITORY, postJson, request, startTestServer } from './start-test-server.ts';

const SLOW_REPOSITORY = resolve('test/fixtures/slow_repository');
// Answers `{ error }` for requests that carry the parameter `fail`, echoes the others.
const FLAKY_MODEL = `export function execute(requests) {
  return requests.map((r) => (r.parameters.fail ? { error: 'asked to fail' } : { outputs: [{ ...r.input('IN'), name: 'OUT' }] }));
}
`;

let server: HerdServer;
let url: string;
let tempRepository: string;
const metricsServers: MetricsServer[] = [];

before(async () => {
  tempRepository = mkdtempSync(join(tmpdir(), 'herd-metrics-'));
  mkdirSync(join(tempRepository, 'flaky', '1'), { recursive: true });
  writeFileSync(
    join(tempRepository, 'flaky', 'config.pbtxt'),
    [
      'name: "flaky"',
      'backend: "js"',
      'max_batch_size: 4',
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]',
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
      '',
    ].join('\n'),
  );
  writeFileSync(join(tempRepository, 'flaky', '1', 'model.mjs'), FLAKY_MODEL);
  server = await startTestServer({ repositories: [EXAMPLE_REPOSITORY, SLOW_REPOSITORY, tempRepository] });
  url = server.httpUrl;
});
after(async () => {
  await Promise.all(metricsServers.map((m) => m.close()));
  await server?.close();
  if (tempRepository) rmSync(tempRepository, { recursive: true, force: true });
});

async function serveMetrics(registry: Registry): Promise<MetricsServer> {
  const metrics = await startMetricsServer({ registry, host: '127.0.0.1', port: 0 });
  metricsServers.push(metrics);
  return metrics;
}

async function scrape(metrics: MetricsServer): Promise<Map<string, ExpositionFamily>> {
  const res = await request(`${metrics.url}/metrics`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(res.body.toString('utf8'));
}

async function modelStats(): Promise<ModelStatistics[]> {
  const res = await request(`${url}/v2/models/stats`);
  assert.equal(res.status, 200);
  return (res.json() as { model_stats: ModelStatistics[] }).model_stats;
}

const range = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));
const int32 = (name: string, shape: number[], data: number[]) => ({ name, datatype: 'INT32', shape, data });

async function infer(model: string, body: unknown, status = 200): Promise<void> {
  const res = await postJson(`${url}/v2/models/${model}/infer`, body);
  assert.equal(res.status, status, `${model}: ${res.body.toString('utf8')}`);
}
const inferAddSub = (batch: number) =>
  infer('add_sub', {
    inputs: [
      int32(
        'INPUT0',
        [batch, 16],
        range(16 * batch, (i) => i),
      ),
      int32(
        'INPUT1',
        [batch, 16],
        range(16 * batch, () => 1),
      ),
    ],
  });
const inferTokens = (texts: string[]) => infer('token_counter', { inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [texts.length, 1], data: texts }] });
const inferFlaky = (fail: boolean) => infer('flaky', { inputs: [int32('IN', [1, 1], [7])], ...(fail ? { parameters: { fail: true } } : {}) }, fail ? 500 : 200);

/** Every nv_inference_* value of `s` in the exposition equals what its statistics say, µs as ⌊ns/1000⌋. */
function assertMetricsMatchStatistics(families: Map<string, ExpositionFamily>, s: ModelStatistics): void {
  const labels = { model: s.name, version: s.version };
  const value = (family: string, extra: Record<string, string> = {}) => sampleValue(families, family, { ...labels, ...extra });
  const stats = s.inference_stats;
  const where = `${s.name}/${s.version}`;
  assert.equal(value('nv_inference_request_success'), stats.success.count, `${where} success`);
  assert.equal(value('nv_inference_count'), s.inference_count, `${where} inference_count`);
  assert.equal(value('nv_inference_exec_count'), s.execution_count, `${where} execution_count`);
  assert.equal(value('nv_inference_request_failure', { reason: 'BACKEND' }), stats.fail.count, `${where} failures`);
  for (const reason of ['REJECTED', 'CANCELED', 'OTHER']) assert.equal(value('nv_inference_request_failure', { reason }), 0, `${where} ${reason}`);
  const micros: [string, { ns: number }][] = [
    ['nv_inference_request_duration_us', stats.success],
    ['nv_inference_queue_duration_us', stats.queue],
    ['nv_inference_compute_input_duration_us', stats.compute_input],
    ['nv_inference_compute_infer_duration_us', stats.compute_infer],
    ['nv_inference_compute_output_duration_us', stats.compute_output],
  ];
  for (const [family, duration] of micros) assert.equal(value(family), Math.floor(duration.ns / 1000), `${where} ${family}`);
}

test('traffic, then /metrics rendered from /v2/models/stats agrees with it exactly', async () => {
  for (let i = 0; i < 3; i++) await inferAddSub(1);
  await inferAddSub(4);
  await inferTokens(['one', 'two words', 'Triton 动态批处理']);
  await inferTokens(['again']);
  await inferFlaky(false);
  await inferFlaky(false);
  for (let i = 0; i < 3; i++) await inferFlaky(true);

  const stats = await modelStats();
  const registry = new Registry();
  registerInferenceMetrics(registry, () => stats.map((s) => convertModelStatisticsToSnapshot(s, { pending: 0 })));
  const families = await scrape(await serveMetrics(registry));

  for (const s of stats) assertMetricsMatchStatistics(families, s);
  // One series per loaded version, no more (the example repository may hold more models than these).
  const names = families
    .get('nv_inference_request_success')
    ?.samples.map((s) => s.labels.model)
    .sort();
  assert.deepEqual(names, stats.map((s) => s.name).sort());
  for (const name of ['add_sub', 'flaky', 'my_model', 'slow_echo', 'token_counter']) assert.ok(names?.includes(name), name);
  // Triton's counting rules, visible in the metrics: requests, batch elements, executions.
  assert.equal(sampleValue(families, 'nv_inference_request_success', { model: 'add_sub' }), 4);
  assert.equal(sampleValue(families, 'nv_inference_count', { model: 'add_sub' }), 7);
  assert.equal(sampleValue(families, 'nv_inference_count', { model: 'token_counter' }), 4);
  assert.equal(sampleValue(families, 'nv_inference_request_success', { model: 'flaky' }), 2);
  assert.equal(sampleValue(families, 'nv_inference_request_failure', { model: 'flaky', reason: 'BACKEND' }), 3);
  assert.equal(sampleValue(families, 'nv_inference_request_success', { model: 'my_model' }), 0);
  assert.ok((sampleValue(families, 'nv_inference_compute_infer_duration_us', { model: 'add_sub' }) ?? 0) > 0);
  for (const family of ['nv_inference_request_success', 'nv_inference_request_failure', 'nv_inference_count', 'nv_inference_exec_count', 'nv_inference_queue_duration_us']) {
    assert.equal(families.get(family)?.type, 'counter', family);
  }
});

test('the live source: /metrics and /stats agree, and follow new traffic exactly', async () => {
  const loadSeconds = new WeakMap<LoadedModel, number>();
  const addSub = server.repository.loadedModels().find((m) => m.name === 'add_sub');
  assert.ok(addSub);
  loadSeconds.set(addSub, 1.5);
  const registry = createMetricsRegistry();
  registerInferenceMetrics(registry, createServingStatsSource(server.repository, loadSeconds));
  const metrics = await serveMetrics(registry);

  const before = await scrape(metrics);
  for (const s of await modelStats()) assertMetricsMatchStatistics(before, s);
  assert.equal(sampleValue(before, 'nv_model_load_duration_secs', { model: 'add_sub' }), 1.5);
  assert.equal(sampleValue(before, 'nv_model_load_duration_secs', { model: 'token_counter' }), undefined);
  assert.ok(before.has('process_cpu_user_seconds_total'));

  const count = (families: Map<string, ExpositionFamily>, family: string, model: string, extra: Record<string, string> = {}) =>
    sampleValue(families, family, { model, ...extra }) ?? Number.NaN;
  await inferAddSub(2);
  await inferAddSub(1);
  await inferFlaky(true);
  const afterTraffic = await scrape(metrics);
  assert.equal(count(afterTraffic, 'nv_inference_request_success', 'add_sub') - count(before, 'nv_inference_request_success', 'add_sub'), 2);
  assert.equal(count(afterTraffic, 'nv_inference_count', 'add_sub') - count(before, 'nv_inference_count', 'add_sub'), 3);
  assert.equal(count(afterTraffic, 'nv_inference_exec_count', 'add_sub') - count(before, 'nv_inference_exec_count', 'add_sub'), 2);
  const backend = { reason: 'BACKEND' };
  assert.equal(count(afterTraffic, 'nv_inference_request_failure', 'flaky', backend) - count(before, 'nv_inference_request_failure', 'flaky', backend), 1);
  for (const s of await modelStats()) assertMetricsMatchStatistics(afterTraffic, s);
});

test('pending requests show while a slow model works, and return to 0', async () => {
  const registry = new Registry();
  registerInferenceMetrics(registry, createServingStatsSource(server.repository));
  const metrics = await serveMetrics(registry);
  const pending = async () => sampleValue(await scrape(metrics), 'nv_inference_pending_request_count', { model: 'slow_echo' });

  assert.equal(await pending(), 0);
  const inFlight = [1, 2, 3].map((v) => infer('slow_echo', { inputs: [int32('IN', [1], [v])] }));
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(((await pending()) ?? 0) >= 1);
  await Promise.all(inFlight);
  assert.equal(await pending(), 0);
});

test('metrics server: 404 and 405 in the {"error"} shape, HEAD, query strings, gzip', async () => {
  const registry = createMetricsRegistry();
  const metrics = await serveMetrics(registry);

  for (const path of ['/', '/metric', '/metrics/', '/v2/health/live']) {
    const res = await request(`${metrics.url}${path}`);
    assert.equal(res.status, 404, path);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(res.json(), { error: `Not Found: no route for GET ${path}` });
  }
  for (const method of ['POST', 'PUT', 'DELETE']) {
    const res = await request(`${metrics.url}/metrics`, { method, body: method === 'DELETE' ? undefined : 'x' });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
    assert.deepEqual(res.json(), { error: `Method Not Allowed: ${method} /metrics (allowed: GET, HEAD)` });
  }

  const head = await request(`${metrics.url}/metrics`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.ok(Number(head.headers.get('content-length')) > 0);

  assert.equal((await request(`${metrics.url}/metrics?name[]=nv_cpu_utilization`)).status, 200);

  // What Prometheus sends; fetch would decompress silently, so read the raw answer.
  const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolvePromise, reject) => {
    httpGet(`${metrics.url}/metrics`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolvePromise({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
  assert.equal(raw.encoding, 'gzip');
  assert.match(gunzipSync(raw.body).toString('utf8'), /^# TYPE process_cpu_user_seconds_total counter$/m);
});

test('metrics server: a failing collector answers 500 {"error"} and the next scrape works', async () => {
  const registry = new Registry();
  let broken = true;
  createComputedCounter({ registry, name: 'fragile', help: 'h', labelNames: [], read: () => [{ labels: {}, value: broken ? -1 : 1 }] });
  const metrics = await serveMetrics(registry);
  const res = await request(`${metrics.url}/metrics`);
  assert.equal(res.status, 500);
  assert.match((res.json() as { error: string }).error, /^failed to collect metrics: fragile\{\}: a counter needs a finite value >= 0, got -1$/);
  broken = false;
  assert.equal(sampleValue(await scrape(metrics), 'fragile'), 1);
});

test('metrics server: close() resolves promptly with an idle keep-alive connection, is idempotent, frees the port', async () => {
  const metrics = await startMetricsServer({ registry: createMetricsRegistry({ processMetrics: false }), host: '127.0.0.1', port: 0 });
  const agent = new Agent({ keepAlive: true });
  const status = await new Promise<number | undefined>((resolvePromise, reject) => {
    httpGet(`${metrics.url}/metrics`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolvePromise(res.statusCode));
    }).on('error', reject);
  });
  assert.equal(status, 200);
  const started = Date.now();
  await Promise.all([metrics.close(), metrics.close()]);
  assert.ok(Date.now() - started < 1000, `close took ${Date.now() - started} ms`);
  await assert.rejects(fetch(`${metrics.url}/metrics`));
  agent.destroy();

  // The port is free again, and a port in use is refused at start.
  const port = Number(new URL(metrics.url).port);
  const again = await startMetricsServer({ registry: new Registry(), host: '127.0.0.1', port });
  await assert.rejects(startMetricsServer({ registry: new Registry(), host: '127.0.0.1', port }), /EADDRINUSE/);
  await again.close();
});
