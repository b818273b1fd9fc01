// Triton-shaped spans from the real server, decoded from the OTLP protobuf it exports: `--trace-config
// mode=opentelemetry` turns them on; InferRequest → the model's span → compute, over HTTP (both paths) and gRPC.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { resolve } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { EXAMPLE_REPOSITORY, postJson, startTestServer, TRITON_REPOSITORY } from './start-test-server.ts';

const SIMPLE_BODY = {
  id: 'req-7',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
  ],
};

async function startTraced(receiver: OtlpReceiver, repositories: string[], trace: Record<string, unknown> = {}): Promise<HerdServer> {
  return startTestServer({
    repositories,
    strictReadiness: false,
    trace: { mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1, opentelemetry: { url: receiver.url, resource: { 'service.name': 'herd-serving-spans' } }, ...trace },
  });
}

/** Every span exported so far, after the server flushed its queue. */
async function exported(server: HerdServer, receiver: OtlpReceiver): Promise<ReceivedSpan[]> {
  await server.tracing.flush();
  return receiver.spans;
}

const names = (span: ReceivedSpan) => span.events.map((e) => e.name);
const one = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `one ${name} span, got ${found.length}`);
  return found[0] as ReceivedSpan;
};

/** The InferRequest → model → compute chain of one request, checked for Triton's shape. */
function checkTritonShape(spans: ReceivedSpan[], model: string, version: number): { root: ReceivedSpan; modelSpan: ReceivedSpan; compute: ReceivedSpan } {
  const root = one(spans, 'InferRequest');
  const modelSpan = one(spans, model);
  const compute = one(spans, 'compute');
  assert.equal(root.kind, 2, 'InferRequest is a SERVER span');
  assert.equal(modelSpan.parentSpanId, root.spanId);
  assert.equal(compute.parentSpanId, modelSpan.spanId);
  for (const s of [modelSpan, compute]) assert.equal(s.traceId, root.traceId);
  assert.equal(modelSpan.attributes['triton.model_name'], model);
  assert.equal(modelSpan.attributes['triton.model_version'], version);
  assert.deepEqual(names(modelSpan), ['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
  assert.deepEqual(names(compute), ['COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END']);
  assert.equal(compute.attributes['triton.batch_size'], 1);
  // Events in time order, inside their spans; the compute span inside the model span inside InferRequest.
  const times = [...modelSpan.events, ...compute.events].map((e) => e.timeUnixNano).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert.deepEqual(
    times,
    [modelSpan.events[0], modelSpan.events[1], ...compute.events, modelSpan.events[2]].map((e) => e?.timeUnixNano),
  );
  assert.ok(root.startTimeUnixNano <= modelSpan.startTimeUnixNano && modelSpan.endTimeUnixNano <= root.endTimeUnixNano);
  assert.ok(modelSpan.startTimeUnixNano <= compute.startTimeUnixNano && compute.endTimeUnixNano <= modelSpan.endTimeUnixNano);
  return { root, modelSpan, compute };
}

test('KServe HTTP infer of simple in OpenTelemetry mode: InferRequest → simple → compute with Triton timestamps and attributes', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTraced(receiver, [TRITON_REPOSITORY]);
  t.after(() => server.close());

  const answer = await postJson(`${server.httpUrl}/v2/models/simple/infer`, SIMPLE_BODY);
  assert.equal(answer.status, 200);
  const spans = await exported(server, receiver);
  assert.equal(spans.length, 3);
  const { root, modelSpan } = checkTritonShape(spans, 'simple', 1);
  assert.equal(root.parentSpanId, '', 'no traceparent: a new trace');
  // The frontend's timestamps are InferRequest's events, as Triton's CaptureTimestamp adds them to its root span.
  assert.deepEqual(names(root), ['HTTP_RECV_START', 'HTTP_RECV_END', 'INFER_RESPONSE_COMPLETE', 'HTTP_SEND_START', 'HTTP_SEND_END']);
  assert.equal(modelSpan.attributes['triton.request_id'], 'req-7');
  assert.equal(root.resource['service.name'], 'herd-serving-spans');
});

test('the fast path traces too, under the traceparent the client sent (its tracestate kept)', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTraced(receiver, [TRITON_REPOSITORY]);
  t.after(() => server.close());
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const body = JSON.stringify(SIMPLE_BODY);
  const status = await new Promise<number>((done, fail) => {
    const req = httpRequest(`${server.httpUrl}/v2/models/simple/infer`, {
      method: 'POST',
      // No accept-encoding: the framework-free path takes it.
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), traceparent: `00-${traceId}-00f067aa0ba902b7-01`, tracestate: 'vendor=x' },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end(body);
  });
  assert.equal(status, 200);
  const { root } = checkTritonShape(await exported(server, receiver), 'simple', 1);
  assert.equal(root.traceId, traceId);
  assert.equal(root.parentSpanId, '00f067aa0ba902b7');
  assert.equal(root.traceState, 'vendor=x');
});

test('gRPC ModelInfer with traceparent metadata: the same trace, traced at rate 1000 (propagated requests always are)', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTraced(receiver, [TRITON_REPOSITORY], { rate: 1000 });
  t.after(() => server.close());
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const grpc = new KserveGrpcClient({ url: server.grpcUrl as string, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
  t.after(() => grpc.close());
  const plain = new KserveGrpcClient({ url: server.grpcUrl as string });
  t.after(() => plain.close());
  const inputs = SIMPLE_BODY.inputs.map((i) => ({ name: i.name, datatype: 'INT32' as const, shape: i.shape, data: Int32Array.from(i.data) }));
  for (let i = 0; i < 3; i++) await grpc.infer('simple', inputs);
  // Without a traceparent, the 1000th request would be the first traced.
  await plain.infer('simple', inputs);
  const spans = await exported(server, receiver);
  const roots = spans.filter((s) => s.name === 'InferRequest');
  assert.equal(roots.length, 3);
  for (const root of roots) {
    assert.equal(root.traceId, traceId);
    assert.equal(root.parentSpanId, 'b7ad6b7169203331');
    checkTritonShape(
      spans.filter((s) => s.spanId === root.spanId || spans.some((m) => m.parentSpanId === root.spanId && (m.spanId === s.spanId || m.spanId === s.parentSpanId))),
      'simple',
      1,
    );
  }
});

test('rate and count: every 2nd request traced, 2 traces at most', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTraced(receiver, [TRITON_REPOSITORY], { rate: 2, count: 2 });
  t.after(() => server.close());
  for (let i = 0; i < 8; i++) assert.equal((await postJson(`${server.httpUrl}/v2/models/simple/infer`, { ...SIMPLE_BODY, id: `r${i}` })).status, 200);
  const spans = await exported(server, receiver);
  assert.deepEqual(
    spans.filter((s) => s.name === 'simple').map((s) => s.attributes['triton.request_id']),
    ['r1', 'r3'],
  );
});

test('dynamic batching: requests that leave as one batch each get a compute span with the batch size', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTraced(receiver, [resolve('test/fixtures/batching_repository')]);
  t.after(() => server.close());
  const infer = (value: number) =>
    postJson(`${server.httpUrl}/v2/models/batch_echo/infer`, { id: `b${value}`, inputs: [{ name: 'IN', datatype: 'INT32', shape: [1, 1], data: [value] }] });
  const busy = infer(0);
  // The instance is busy for 150 ms: the next three queue behind it and leave together.
  await new Promise((r) => setTimeout(r, 30));
  const answers = await Promise.all([busy, infer(1), infer(2), infer(3)]);
  const batches = answers.map((a) => (a.json() as { outputs: { name: string; data: number[] }[] }).outputs.find((o) => o.name === 'BATCH')?.data[0]);
  const spans = await exported(server, receiver);
  const computeOf = (id: string) => {
    const modelSpan = spans.find((s) => s.name === 'batch_echo' && s.attributes['triton.request_id'] === id) as ReceivedSpan;
    return spans.find((s) => s.name === 'compute' && s.parentSpanId === modelSpan.spanId) as ReceivedSpan;
  };
  assert.deepEqual(
    [0, 1, 2, 3].map((v) => computeOf(`b${v}`).attributes['triton.batch_size']),
    batches,
  );
  assert.equal(batches[1], 3, 'the three queued requests ran as one batch');
});

test('an ensemble: each step model has its own model and compute spans, under the ensemble in its InferRequest', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTestServer({
    repositories: [resolve('test/fixtures/python_models'), EXAMPLE_REPOSITORY],
    controlMode: 'explicit',
    loadModel: ['add_sub', 'add_sub_ensemble'],
    strictReadiness: false,
    trace: { mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1, opentelemetry: { url: receiver.url } },
  });
  t.after(() => server.close());
  const data = Array.from({ length: 16 }, (_, i) => i);
  const answer = await postJson(`${server.httpUrl}/v2/models/add_sub_ensemble/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
    ],
  });
  assert.equal(answer.status, 200);
  const spans = await exported(server, receiver);
  const root = one(spans, 'InferRequest');
  const ensemble = one(spans, 'add_sub_ensemble');
  const step = one(spans, 'add_sub');
  const compute = one(spans, 'compute');
  assert.equal(ensemble.parentSpanId, root.spanId);
  // As Triton's tracer.cc: a step's span is a child of the ensemble's request span.
  assert.equal(step.parentSpanId, ensemble.spanId);
  assert.equal(compute.parentSpanId, step.spanId);
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, 'one trace');
  assert.equal(step.attributes['triton.trace_parent_id'], ensemble.attributes['triton.trace_id']);
  assert.deepEqual(names(ensemble), ['REQUEST_START', 'REQUEST_END']);
  assert.deepEqual(names(step), ['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
});

test("a Python model's BLS call: the called model's span is a child of the caller's compute span", async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTestServer({
    repositories: [resolve('test/fixtures/python_models'), EXAMPLE_REPOSITORY],
    controlMode: 'explicit',
    loadModel: ['add_sub', 'bls_onnx'],
    strictReadiness: false,
    trace: { mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1, opentelemetry: { url: receiver.url } },
  });
  t.after(() => server.close());
  const data = Array.from({ length: 16 }, (_, i) => i);
  const answer = await postJson(`${server.httpUrl}/v2/models/bls_onnx/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
      { name: 'MODE', datatype: 'BYTES', shape: [1], data: ['sync'] },
    ],
  });
  assert.equal(answer.status, 200, answer.body.toString());
  const spans = await exported(server, receiver);
  const caller = one(spans, 'bls_onnx');
  const callerCompute = spans.find((s) => s.name === 'compute' && s.parentSpanId === caller.spanId) as ReceivedSpan;
  const called = one(spans, 'add_sub');
  assert.equal(called.parentSpanId, callerCompute.spanId);
  assert.equal(called.attributes['triton.trace_parent_id'], caller.attributes['triton.trace_id']);
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1);
});
