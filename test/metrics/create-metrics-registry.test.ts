// The one registry: Node process metrics and Triton's CPU metrics by default, room for the serving
// and gateway families beside them, and the text a /metrics answer carries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Counter } from 'prom-client';
import { createMetricsRegistry, renderMetrics } from '../../src/metrics/create-metrics-registry.ts';
import { registerInferenceMetrics } from '../../src/metrics/inference-metrics.ts';
import { parseExposition } from './parse-exposition.ts';

test('by default: Node process metrics (prefix-free names) and, on Linux, nv_cpu_*', async () => {
  const families = parseExposition((await renderMetrics(createMetricsRegistry())).body);
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
    assert.ok(families.has(name), name);
  }
  if (existsSync('/proc/stat')) {
    for (const name of ['nv_cpu_utilization', 'nv_cpu_memory_total_bytes', 'nv_cpu_memory_used_bytes']) assert.equal(families.get(name)?.type, 'gauge', name);
  }
});

test('both groups can be switched off; serving and gateway families share the registry', async () => {
  const registry = createMetricsRegistry({ processMetrics: false, cpuMetrics: false });
  registerInferenceMetrics(registry, () => []);
  const gateway = new Counter({ name: 'herd_gateway_requests', help: 'Gateway requests.', labelNames: ['provider'], registers: [registry] });
  gateway.inc({ provider: 'openai' });
  const { contentType, body } = await renderMetrics(registry);
  assert.equal(contentType, 'text/plain; version=0.0.4; charset=utf-8');
  const families = parseExposition(body);
  assert.ok(![...families.keys()].some((n) => n.startsWith('process_') || n.startsWith('nv_cpu_')));
  assert.equal(families.get('nv_inference_request_success')?.samples.length, 0);
  assert.equal(families.get('herd_gateway_requests')?.samples[0]?.value, 1);
});

test('registries are independent (one per server, tests may make many)', async () => {
  const a = createMetricsRegistry({ cpuMetrics: false });
  const b = createMetricsRegistry({ cpuMetrics: false });
  registerInferenceMetrics(a, () => []);
  registerInferenceMetrics(b, () => []);
  assert.ok((await a.metrics()).includes('nv_inference_count'));
  assert.ok((await b.metrics()).includes('process_cpu_user_seconds_total'));
});
