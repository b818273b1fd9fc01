// A traced inference's spans and records without a server: the tracer's recorded spans read back, the
// Triton records as the trace file gets them, and an llm step's ChatPort call carrying its compute span's traceparent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatPort, ChatPortRequest } from '../../src/core/chat-port.ts';
import { servingTraceSchema } from '../../src/config/serving-trace-config-schema.ts';
import { createLlmBackend } from '../../src/serving/backends/llm/llm-backend.ts';
import { autoCompleteLlmConfig } from '../../src/serving/backends/llm/llm-model-config.ts';
import { type InferTrace, startInferTrace } from '../../src/serving/infer-trace.ts';
import { parsePbtxtModelConfig } from '../../src/serving/model-config/parse-model-config.ts';
import { TraceSettings } from '../../src/serving/trace-settings.ts';
import type { TritonTraceRecord } from '../../src/serving/triton-trace-file.ts';
import type { RecordedSpan } from '../../src/tracing/recorded-span.ts';
import { RecordingTracer } from '../../src/tracing/recording-tracer.ts';
import { createSampler } from '../../src/tracing/sampler.ts';
import { NOOP_TRACER } from '../../src/tracing/noop-tracer.ts';
import { extractTraceParent, formatTraceParent } from '../../src/tracing/trace-parent.ts';
import { llmModel } from './llm/llm-fixtures.ts';

const settings = (trace: Record<string, unknown>) => new TraceSettings(servingTraceSchema.parse({ level: ['TIMESTAMPS'], rate: 1, ...trace }), { env: {} });

/** A tracer that records every span (sampler ratio 0: only the callers' own decisions record). */
function recorder(): { tracer: RecordingTracer; ended: RecordedSpan[] } {
  const ended: RecordedSpan[] = [];
  return { tracer: new RecordingTracer(createSampler({ ratio: 0, parentBased: true }), (s) => ended.push(s)), ended };
}

test('not sampled: no trace at all (rate 2 skips the first request; level OFF traces nothing, even propagated)', () => {
  const { tracer } = recorder();
  assert.equal(startInferTrace({ settings: settings({ mode: 'opentelemetry', rate: 2 }), tracer }, 'simple', undefined), undefined);
  const off = settings({ mode: 'opentelemetry', level: ['OFF'] });
  assert.equal(startInferTrace({ settings: off, tracer }, 'simple', extractTraceParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', undefined)), undefined);
});

test('OpenTelemetry mode: InferRequest → model → compute, sampled whatever the tracer ratio; a BLS-like child under compute', () => {
  const { tracer, ended } = recorder();
  const trace = startInferTrace({ settings: settings({ mode: 'opentelemetry' }), tracer }, 'outer', undefined) as InferTrace;
  const model = trace.startModel('outer', 3, 'r1');
  model.mark('QUEUE_START');
  model.computeStart(4);
  const child = model.child().startModel('inner', 1, 'r1');
  assert.equal(child.context()?.traceId, model.context()?.traceId);
  child.end();
  const t = performance.now();
  model.computeEnd(t, t, t);
  model.end(new Error('boom'));
  trace.end();
  const [inner, compute, outer, root] = ended;
  assert.deepEqual(
    ended.map((s) => s.name),
    ['inner', 'compute', 'outer', 'InferRequest'],
  );
  assert.equal(inner?.parentSpanId, compute?.spanId, 'a call made while computing hangs from the compute span');
  assert.equal(compute?.parentSpanId, outer?.spanId);
  assert.equal(outer?.parentSpanId, root?.spanId);
  assert.equal(compute?.attribute('triton.batch_size'), 4);
  assert.equal(outer?.attribute('triton.model_version'), 3);
  assert.equal(inner?.attribute('triton.trace_parent_id'), outer?.attribute('triton.trace_id'));
  assert.equal(outer?.statusCode, 2, 'the failure is recorded on the model span');
  assert.deepEqual(
    outer?.events?.map((e) => e.name),
    ['REQUEST_START', 'QUEUE_START', 'REQUEST_END', 'exception'],
  );
});

test('Triton mode: records per trace id, frontend stamps first under the request id, a child with its parent id', () => {
  const written: (readonly TritonTraceRecord[])[] = [];
  const store = settings({ mode: 'triton', triton: { file: '/nonexistent/never-written.json' } });
  const trace = startInferTrace({ settings: store, tracer: NOOP_TRACER }, 'ens', undefined) as InferTrace;
  // Capture what the setting would write.
  Object.assign(trace.sampled, { finish: (records: readonly TritonTraceRecord[]) => written.push(records) });
  trace.capture('HTTP_RECV_START');
  const ens = trace.startModel('ens', 1, '');
  const step = ens.child().startModel('step', 2, '');
  step.computeStart(1);
  const t = performance.now();
  step.computeEnd(t, t, t);
  step.end();
  ens.end();
  trace.capture('HTTP_SEND_END');
  trace.end();
  const [records] = written;
  assert.deepEqual(
    records?.map((r) => [r.model_name, r.model_version, r.parent_id, r.timestamps.map((s) => s.name)]),
    [
      ['ens', 1, undefined, ['HTTP_RECV_START', 'REQUEST_START', 'REQUEST_END', 'HTTP_SEND_END']],
      ['step', 2, records?.[0]?.id, ['REQUEST_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END']],
    ],
  );
});

test("an llm model's ChatPort call carries its compute span's traceparent; untraced, none", async () => {
  const calls: ChatPortRequest[] = [];
  const port: ChatPort = {
    admit: () => ({ name: 'x' }),
    complete: async (request) => {
      calls.push(request);
      return { text: 'hi', finishReason: 'stop', model: 'm', usage: { inputTokens: 1, outputTokens: 1 } } as unknown as Awaited<ReturnType<ChatPort['complete']>>;
    },
    stream: () => {
      throw new Error('not streamed');
    },
  };
  const config = autoCompleteLlmConfig(parsePbtxtModelConfig(llmModel('chat').config, 'config.pbtxt'));
  const backend = await createLlmBackend(() => port).load({ config, modelPath: '/m', versionPath: '/m/1', version: 1, instanceName: 'chat_0', instanceKind: 'KIND_CPU' });
  const { tracer } = recorder();
  const trace = startInferTrace({ settings: settings({ mode: 'opentelemetry' }), tracer }, 'chat', undefined) as InferTrace;
  const model = trace.startModel('chat', 1, '');
  model.computeStart(1);
  const input = { name: 'text_input', datatype: 'BYTES' as const, shape: [1], data: [new TextEncoder().encode('hello')] };
  const request = { id: '', modelName: 'chat', modelVersion: 1, inputs: [input], requestedOutputs: [], parameters: {} };
  await backend.execute([{ ...request, trace: model }, request]);
  assert.equal(calls[0]?.traceparent, formatTraceParent(model.context() as NonNullable<ReturnType<typeof model.context>>));
  assert.equal(calls[1]?.traceparent, undefined);
});
