// The export path under a collector that is down, slow or refusing: requests are answered as before, the
// queue stays at its bound, every span not exported is counted by reason, retries back off, shutdown flushes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tracingConfigSchema } from '../../src/config/tracing-config-schema.ts';
import { createMetricsRegistry } from '../../src/metrics/create-metrics-registry.ts';
import { registerTracingMetrics } from '../../src/metrics/tracing-metrics.ts';
import { createTracing, type Tracing } from '../../src/tracing/create-tracing.ts';
import { SpanKind } from '../../src/tracing/tracer.ts';
import { parseExposition } from '../metrics/parse-exposition.ts';
import { startOtlpReceiver } from '../helpers/otlp-receiver.ts';

const FAST_RETRY = { attempts: 3, initialBackoffMs: 5, maxBackoffMs: 20 };

function start(url: string, more: Record<string, unknown> = {}) {
  const registry = createMetricsRegistry({ processMetrics: false, cpuMetrics: false });
  const lines: string[] = [];
  const tracing = createTracing(tracingConfigSchema.parse({ enabled: true, endpoint: url, ...more }), {
    env: {},
    metrics: () => registerTracingMetrics(registry),
    retry: FAST_RETRY,
    log: (line) => lines.push(line),
  });
  const counts = async () => {
    const families = parseExposition(await registry.metrics());
    const dropped = Object.fromEntries((families.get('herd_tracing_spans_dropped_total')?.samples ?? []).map((s) => [s.labels['reason'], s.value]));
    const exported = families.get('herd_tracing_spans_exported_total')?.samples[0]?.value ?? 0;
    return { dropped, exported };
  };
  return { tracing, counts, lines };
}

function endSpans(tracing: Tracing, n: number): void {
  for (let i = 0; i < n; i++) tracing.tracer.startSpan(`s${i}`, { kind: SpanKind.INTERNAL, parent: undefined }).end();
}

/** A port nothing listens on: a collector that is down. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1/traces`;
}

test('collector down: every request is answered, the queue stays at its bound, drops are counted queue_full and export_failed', async (t) => {
  const { tracing, counts, lines } = start(await closedPortUrl(), { max_queue_size: 20, max_export_batch_size: 10, schedule_delay_ms: 1 });
  // An HTTP service that traces each request, as Herd's exchanges will.
  const app = createServer((req, res) => {
    const span = tracing.tracer.startSpan(`${req.method} /`, { kind: SpanKind.SERVER, parent: undefined });
    span.setAttribute('http.request.method', req.method ?? '');
    span.end();
    res.end('ok');
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => app.close(() => resolve())));
  const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
  let maxQueued = 0;
  for (let round = 0; round < 20; round++) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(url).then((r) => r.text())));
    assert.deepEqual(new Set(answers), new Set(['ok']));
    maxQueued = Math.max(maxQueued, tracing.queued());
  }
  assert.ok(maxQueued <= 20, `queued ${maxQueued} > max_queue_size`);
  await tracing.close(2000);
  const { dropped, exported } = await counts();
  assert.equal(exported, 0);
  assert.ok((dropped['export_failed'] ?? 0) > 0, 'failed exports are counted');
  // Every one of the 200 spans is accounted for: none exported, each dropped for one reason.
  assert.equal((dropped['queue_full'] ?? 0) + (dropped['export_failed'] ?? 0) + (dropped['shutdown'] ?? 0), 200);
  assert.equal(tracing.queued(), 0);
  // One log line for the failures, not one per batch; it names no header.
  assert.equal(lines.filter((l) => l.includes('not exported')).length, 1);
});

test('a stuck collector: spans past the bound are dropped at once (queue_full), shutdown gives up at its deadline (shutdown)', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  receiver.fallback = 'hang';
  const { tracing, counts } = start(receiver.url, { max_queue_size: 50, max_export_batch_size: 10, schedule_delay_ms: 60_000 });
  endSpans(tracing, 10); // a full batch: sent at once, and the collector never answers
  await new Promise((resolve) => setTimeout(resolve, 50));
  endSpans(tracing, 100);
  assert.equal(tracing.queued(), 50);
  await tracing.close(100);
  const { dropped, exported } = await counts();
  assert.deepEqual(dropped, { queue_full: 50, export_failed: 0, shutdown: 60 });
  assert.equal(exported, 0);
});

test('retryable answers (503, 429 with Retry-After) are retried with backoff; the batch arrives once', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  receiver.answers.push({ status: 503 }, { status: 429, retryAfter: '0' });
  const { tracing, counts } = start(receiver.url);
  endSpans(tracing, 3);
  await tracing.flush();
  assert.equal(receiver.requests.length, 3, 'two refusals, then the accepted export');
  assert.equal(receiver.spans.length, 3);
  assert.deepEqual(await counts(), { dropped: { queue_full: 0, export_failed: 0, shutdown: 0 }, exported: 3 });
  await tracing.close();
});

test('a refusal that is not retryable (400) drops the batch at once, counted export_failed', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  receiver.answers.push({ status: 400 });
  const { tracing, counts } = start(receiver.url);
  endSpans(tracing, 4);
  await tracing.flush();
  endSpans(tracing, 2);
  await tracing.close();
  assert.equal(receiver.requests.length, 2);
  assert.deepEqual(await counts(), { dropped: { queue_full: 0, export_failed: 4, shutdown: 0 }, exported: 2 });
});

test('shutdown flushes: spans waiting for a long schedule delay are sent by close(), later spans are dropped as shutdown', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const { tracing, counts } = start(receiver.url, { schedule_delay_ms: 3_600_000 });
  endSpans(tracing, 7);
  assert.equal(receiver.requests.length, 0);
  await tracing.close();
  assert.equal(receiver.spans.length, 7);
  endSpans(tracing, 1);
  await tracing.close();
  assert.deepEqual(await counts(), { dropped: { queue_full: 0, export_failed: 0, shutdown: 1 }, exported: 7 });
});
