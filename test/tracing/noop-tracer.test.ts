// Tracing off costs nothing: the no-op tracer's calls allocate no object, so a million traced calls
// trigger no garbage collection (counted by V8's GC profiler, not timed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GCProfiler } from 'node:v8';
import { NOOP_TRACER } from '../../src/tracing/noop-tracer.ts';
import { createTracing } from '../../src/tracing/create-tracing.ts';
import { tracingConfigSchema } from '../../src/config/tracing-config-schema.ts';
import { inject, NO_TRACE_PARENT } from '../../src/tracing/trace-parent.ts';
import { type SpanOptions, SpanKind } from '../../src/tracing/tracer.ts';

function tracedCall(options: SpanOptions, error: Error, headers: Record<string, string>): void {
  const span = NOOP_TRACER.startSpan('chat gpt-4o', options);
  span.setAttribute('gen_ai.request.model', 'gpt-4o');
  span.addEvent('first_chunk');
  span.recordError(error);
  inject(span.context(), headers);
  span.end();
}

test('the no-op tracer allocates nothing per call: a million spans, no collection', () => {
  const options: SpanOptions = { kind: SpanKind.CLIENT, parent: undefined };
  const error = new Error('x');
  const headers: Record<string, string> = {};
  for (let i = 0; i < 10_000; i++) tracedCall(options, error, headers); // warm up: compiled code, inline caches
  const profiler = new GCProfiler();
  profiler.start();
  for (let i = 0; i < 1_000_000; i++) tracedCall(options, error, headers);
  const collections = profiler.stop()?.statistics ?? [];
  assert.deepEqual(
    collections.map((c) => c.gcType),
    [],
    'a collection ran: something allocated per call',
  );
  assert.deepEqual(headers, {}, 'tracing off sends no traceparent');
});

test('the no-op span: not recording, the shared empty context', () => {
  const span = NOOP_TRACER.startSpan('x', { kind: SpanKind.SERVER, parent: undefined });
  assert.equal(NOOP_TRACER.enabled, false);
  assert.equal(span.recording, false);
  assert.equal(span.context(), NO_TRACE_PARENT);
});

test('tracing off by default: createTracing gives the no-op tracer and starts nothing', async () => {
  const tracing = createTracing(tracingConfigSchema.parse({}), { env: {} });
  assert.equal(tracing.tracer, NOOP_TRACER);
  await tracing.close();
});
