// A traced request's responses and tensors without a server: a decoupled model's span covering its stream with
// bounded RESPONSE_SEND events, INFER_RESPONSE_COMPLETE bounded the same way, and level TENSORS in both modes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servingTraceSchema } from '../../src/config/serving-trace-config-schema.ts';
import { HerdError } from '../../src/core/errors.ts';
import type { Tensor } from '../../src/core/tensor.ts';
import type { InferenceRequest, InferenceResult, ResponseSender } from '../../src/serving/backends/backend.ts';
import { type InferTrace, startInferTrace } from '../../src/serving/infer-trace.ts';
import { TRACED_RESPONSE_LIMIT, TRACED_TENSOR_LIMIT } from '../../src/serving/trace-responses.ts';
import { submitTraced } from '../../src/serving/trace-submit.ts';
import { TraceSettings } from '../../src/serving/trace-settings.ts';
import { formatTritonTrace, type TritonTraceRecord } from '../../src/serving/triton-trace-file.ts';
import type { RecordedSpan } from '../../src/tracing/recorded-span.ts';
import { RecordingTracer } from '../../src/tracing/recording-tracer.ts';
import { createSampler } from '../../src/tracing/sampler.ts';
import { NOOP_TRACER } from '../../src/tracing/noop-tracer.ts';

const settings = (trace: Record<string, unknown>) => new TraceSettings(servingTraceSchema.parse({ level: ['TIMESTAMPS'], rate: 1, ...trace }), { env: {} });

function recorder(): { tracer: RecordingTracer; ended: RecordedSpan[] } {
  const ended: RecordedSpan[] = [];
  return { tracer: new RecordingTracer(createSampler({ ratio: 0, parentBased: true }), (s) => ended.push(s)), ended };
}

/** An OpenTelemetry-mode trace, or a Triton-mode one whose finished records land in `written`. */
function traced(mode: 'opentelemetry' | 'triton', level: string[] = ['TIMESTAMPS']) {
  const { tracer, ended } = recorder();
  const store = settings({ mode, level, triton: { file: '/nonexistent/never-written.json' } });
  const trace = startInferTrace({ settings: store, tracer: mode === 'triton' ? NOOP_TRACER : tracer }, 'm', undefined) as InferTrace;
  const written: (readonly TritonTraceRecord[])[] = [];
  Object.assign(trace.sampled, { finish: (records: readonly TritonTraceRecord[]) => written.push(records) });
  return { trace, ended, written };
}

const int32 = (name: string, values: number[]): Tensor => ({ name, datatype: 'INT32', shape: [values.length], data: Int32Array.from(values) });

function request(inputs: Tensor[], sender?: ResponseSender): InferenceRequest {
  const r: InferenceRequest = { id: 'r', modelName: 'm', modelVersion: 1, inputs, requestedOutputs: [], parameters: {} };
  if (sender) r.responseSender = sender;
  return r;
}

/** A sender that counts, standing for the response stream (which refuses a send after the final one). */
function sink(): ResponseSender & { sent: number } {
  let closed = false;
  const s = {
    sent: 0,
    send: (_: InferenceResult, final = false) => {
      if (closed) throw new HerdError('INTERNAL', 'the response sender is closed');
      s.sent += 1;
      if (final) closed = true;
    },
    close: () => {
      closed = true;
    },
    get closed() {
      return closed;
    },
    signal: new AbortController().signal,
  };
  return s;
}

test('a decoupled model: its span runs to the last response, RESPONSE_SEND per response up to the bound, then the last; a failing response is its status', async () => {
  const { trace, ended } = traced('opentelemetry');
  const model = trace.startModel('m', 1, 'r');
  const inner = sink();
  const total = TRACED_RESPONSE_LIMIT + 8;
  await submitTraced(
    request([int32('IN', [1])], inner),
    {
      submit: async (r) => {
        model.computeStart(1);
        const t = performance.now();
        model.computeEnd(t, t, t);
        // Sent after execute returned, as a decoupled model does.
        const sender = r.responseSender as ResponseSender;
        for (let i = 0; i < total - 1; i++) sender.send(i === 3 ? { ok: false, error: new HerdError('INVALID_ARG', 'bad element') } : { ok: true, outputs: [] });
        sender.send({ ok: true, outputs: [] }, true);
        // A send after the final one is refused by the stream, and is not a response.
        assert.throws(() => sender.send({ ok: true, outputs: [] }));
        return { ok: true, outputs: [] };
      },
    },
    model,
  );
  assert.equal(inner.sent, total, 'every send reached the stream');
  model.end();
  trace.end();
  const span = ended.find((s) => s.name === 'm') as RecordedSpan;
  const compute = ended.find((s) => s.name === 'compute') as RecordedSpan;
  const events = span.events ?? [];
  const sends = events.filter((e) => e.name === 'RESPONSE_SEND');
  assert.equal(sends.length, TRACED_RESPONSE_LIMIT + 1, 'the first responses, then the last');
  assert.deepEqual(sends.at(-1)?.attributes?.values, [true], 'the last one is the final response');
  assert.deepEqual(
    events.slice(-3).map((e) => e.name),
    ['RESPONSE_SEND', 'REQUEST_END', 'exception'],
  );
  assert.ok(compute.endMs <= (sends.at(-1)?.timeMs ?? 0) && (sends.at(-1)?.timeMs ?? 0) <= span.endMs, 'the model span covers the stream past compute');
  assert.equal(span.attribute('triton.response_count'), total);
  assert.equal(span.statusCode, 2);
  assert.equal(span.attribute('error.type'), 'INVALID_ARG');
});

test('INFER_RESPONSE_COMPLETE: bounded in the file the same way, the held last one written before what follows', () => {
  const { trace, written } = traced('triton');
  trace.capture('HTTP_RECV_START');
  trace.startModel('m', 1, '').end();
  for (let i = 0; i < TRACED_RESPONSE_LIMIT + 5; i++) trace.responseComplete();
  trace.capture('HTTP_SEND_END');
  trace.end();
  const names = written[0]?.[0]?.timestamps.map((s) => s.name) ?? [];
  assert.equal(names.filter((n) => n === 'INFER_RESPONSE_COMPLETE').length, TRACED_RESPONSE_LIMIT + 1);
  assert.deepEqual(names.slice(-2), ['INFER_RESPONSE_COMPLETE', 'HTTP_SEND_END']);
  const ns = written[0]?.[0]?.timestamps.map((s) => Number(s.ns)) ?? [];
  assert.deepEqual(
    ns,
    [...ns].sort((a, b) => a - b),
  );
});

test('TENSORS in Triton mode: TENSOR_QUEUE_INPUT and TENSOR_BACKEND_OUTPUT records in the file, as tracer.cc writes them', async () => {
  const { trace, written } = traced('triton', ['TIMESTAMPS', 'TENSORS']);
  const model = trace.startModel('m', 1, 'r');
  await submitTraced(request([int32('INPUT0', [1, 2])]), { submit: async () => ({ ok: true, outputs: [int32('OUTPUT0', [3, 4])] }) }, model);
  model.end();
  trace.end();
  const objects = JSON.parse(`[${formatTritonTrace(written[0] ?? [])}]`) as { id: number; activity?: string; tensor?: unknown }[];
  assert.deepEqual(
    objects.filter((o) => o.activity),
    [
      { id: model.id, activity: 'TENSOR_QUEUE_INPUT', tensor: { name: 'INPUT0', data: '1,2', shape: '2', dtype: 'INT32' } },
      { id: model.id, activity: 'TENSOR_BACKEND_OUTPUT', tensor: { name: 'OUTPUT0', data: '3,4', shape: '2', dtype: 'INT32' } },
    ],
  );
});

test('TENSORS without TIMESTAMPS records no timestamps (Triton gates each on its level); TIMESTAMPS alone records no tensors', async () => {
  const only = traced('triton', ['TENSORS']);
  only.trace.capture('HTTP_RECV_START');
  const model = only.trace.startModel('m', 1, '');
  await submitTraced(request([int32('IN', [1])]), { submit: async () => ({ ok: true, outputs: [] }) }, model);
  model.end();
  only.trace.end();
  assert.deepEqual(only.written[0]?.[0]?.timestamps, []);
  assert.equal(only.written[0]?.[0]?.tensors?.length, 1);

  const stamps = traced('triton');
  const m2 = stamps.trace.startModel('m', 1, '');
  await submitTraced(request([int32('IN', [1])]), { submit: async () => ({ ok: true, outputs: [int32('OUT', [1])] }) }, m2);
  m2.end();
  stamps.trace.end();
  assert.equal(stamps.written[0]?.[0]?.tensors, undefined);
});

test('TENSORS in OpenTelemetry mode: events on the model span with the tensor as attributes, at most TRACED_TENSOR_LIMIT', async () => {
  const { trace, ended } = traced('opentelemetry', ['TIMESTAMPS', 'TENSORS']);
  const model = trace.startModel('m', 1, '');
  const inputs = Array.from({ length: TRACED_TENSOR_LIMIT + 3 }, (_, i) => int32(`IN${i}`, [i]));
  await submitTraced(request(inputs), { submit: async () => ({ ok: true, outputs: [int32('OUT', [7, 8])] }) }, model);
  model.end();
  trace.end();
  const span = ended.find((s) => s.name === 'm') as RecordedSpan;
  const tensors = (span.events ?? []).filter((e) => e.name.startsWith('TENSOR_'));
  assert.equal(tensors.length, TRACED_TENSOR_LIMIT);
  const first = tensors[0];
  assert.deepEqual(first?.attributes?.keys, ['triton.tensor.name', 'triton.tensor.datatype', 'triton.tensor.shape', 'triton.tensor.data']);
  assert.deepEqual(first?.attributes?.values, ['IN0', 'INT32', [1], '0']);
  assert.equal(span.attribute('triton.tensors_dropped'), 4, 'three inputs and the output past the bound');
});
