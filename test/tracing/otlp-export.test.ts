// Spans exported by OTLP/HTTP protobuf to a local receiver that decodes them with the official
// opentelemetry-proto definitions: names, kinds, parentage, attributes, events, status, resource, timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tracingConfigSchema } from '../../src/config/tracing-config-schema.ts';
import { HerdError } from '../../src/core/errors.ts';
import { createTracing } from '../../src/tracing/create-tracing.ts';
import { parseTraceParent } from '../../src/tracing/trace-parent.ts';
import { SpanKind } from '../../src/tracing/tracer.ts';
import { flattenRequest, loadOtlpTypes, startOtlpReceiver } from '../helpers/otlp-receiver.ts';

const receiverTypes = loadOtlpTypes();

const config = (url: string, more: Record<string, unknown> = {}) => tracingConfigSchema.parse({ enabled: true, endpoint: url, ...more });

test('a trace of three spans arrives as OTLP protobuf with its parentage, kinds, attributes, events and status', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const tracing = createTracing(config(receiver.url, { service_name: 'herd-test', resource_attributes: { 'deployment.environment.name': 'test' } }), {
    env: { OTEL_RESOURCE_ATTRIBUTES: 'team=ml,service.name=ignored' },
  });
  const incoming = parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
  const server = tracing.tracer.startSpan('POST /v1/chat/completions', {
    kind: SpanKind.SERVER,
    parent: incoming === undefined ? undefined : { ...incoming, traceState: 'rojo=1' },
    attributes: { 'http.request.method': 'POST', 'url.path': '/v1/chat/completions' },
    startTime: 1_800_000_000_000.25,
  });
  const attempt = tracing.tracer.startSpan('chat gpt-4o', { kind: SpanKind.CLIENT, parent: server.context() });
  attempt.setAttributes({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.request.temperature': 0.5,
    'gen_ai.request.max_tokens': 100,
    'gen_ai.request.stream': true,
    'gen_ai.response.finish_reasons': ['stop'],
    'herd.attempt': 1,
  });
  attempt.addEvent('gen_ai.first_chunk', { 'herd.bytes': 12 }, 1_800_000_000_010.5);
  attempt.recordError(new HerdError('UPSTREAM_TIMEOUT', 'upstream did not answer in 30 s'));
  attempt.end(1_800_000_000_020);
  const step = tracing.tracer.startSpan('compute', { kind: SpanKind.INTERNAL, parent: server.context() });
  step.end();
  server.end();
  await tracing.close();

  assert.equal(receiver.requests.length, 1);
  assert.equal(receiver.requests[0]?.contentType, 'application/x-protobuf');
  const spans = receiver.spans;
  assert.deepEqual(
    spans.map((s) => s.name),
    ['chat gpt-4o', 'compute', 'POST /v1/chat/completions'],
  );
  const [client, compute, root] = spans as [(typeof spans)[0], (typeof spans)[0], (typeof spans)[0]];
  // One trace, the propagated one; the client call and compute are children of the server span.
  for (const s of spans) assert.equal(s.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(root.parentSpanId, '00f067aa0ba902b7');
  assert.equal(client.parentSpanId, root.spanId);
  assert.equal(compute.parentSpanId, root.spanId);
  assert.deepEqual([root.kind, client.kind, compute.kind], [2, 3, 1]);
  // Sampled, the parent's remoteness known; remote for the server span only.
  assert.equal(root.flags, 0x301);
  assert.equal(client.flags, 0x101);
  assert.equal(root.traceState, 'rojo=1');
  assert.equal(client.traceState, 'rojo=1');
  assert.equal(root.startTimeUnixNano, 1_800_000_000_000_250_000n);
  assert.equal(client.endTimeUnixNano, 1_800_000_000_020_000_000n);
  assert.deepEqual(client.attributes, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.request.temperature': 0.5,
    'gen_ai.request.max_tokens': 100,
    'gen_ai.request.stream': true,
    'gen_ai.response.finish_reasons': ['stop'],
    'herd.attempt': 1,
    'error.type': 'UPSTREAM_TIMEOUT',
  });
  assert.deepEqual(
    client.events.map((e) => [e.name, e.attributes]),
    [
      ['gen_ai.first_chunk', { 'herd.bytes': 12 }],
      ['exception', { 'exception.type': 'UPSTREAM_TIMEOUT', 'exception.message': 'upstream did not answer in 30 s' }],
    ],
  );
  assert.equal(client.events[0]?.timeUnixNano, 1_800_000_000_010_500_000n);
  assert.deepEqual(client.status, { code: 2, message: 'upstream did not answer in 30 s' });
  assert.deepEqual(root.status, { code: 0, message: '' });
  assert.equal(root.resource['service.name'], 'herd-test');
  assert.equal(root.resource['team'], 'ml');
  assert.equal(root.resource['deployment.environment.name'], 'test');
  assert.equal(root.resource['telemetry.sdk.language'], 'nodejs');
  assert.equal(root.scope.name, 'herd');
});

test('a new root gets a fresh trace id; batches split at max_export_batch_size', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const tracing = createTracing(config(receiver.url, { max_export_batch_size: 4, max_queue_size: 100 }), { env: {} });
  for (let i = 0; i < 10; i++) tracing.tracer.startSpan(`span ${i}`, { kind: SpanKind.INTERNAL, parent: undefined }).end();
  await tracing.close();
  assert.equal(receiver.spans.length, 10);
  assert.deepEqual(
    receiver.requests.map((r) => flattenRequest(decodeCount(r.bytes)).length),
    [4, 4, 2],
  );
  assert.equal(new Set(receiver.spans.map((s) => s.traceId)).size, 10);
  for (const s of receiver.spans) {
    assert.match(s.traceId, /^[0-9a-f]{32}$/);
    assert.equal(s.parentSpanId, '');
    assert.equal(s.flags, 1);
  }
});

test('the receiver accepts OTLP JSON too (hex ids, string nanoseconds)', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const body = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'other' } }] },
        scopeSpans: [
          {
            scope: { name: 'x' },
            spans: [
              {
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: 'eee19b7ec3c1b174',
                name: 'json span',
                kind: 3,
                startTimeUnixNano: '1544712660000000000',
                endTimeUnixNano: '1544712661000000000',
                attributes: [{ key: 'n', value: { intValue: '7' } }],
              },
            ],
          },
        ],
      },
    ],
  };
  const res = await fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  assert.deepEqual(
    receiver.spans.map((s) => [s.name, s.kind, s.traceId, s.attributes['n'], s.resource['service.name'], s.endTimeUnixNano]),
    [['json span', 3, '5b8efff798038103d269b633813fc60c', 7, 'other', 1544712661000000000n]],
  );
});

test('export headers: from herd.yaml and from OTEL_EXPORTER_OTLP_HEADERS (the secret one), sent on every export', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const tracing = createTracing(config(receiver.url, { headers: { 'x-scope-orgid': 'tenant-1' }, headers_env: 'COLLECTOR_AUTH' }), {
    env: { OTEL_EXPORTER_OTLP_HEADERS: 'x-extra=a%20b', COLLECTOR_AUTH: 'Authorization=Bearer%20s3cr3t' },
  });
  tracing.tracer.startSpan('s', { kind: SpanKind.INTERNAL, parent: undefined }).end();
  await tracing.close();
  const headers = receiver.requests[0]?.headers ?? {};
  assert.equal(headers['x-scope-orgid'], 'tenant-1');
  assert.equal(headers['x-extra'], 'a b');
  assert.equal(headers['authorization'], 'Bearer s3cr3t');
});

/** A request body decoded again with the receiver's own reader (one request's spans). */
function decodeCount(bytes: Buffer): Record<string, unknown> {
  return receiverTypes.request.toObject(receiverTypes.request.decode(bytes), { longs: String });
}
