// Sampling: a parent-based ratio decided on the trace id's random part; children follow their parent; a
// propagated (remote) parent is always sampled, as Triton traces every request that carries a traceparent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RecordedSpan } from '../../src/tracing/recorded-span.ts';
import { RecordingTracer } from '../../src/tracing/recording-tracer.ts';
import { createSampler } from '../../src/tracing/sampler.ts';
import { inject, type TraceParent } from '../../src/tracing/trace-parent.ts';
import { SpanKind } from '../../src/tracing/tracer.ts';

/** Trace ids whose rightmost 56 bits are i/n of the range, for i in 0..n-1: an even spread without randomness. */
function spreadTraceIds(n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) =>
      `ab${'0'.repeat(16)}${Math.floor((i / n) * 2 ** 56)
        .toString(16)
        .padStart(14, '0')}`,
  );
}

const parent = (remote: boolean, sampled: boolean): TraceParent => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled, traceState: undefined, remote });

test('a root is sampled by the ratio of its trace id', () => {
  const ids = spreadTraceIds(1000);
  for (const ratio of [0, 0.1, 0.25, 0.5, 1]) {
    const sample = createSampler({ ratio, parentBased: true });
    assert.equal(ids.filter((id) => sample(undefined, id)).length, ratio * 1000, `ratio ${ratio}`);
  }
  // Every process agrees: the decision is a function of the trace id.
  const sample = createSampler({ ratio: 0.5, parentBased: true });
  for (const id of ids.slice(0, 50)) assert.equal(sample(undefined, id), sample(undefined, id));
});

test('parent-based: a local child follows its parent; a propagated parent is always sampled, even flagged 00, even at ratio 0', () => {
  const sample = createSampler({ ratio: 0, parentBased: true });
  assert.equal(sample(parent(false, true), 'a'.repeat(32)), true);
  assert.equal(sample(parent(false, false), 'a'.repeat(32)), false);
  assert.equal(sample(parent(true, false), 'a'.repeat(32)), true);
  assert.equal(sample(parent(true, true), 'a'.repeat(32)), true);
});

test('not parent-based (traceidratio, always_off): the ratio decides even under a propagated parent', () => {
  const off = createSampler({ ratio: 0, parentBased: false });
  assert.equal(off(parent(true, true), 'a'.repeat(32)), false);
  const on = createSampler({ ratio: 1, parentBased: false });
  assert.equal(on(parent(false, false), 'a'.repeat(32)), true);
});

test('the tracer: a sampled-out root records nothing but hands its trace down unsampled; a propagated request is recorded and sent on sampled', () => {
  const ended: RecordedSpan[] = [];
  const tracer = new RecordingTracer(createSampler({ ratio: 0, parentBased: true }), (span) => ended.push(span));
  const root = tracer.startSpan('root', { kind: SpanKind.SERVER, parent: undefined });
  assert.equal(root.recording, false);
  const child = tracer.startSpan('child', { kind: SpanKind.INTERNAL, parent: root.context() });
  assert.equal(child.recording, false);
  assert.equal(child.context().traceId, root.context().traceId);
  const headers: Record<string, string> = {};
  inject(child.context(), headers);
  assert.match(headers['traceparent'] ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  child.end();
  root.end();
  assert.equal(ended.length, 0);

  const propagated = tracer.startSpan('InferRequest', { kind: SpanKind.SERVER, parent: parent(true, false) });
  assert.equal(propagated.recording, true);
  const out: Record<string, string> = {};
  inject(propagated.context(), out);
  assert.equal(out['traceparent'], `00-${'a'.repeat(32)}-${propagated.context().spanId}-01`);
  propagated.end();
  assert.equal(ended.length, 1);
  assert.equal(ended[0]?.parentSpanId, 'b'.repeat(16));
  assert.equal(ended[0]?.parentRemote, true);
});

test('a span ends once; attributes past the limit and after the end are dropped, undefined values skipped', () => {
  const ended: RecordedSpan[] = [];
  const tracer = new RecordingTracer(createSampler({ ratio: 1, parentBased: true }), (span) => ended.push(span));
  const span = tracer.startSpan('s', { kind: SpanKind.INTERNAL, parent: undefined, attributes: { a: 1, skipped: undefined } });
  for (let i = 0; i < 200; i++) span.setAttribute(`k${i}`, i);
  span.setAttribute('a', 2);
  span.end(1);
  span.end();
  span.setAttribute('late', true);
  assert.equal(ended.length, 1);
  const recorded = ended[0] as RecordedSpan;
  assert.equal(recorded.attribute('a'), 2);
  assert.equal(recorded.attributes.keys.includes('skipped'), false);
  assert.equal(recorded.attributes.keys.length, 128);
  assert.equal(recorded.droppedAttributes, 73);
  assert.equal(recorded.attribute('late'), undefined);
  // An end before the start is clamped to the start.
  assert.equal(recorded.endMs, recorded.startMs);
});

test("a caller's own decision (Triton's rate and count) wins over the sampler, both ways", () => {
  const ended: RecordedSpan[] = [];
  const never = new RecordingTracer(createSampler({ ratio: 0, parentBased: true }), (span) => ended.push(span));
  assert.equal(never.startSpan('InferRequest', { kind: SpanKind.SERVER, parent: undefined, sampled: true }).recording, true);
  const always = new RecordingTracer(createSampler({ ratio: 1, parentBased: true }), (span) => ended.push(span));
  const skipped = always.startSpan('InferRequest', { kind: SpanKind.SERVER, parent: parent(true, true), sampled: false });
  assert.equal(skipped.recording, false);
  assert.equal(skipped.context().traceId, 'a'.repeat(32), 'the trace goes on, unrecorded');
});
