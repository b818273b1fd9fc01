// The generate extension traced from the real server: spans decoded from the OTLP it exports (InferRequest →
// model → compute, a stream's spans to its last chunk) and Triton mode's trace file, with level TENSORS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { EXAMPLE_REPOSITORY, postJson, startTestServer } from '../e2e/start-test-server.ts';

const DECOUPLED = resolve('test/fixtures/decoupled_repository');
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const names = (span: ReceivedSpan | undefined) => span?.events.map((e) => e.name) ?? [];
const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

test('generate in OpenTelemetry mode: sampled as infers are (a traceparent always traced), InferRequest → model → compute', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server: HerdServer = await startTestServer({
    repositories: [EXAMPLE_REPOSITORY],
    controlMode: 'explicit',
    loadModel: ['token_counter'],
    trace: { mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1000, opentelemetry: { url: receiver.url } },
  });
  t.after(() => server.close());
  const url = `${server.httpUrl}/v2/models/token_counter/generate`;
  // Rate 1000: only the requests with a traceparent are traced, on the fast path and on the Fastify route.
  assert.equal((await postJson(url, { id: 'g1', text_input: 'hello world' }, { traceparent: TRACEPARENT })).status, 200);
  assert.equal((await postJson(url, { id: 'g2', text_input: 'hello world' }, { traceparent: TRACEPARENT, 'accept-encoding': 'identity' })).status, 200);
  assert.equal((await postJson(url, { id: 'g3', text_input: 'hello world' })).status, 200);
  await server.tracing.flush();
  const spans = receiver.spans;
  const roots = byName(spans, 'InferRequest');
  assert.equal(roots.length, 2);
  for (const root of roots) {
    assert.equal(root.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(root.parentSpanId, '00f067aa0ba902b7');
    assert.equal(root.kind, 2);
    assert.deepEqual(names(root), ['HTTP_RECV_START', 'HTTP_RECV_END', 'INFER_RESPONSE_COMPLETE', 'HTTP_SEND_START', 'HTTP_SEND_END']);
    const model = spans.find((s) => s.parentSpanId === root.spanId);
    assert.equal(model?.name, 'token_counter');
    assert.deepEqual(names(model), ['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    const compute = spans.find((s) => s.parentSpanId === model?.spanId);
    assert.equal(compute?.name, 'compute');
    assert.deepEqual(names(compute), ['COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END']);
  }
  assert.deepEqual(
    byName(spans, 'token_counter')
      .map((s) => s.attributes['triton.request_id'])
      .sort(),
    ['g1', 'g2'],
  );
});

test("generate_stream of a decoupled model: the model's span covers every response, InferRequest ends with the last chunk", async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const server = await startTestServer({
    repositories: [DECOUPLED],
    trace: { mode: 'opentelemetry', level: ['TIMESTAMPS'], rate: 1, opentelemetry: { url: receiver.url } },
  });
  t.after(() => server.close());
  const res = await postJson(`${server.httpUrl}/v2/models/repeat_int32/generate_stream`, { id: 's1', IN: [5, -1, 7] });
  assert.equal(res.status, 200);
  assert.equal(res.body.toString().split('\n\n').filter(Boolean).length, 3);
  await server.tracing.flush();
  const spans = receiver.spans;
  const [root] = byName(spans, 'InferRequest');
  const [model] = byName(spans, 'repeat_int32');
  const [compute] = byName(spans, 'compute');
  assert.ok(root && model && compute);
  assert.equal(model.parentSpanId, root.spanId);
  assert.equal(compute.parentSpanId, model.spanId);
  // Three responses and the bare final flag: Triton's generate callback stamps each.
  assert.deepEqual(names(root), [
    'HTTP_RECV_START',
    'HTTP_RECV_END',
    'INFER_RESPONSE_COMPLETE',
    'INFER_RESPONSE_COMPLETE',
    'INFER_RESPONSE_COMPLETE',
    'INFER_RESPONSE_COMPLETE',
    'HTTP_SEND_START',
    'HTTP_SEND_END',
    'exception',
  ]);
  assert.deepEqual(names(model), ['REQUEST_START', 'QUEUE_START', 'RESPONSE_SEND', 'RESPONSE_SEND', 'RESPONSE_SEND', 'REQUEST_END', 'exception']);
  assert.equal(model.attributes['triton.response_count'], 3);
  // The responses come after execute returned: past the compute span, inside the model span, inside InferRequest.
  const sends = model.events.filter((e) => e.name === 'RESPONSE_SEND');
  assert.ok(compute.endTimeUnixNano <= (sends[0]?.timeUnixNano ?? 0n));
  assert.ok((sends[2]?.timeUnixNano ?? 0n) <= model.endTimeUnixNano && model.endTimeUnixNano <= root.endTimeUnixNano);
  // The error response inside the 200 stream is the request's failure.
  assert.equal(model.status.code, 2);
  assert.equal(root.attributes['error.type'], 'INVALID_ARG');
});

type TraceObject = { id: number; model_name?: string; timestamps?: { name: string; ns: number }[]; activity?: string; tensor?: Record<string, string> };

test('Triton mode: generate and generate_stream in the trace file, with TENSORS records of inputs and of each response', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-generate-trace-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'trace.json');
  const server = await startTestServer({
    repositories: [DECOUPLED, EXAMPLE_REPOSITORY],
    controlMode: 'explicit',
    loadModel: ['repeat_int32', 'token_counter'],
    trace: { mode: 'triton', level: ['TIMESTAMPS', 'TENSORS'], rate: 1, triton: { file } },
  });
  let closed = false;
  t.after(async () => {
    if (!closed) await server.close();
  });
  assert.equal((await postJson(`${server.httpUrl}/v2/models/token_counter/generate`, { id: 'g', text_input: 'a b c' })).status, 200);
  assert.equal((await postJson(`${server.httpUrl}/v2/models/repeat_int32/generate_stream`, { id: 's', IN: [4, 6] })).status, 200);
  await server.close();
  closed = true;

  const objects = JSON.parse(readFileSync(file, 'utf8')) as TraceObject[];
  const [single, stream] = objects.filter((o) => o.model_name !== undefined).map((h) => h.id);
  const stamps = (id: number | undefined) => objects.filter((o) => o.id === id && o.timestamps).map((o) => o.timestamps?.[0]?.name);
  const tensors = (id: number | undefined) => objects.filter((o) => o.id === id && o.activity).map((o) => [o.activity, o.tensor?.['name'], o.tensor?.['data']]);
  assert.deepEqual(stamps(single), [
    'HTTP_RECV_START',
    'HTTP_RECV_END',
    'REQUEST_START',
    'QUEUE_START',
    'COMPUTE_START',
    'COMPUTE_INPUT_END',
    'COMPUTE_OUTPUT_START',
    'COMPUTE_END',
    'REQUEST_END',
    'INFER_RESPONSE_COMPLETE',
    'HTTP_SEND_START',
    'HTTP_SEND_END',
  ]);
  assert.deepEqual(tensors(single), [
    ['TENSOR_QUEUE_INPUT', 'text_input', '"a b c"'],
    ['TENSOR_BACKEND_OUTPUT', 'token_count', '3'],
  ]);
  const streamStamps = stamps(stream);
  assert.deepEqual(streamStamps.slice(0, 4), ['HTTP_RECV_START', 'HTTP_RECV_END', 'REQUEST_START', 'QUEUE_START']);
  assert.equal(streamStamps.filter((n) => n === 'INFER_RESPONSE_COMPLETE').length, 3, 'two responses and the final flag');
  // HTTP_SEND_START as the last chunk (the final flag's) is written: Triton's trace_summary.py reads a send time.
  assert.deepEqual(streamStamps.slice(-4), ['INFER_RESPONSE_COMPLETE', 'HTTP_SEND_START', 'REQUEST_END', 'HTTP_SEND_END']);
  assert.deepEqual(tensors(stream), [
    ['TENSOR_QUEUE_INPUT', 'IN', '4,6'],
    ['TENSOR_BACKEND_OUTPUT', 'OUT', '4'],
    ['TENSOR_BACKEND_OUTPUT', 'IDX', '0'],
    ['TENSOR_BACKEND_OUTPUT', 'OUT', '6'],
    ['TENSOR_BACKEND_OUTPUT', 'IDX', '1'],
  ]);
});
