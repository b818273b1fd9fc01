// Triton's sampling (TraceSetting::SampleTrace): every rate-th request, count used up then none, -1 no limit,
// OFF none, and a request with a propagated traceparent always traced in OpenTelemetry mode.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceSampler, type TraceSamplerSetting } from '../../src/serving/trace-sampler.ts';

const OTEL: TraceSamplerSetting = { levels: ['TIMESTAMPS'], rate: 1, count: -1, mode: 'opentelemetry', file: '' };
const plain = { propagated: false };
const propagated = { propagated: true };

/** Which of `n` requests are traced (1-based). */
function traced(sampler: TraceSampler, n: number, request = plain): number[] {
  return Array.from({ length: n }, (_, i) => i + 1).filter(() => sampler.sample(request));
}

test('every rate-th request is traced; count -1 never runs out', () => {
  assert.deepEqual(traced(new TraceSampler({ ...OTEL, rate: 3 }), 10), [3, 6, 9]);
  const unlimited = new TraceSampler({ ...OTEL, rate: 1 });
  assert.equal(traced(unlimited, 1000).length, 1000);
  assert.equal(unlimited.count, -1);
});

test('count is used up by traced requests only, then nothing is traced and it stays 0', () => {
  const sampler = new TraceSampler({ ...OTEL, rate: 2, count: 2 });
  assert.deepEqual(traced(sampler, 10), [2, 4]);
  assert.equal(sampler.count, 0);
  assert.equal(sampler.valid, false);
  assert.equal(sampler.seen, 4, 'requests stop being counted once the count is used up');
});

test('level OFF, rate 0 and Triton mode without a file trace nothing by rate, each with Triton reason', () => {
  const off = new TraceSampler({ ...OTEL, levels: [] });
  assert.deepEqual([traced(off, 5), off.invalidReason], [[], 'tracing is disabled']);
  const rateZero = new TraceSampler({ ...OTEL, rate: 0 });
  assert.deepEqual([traced(rateZero, 5), rateZero.invalidReason], [[], 'sample rate must be non-zero']);
  const noFile = new TraceSampler({ ...OTEL, mode: 'triton' });
  assert.deepEqual([traced(noFile, 5), noFile.invalidReason], [[], 'trace file name is not given']);
  assert.deepEqual(traced(new TraceSampler({ ...OTEL, mode: 'triton', file: '/tmp/t.json' }), 3), [1, 2, 3]);
});

test('a propagated traceparent is always traced in OpenTelemetry mode, even at rate 0 or with the count used up', () => {
  const rateZero = new TraceSampler({ ...OTEL, rate: 0 });
  assert.deepEqual(traced(rateZero, 3, propagated), [1, 2, 3], "rate 0 is Triton's way to trace only propagated requests");
  const spent = new TraceSampler({ ...OTEL, rate: 5, count: 1 });
  assert.deepEqual(traced(spent, 5), [5]);
  assert.deepEqual(traced(spent, 3, propagated), [1, 2, 3]);
  assert.equal(spent.count, 0);
  // A propagated request is counted too: it can be the rate-th one and use up the count.
  const counted = new TraceSampler({ ...OTEL, rate: 2, count: 1 });
  assert.equal(counted.sample(plain), false);
  assert.equal(counted.sample(propagated), true);
  assert.equal(counted.count, 0);
  assert.deepEqual(traced(counted, 4), []);
});

test('a propagated traceparent changes nothing when the level is OFF or in Triton mode', () => {
  assert.deepEqual(traced(new TraceSampler({ ...OTEL, levels: [] }), 3, propagated), []);
  assert.deepEqual(traced(new TraceSampler({ ...OTEL, mode: 'triton', file: '/tmp/t.json', rate: 2 }), 4, propagated), [2, 4]);
});
