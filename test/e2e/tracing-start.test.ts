// Tracing as `herd serve` starts it: off by default (the no-op tracer, no herd_tracing_* families); one
// variable turns it on, the tracer is exposed on HerdServer, and close() flushes its spans to the collector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHerd } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { NOOP_TRACER } from '../../src/tracing/noop-tracer.ts';
import { SpanKind } from '../../src/tracing/tracer.ts';
import { startOtlpReceiver } from '../helpers/otlp-receiver.ts';

const config = () => herdConfigSchema.parse({ server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0 } });

test('tracing off by default: the no-op tracer, no tracing families on /metrics', async () => {
  const server = await startHerd(config(), { env: {} });
  try {
    assert.equal(server.tracing.tracer, NOOP_TRACER);
    const metrics = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    assert.equal(metrics.includes('herd_tracing_'), false);
  } finally {
    await server.close();
  }
});

test('OTEL_EXPORTER_OTLP_ENDPOINT turns tracing on; close() flushes the spans; drops are on /metrics', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const base = receiver.url.replace(/\/v1\/traces$/, '');
  const server = await startHerd(config(), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: base, OTEL_SERVICE_NAME: 'herd-e2e' } });
  let closed = false;
  try {
    assert.equal(server.tracing.tracer.enabled, true);
    const span = server.tracing.tracer.startSpan('InferRequest', { kind: SpanKind.SERVER, parent: undefined, attributes: { 'triton.model_name': 'simple' } });
    span.end();
    const metrics = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    assert.match(metrics, /herd_tracing_spans_dropped_total\{reason="queue_full"\} 0/);
    assert.equal(receiver.spans.length, 0, 'still queued: the schedule delay has not passed');
    await server.close();
    closed = true;
    assert.deepEqual(
      receiver.spans.map((s) => [s.name, s.resource['service.name'], s.attributes['triton.model_name']]),
      [['InferRequest', 'herd-e2e', 'simple']],
    );
  } finally {
    if (!closed) await server.close();
  }
});
