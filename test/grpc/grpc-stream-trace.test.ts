// A decoupled model's request on ModelStreamInfer, traced from the real server in OpenTelemetry mode: the model
// span covers every response, InferRequest has Triton's stream handler stamps (the first response only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { startTestServer } from '../e2e/start-test-server.ts';

const names = (span: ReceivedSpan | undefined) => span?.events.map((e) => e.name) ?? [];

test('ModelStreamInfer of a decoupled model: RESPONSE_SEND per response on its span, one INFER_RESPONSE_COMPLETE, InferRequest ends last', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTestServer({
    repositories: [resolve('test/fixtures/decoupled_repository')],
    trace: { mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1, opentelemetry: { url: receiver.url } },
  });
  t.after(() => server.close());
  const client = new KserveGrpcClient({ url: server.grpcUrl as string });
  t.after(() => client.close());
  const stream = client.streamInfer();
  stream.send('repeat_int32', [{ name: 'IN', datatype: 'INT32', shape: [3], data: Int32Array.of(4, 5, 6) }], { id: 'three' });
  stream.end();
  const results = [];
  for await (const event of stream.responses) results.push(event);
  assert.equal(results.length, 3);
  await server.tracing.flush();
  const spans = receiver.spans;
  const root = spans.find((s) => s.name === 'InferRequest');
  const model = spans.find((s) => s.name === 'repeat_int32');
  assert.ok(root && model, JSON.stringify(spans.map((s) => s.name)));
  assert.equal(model.parentSpanId, root.spanId);
  assert.deepEqual(names(root), ['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END', 'INFER_RESPONSE_COMPLETE', 'GRPC_SEND_START', 'GRPC_SEND_END']);
  assert.deepEqual(names(model), ['REQUEST_START', 'QUEUE_START', 'RESPONSE_SEND', 'RESPONSE_SEND', 'RESPONSE_SEND', 'REQUEST_END']);
  assert.equal(model.attributes['triton.response_count'], 3);
  assert.equal(model.status.code, 0);
  assert.ok(model.endTimeUnixNano <= root.endTimeUnixNano);
});
