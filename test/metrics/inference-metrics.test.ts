// Triton's per-model metric families from snapshots: names, TYPE, HELP and labels as tritonserver
// prints them, microseconds as Triton computes them, failure reasons, one snapshot per scrape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { convertDurationToTritonUs, registerInferenceMetrics } from '../../src/metrics/inference-metrics.ts';
import type { InferenceStatsSnapshot } from '../../src/metrics/inference-stats-snapshot.ts';
import { parseExposition, sampleValue } from './parse-exposition.ts';

const d = (count: number, ns: number) => ({ count, ns });

function snapshot(overrides: Partial<InferenceStatsSnapshot> = {}): InferenceStatsSnapshot {
  return {
    model: 'simple',
    version: '1',
    success: d(3, 4_500_999),
    fail: d(0, 0),
    queue: d(3, 2_999),
    compute_input: d(3, 30_000),
    compute_infer: d(3, 3_000_000),
    compute_output: d(3, 1_000),
    inference_count: 9,
    execution_count: 2,
    pending: 0,
    load_duration_secs: 0.25,
    ...overrides,
  };
}

async function render(snapshots: InferenceStatsSnapshot[]): Promise<string> {
  const registry = new Registry();
  registerInferenceMetrics(registry, () => snapshots);
  return registry.metrics();
}

test("every family with Triton core's HELP text, its type and model/version labels", async () => {
  const text = await render([snapshot()]);
  const expected = [
    '# HELP nv_inference_request_success Number of successful inference requests, all batch sizes',
    '# TYPE nv_inference_request_success counter',
    'nv_inference_request_success{model="simple",version="1"} 3',
    '# HELP nv_inference_count Number of inferences performed (does not include cached requests)',
    '# TYPE nv_inference_count counter',
    'nv_inference_count{model="simple",version="1"} 9',
    '# HELP nv_inference_exec_count Number of model executions performed (does not include cached requests)',
    '# TYPE nv_inference_exec_count counter',
    'nv_inference_exec_count{model="simple",version="1"} 2',
    '# HELP nv_inference_request_duration_us Cumulative inference request duration in microseconds (includes cached requests)',
    '# TYPE nv_inference_request_duration_us counter',
    'nv_inference_request_duration_us{model="simple",version="1"} 4500',
    '# HELP nv_inference_queue_duration_us Cumulative inference queuing duration in microseconds (includes cached requests)',
    '# TYPE nv_inference_queue_duration_us counter',
    'nv_inference_queue_duration_us{model="simple",version="1"} 2',
    '# HELP nv_inference_compute_input_duration_us Cumulative compute input duration in microseconds (does not include cached requests)',
    '# TYPE nv_inference_compute_input_duration_us counter',
    'nv_inference_compute_input_duration_us{model="simple",version="1"} 30',
    '# HELP nv_inference_compute_infer_duration_us Cumulative compute inference duration in microseconds (does not include cached requests)',
    '# TYPE nv_inference_compute_infer_duration_us counter',
    'nv_inference_compute_infer_duration_us{model="simple",version="1"} 3000',
    '# HELP nv_inference_compute_output_duration_us Cumulative inference compute output duration in microseconds (does not include cached requests)',
    '# TYPE nv_inference_compute_output_duration_us counter',
    'nv_inference_compute_output_duration_us{model="simple",version="1"} 1',
    '# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes',
    '# TYPE nv_inference_request_failure counter',
    'nv_inference_request_failure{model="simple",reason="REJECTED",version="1"} 0',
    'nv_inference_request_failure{model="simple",reason="CANCELED",version="1"} 0',
    'nv_inference_request_failure{model="simple",reason="BACKEND",version="1"} 0',
    'nv_inference_request_failure{model="simple",reason="OTHER",version="1"} 0',
    '# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting execution per-model.',
    '# TYPE nv_inference_pending_request_count gauge',
    'nv_inference_pending_request_count{model="simple",version="1"} 0',
    '# HELP nv_model_load_duration_secs Model load time in seconds',
    '# TYPE nv_model_load_duration_secs gauge',
    'nv_model_load_duration_secs{model="simple",version="1"} 0.25',
  ];
  assert.deepEqual(
    text.split('\n').filter((l) => l !== ''),
    expected,
  );
});

test('durations: ⌊ns/1000⌋ of the total, or the per-request truncated sum when the source kept it', async () => {
  assert.equal(convertDurationToTritonUs({ count: 2, ns: 1_999 }), 1);
  assert.equal(convertDurationToTritonUs({ count: 2, ns: 0 }), 0);
  // Triton adds ⌊ns/1000⌋ per request, so three requests of 999 ns make 0 µs there, while the total
  // gives ⌊2997/1000⌋ = 2: a source that keeps Triton's per-request sum passes it as `us`.
  assert.equal(convertDurationToTritonUs({ count: 3, ns: 2_997, us: 0 }), 0);
  const families = parseExposition(await render([snapshot({ queue: { count: 3, ns: 2_997, us: 0 } })]));
  assert.equal(sampleValue(families, 'nv_inference_queue_duration_us'), 0);
});

test('failure reasons: all four series always; a count the breakdown does not cover is OTHER', async () => {
  const families = parseExposition(
    await render([snapshot({ model: 'a', fail: { count: 5, ns: 10, reasons: { BACKEND: 2, REJECTED: 1 } } }), snapshot({ model: 'b', fail: { count: 4, ns: 10 } })]),
  );
  const failures = (model: string) =>
    Object.fromEntries(['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'].map((reason) => [reason, sampleValue(families, 'nv_inference_request_failure', { model, reason })]));
  assert.deepEqual(failures('a'), { REJECTED: 1, CANCELED: 0, BACKEND: 2, OTHER: 2 });
  assert.deepEqual(failures('b'), { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 4 });
});

test('several models and versions; a version without a load time has no load-duration series', async () => {
  const families = parseExposition(
    await render([
      snapshot({ model: 'm', version: '1', inference_count: 10, pending: 2 }),
      snapshot({ model: 'm', version: '2', inference_count: 20, load_duration_secs: undefined }),
    ]),
  );
  assert.equal(sampleValue(families, 'nv_inference_count', { model: 'm', version: '1' }), 10);
  assert.equal(sampleValue(families, 'nv_inference_count', { model: 'm', version: '2' }), 20);
  assert.equal(sampleValue(families, 'nv_inference_pending_request_count', { version: '1' }), 2);
  assert.deepEqual(
    families.get('nv_model_load_duration_secs')?.samples.map((s) => s.labels),
    [{ model: 'm', version: '1' }],
  );
});

test('the source is read once per scrape, at scrape time: unloaded versions vanish, counters follow', async () => {
  const registry = new Registry();
  let calls = 0;
  let current = [snapshot({ model: 'a' }), snapshot({ model: 'b' })];
  registerInferenceMetrics(registry, () => {
    calls += 1;
    return current;
  });
  assert.equal(calls, 0, 'nothing is read before a scrape');

  let families = parseExposition(await registry.metrics());
  assert.equal(calls, 1, 'one snapshot serves every family of a scrape');
  assert.equal(families.get('nv_inference_request_success')?.samples.length, 2);

  current = [snapshot({ model: 'a', success: d(4, 6_000_000) })];
  families = parseExposition(await registry.metrics());
  assert.equal(calls, 2);
  assert.deepEqual(
    families.get('nv_inference_request_success')?.samples.map((s) => [s.labels.model, s.value]),
    [['a', 4]],
  );
  assert.equal(sampleValue(families, 'nv_inference_request_duration_us'), 6000);
  assert.equal(families.get('nv_inference_request_failure')?.samples.length, 4);

  // Scrapes started in the same tick collect in the same instant and share its snapshot; the next reads anew.
  const [x, y] = await Promise.all([registry.metrics(), registry.metrics()]);
  assert.equal(x, y);
  assert.equal(calls, 3);
  await registry.metrics();
  assert.equal(calls, 4);
});

test('label values are escaped', async () => {
  const text = await render([snapshot({ model: 'we"ird\\name' })]);
  assert.match(text, /^nv_inference_count\{model="we\\"ird\\\\name",version="1"\} 9$/m);
});
