// Scheduler decisions driven by a manual clock: default scheduling, dynamic batching, priorities,
// queue policies, ordering, drain on close, and Triton's statistics rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/core/clock.ts';
import type { InferenceResult } from '../../../src/serving/backends/backend.ts';
import type { ModelQueuePolicy } from '../../../src/serving/model-config/model-config.ts';
import { ModelScheduler, type DynamicBatchingOptions } from '../../../src/serving/scheduler/model-scheduler.ts';
import { ModelStats } from '../../../src/serving/stats.ts';
import { gatedBackend, instance, request, settle, type GatedBackend } from './scheduler-fixtures.ts';

const REJECT: ModelQueuePolicy = { timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: true, max_queue_size: 0 };

function scheduler(backends: GatedBackend[], batching?: Partial<DynamicBatchingOptions> & { maxBatchSize?: number; preferred?: number[]; delayMs?: number }) {
  const clock = new ManualClock();
  const stats = new ModelStats('m', 1);
  const s = new ModelScheduler({
    modelName: 'm',
    instances: backends.map((b, i) => instance(`m_${i}`, b.backend)),
    stats,
    clock,
    batchSizeOf: (r) => r.inputs[0]?.shape[0] ?? 1,
    shapeKeyOf: (r) => r.inputs.map((t) => t.shape.slice(1).join(',')).join(';'),
    batching: batching && {
      policy: { maxBatchSize: batching.maxBatchSize ?? 8, preferredBatchSizes: batching.preferred ?? [], maxQueueDelayMs: batching.delayMs ?? 0 },
      preserveOrdering: batching.preserveOrdering ?? false,
      priorityLevels: batching.priorityLevels ?? 0,
      defaultPriorityLevel: batching.defaultPriorityLevel ?? 1,
      queuePolicies: batching.queuePolicies ?? [REJECT],
    },
  });
  return { s, clock, stats };
}

const errorOf = (r: InferenceResult) => (r.ok ? undefined : r.error.message);

test('default scheduler: one request per execution, FIFO; stats follow Triton counting', async () => {
  const b = gatedBackend();
  const { s, stats } = scheduler([b]);
  const results = [s.submit(request('1', { batch: 2 })), s.submit(request('2', { batch: 2 })), s.submit(request('bad', { batch: 2 }))];
  await settle();
  assert.deepEqual(b.batches, [['1']]);
  assert.equal(stats.pending, 2, 'pending counts queued requests, not the executing one');
  b.release();
  await settle();
  assert.deepEqual(b.batches, [['1'], ['2']]);
  b.release();
  await settle();
  b.release();
  assert.deepEqual(
    (await Promise.all(results)).map((r) => r.ok),
    [true, true, false],
  );
  const snap = stats.snapshot();
  assert.equal(snap.inference_stats.success.count, 2);
  assert.equal(snap.inference_stats.queue.count, 2, 'queue count equals success count');
  assert.equal(snap.inference_stats.fail.count, 1);
  assert.equal(snap.inference_count, 4, 'inference_count counts batch elements of successful requests');
  assert.equal(snap.execution_count, 3);
  assert.deepEqual(
    snap.batch_stats.map((x) => [x.batch_size, x.compute_infer.count]),
    [[2, 3]],
  );
  assert.equal(stats.pending, 0);
});

test('two instances run at once; a thrown error fails only its own batch', async () => {
  const a = gatedBackend();
  const b = gatedBackend();
  const { s } = scheduler([a, b]);
  const r1 = s.submit(request('throw'));
  const r2 = s.submit(request('ok'));
  await settle();
  assert.equal(a.running() + b.running(), 2);
  a.release();
  b.release();
  const [x, y] = await Promise.all([r1, r2]);
  assert.equal(errorOf(x), 'backend exploded');
  assert.equal(y.ok, true);
});

test('dynamic batching: requests that arrive while the instance is busy leave as one batch', async () => {
  const b = gatedBackend();
  const { s, stats } = scheduler([b], { maxBatchSize: 8 });
  const first = s.submit(request('1'));
  await settle();
  const rest = ['2', '3', '4'].map((id) => s.submit(request(id)));
  await settle();
  assert.deepEqual(b.batches, [['1']]);
  b.release();
  await settle();
  assert.deepEqual(b.batches, [['1'], ['2', '3', '4']]);
  b.release();
  await Promise.all([first, ...rest]);
  const snap = stats.snapshot();
  assert.equal(snap.execution_count, 2);
  assert.equal(snap.inference_count, 4);
  assert.equal(snap.inference_stats.success.count, 4);
  assert.deepEqual(
    snap.batch_stats.map((x) => [x.batch_size, x.compute_infer.count]),
    [
      [1, 1],
      [3, 1],
    ],
  );
});

test('dynamic batching: max_queue_delay holds a batch for a preferred size, then sends what is there', async () => {
  const b = gatedBackend();
  const { s, clock } = scheduler([b], { maxBatchSize: 8, preferred: [4], delayMs: 10 });
  const r = ['1', '2'].map((id) => s.submit(request(id)));
  await settle();
  assert.deepEqual(b.batches, [], 'waiting for a preferred batch');
  clock.advance(5);
  r.push(s.submit(request('3')), s.submit(request('4')), s.submit(request('5')));
  await settle();
  assert.deepEqual(b.batches, [['1', '2', '3', '4']], 'preferred size 4 goes at once');
  b.release();
  await settle();
  assert.deepEqual(b.batches.length, 1, '5 waits for its own delay');
  clock.advance(10);
  await settle();
  assert.deepEqual(b.batches, [['1', '2', '3', '4'], ['5']]);
  b.release();
  await Promise.all(r);
});

test('dynamic batching never exceeds max_batch_size and never merges different shapes', async () => {
  const b = gatedBackend();
  const { s } = scheduler([b], { maxBatchSize: 4 });
  const blocker = s.submit(request('0'));
  await settle();
  const r = [s.submit(request('a', { batch: 3 })), s.submit(request('b', { batch: 2 })), s.submit(request('c', { dims: [5] })), s.submit(request('d', { dims: [5] }))];
  await settle();
  for (let i = 0; i < 4; i++) {
    b.release();
    await settle();
  }
  assert.deepEqual(b.batches, [['0'], ['a'], ['b'], ['c', 'd']]);
  await Promise.all([blocker, ...r]);
});

test('priority levels: level 1 goes first; FIFO within a level; bad priorities are errors', async () => {
  const b = gatedBackend();
  const { s } = scheduler([b], { maxBatchSize: 1, priorityLevels: 3, defaultPriorityLevel: 2, queuePolicies: [REJECT, REJECT, REJECT] });
  const blocker = s.submit(request('busy'));
  await settle();
  const r = [
    s.submit(request('low', { parameters: { priority: 3 } })),
    s.submit(request('default')),
    s.submit(request('high1', { parameters: { priority: 1 } })),
    s.submit(request('high2', { parameters: { priority: 1 } })),
  ];
  const bad = await s.submit(request('x', { parameters: { priority: 4 } }));
  assert.match(errorOf(bad) ?? '', /priority 4 is not valid for model 'm': use 1 \(highest\) to 3/);
  for (let i = 0; i < 5; i++) {
    b.release();
    await settle();
  }
  assert.deepEqual(
    b.batches.map((x) => x[0]),
    ['busy', 'high1', 'high2', 'default', 'low'],
  );
  await Promise.all([blocker, ...r]);
});

test('a full queue answers at once with 503 "Exceeds maximum queue size"', async () => {
  const b = gatedBackend();
  const { s, stats } = scheduler([b], { queuePolicies: [{ ...REJECT, max_queue_size: 2 }] });
  const busy = s.submit(request('busy'));
  await settle();
  const queued = [s.submit(request('q1')), s.submit(request('q2'))];
  const rejected = await s.submit(request('q3'));
  assert.equal(rejected.ok === false && rejected.error.code, 'UNAVAILABLE');
  assert.match(errorOf(rejected) ?? '', /^Exceeds maximum queue size/);
  assert.equal(stats.failureCounts().REJECTED, 1);
  b.release();
  await settle();
  b.release();
  assert.deepEqual(
    (await Promise.all([busy, ...queued])).map((r) => r.ok),
    [true, true, true],
  );
});

test('timeouts: REJECT answers "Request timeout expired" on time even while instances are busy; DELAY serves later', async () => {
  const b = gatedBackend();
  const { s, clock } = scheduler([b], { maxBatchSize: 1, queuePolicies: [{ ...REJECT, default_timeout_microseconds: 5000 }] });
  const busy = s.submit(request('busy'));
  await settle();
  const late = s.submit(request('late'));
  const overridden = s.submit(request('patient', { parameters: { timeout: 50_000 } }));
  clock.advance(6);
  await settle();
  assert.equal(errorOf(await late), 'Request timeout expired');
  b.release();
  await settle();
  b.release();
  assert.equal((await overridden).ok, true, 'timeout override applies when allowed');
  await busy;

  const d = gatedBackend();
  const delayed = scheduler([d], { maxBatchSize: 1, queuePolicies: [{ ...REJECT, timeout_action: 'DELAY', default_timeout_microseconds: 1000, allow_timeout_override: false }] });
  const busy2 = delayed.s.submit(request('busy'));
  await settle();
  const old = delayed.s.submit(request('old'));
  delayed.clock.advance(2);
  const fresh = delayed.s.submit(request('fresh', { parameters: { timeout: 1_000_000 } }));
  delayed.clock.advance(0.5);
  await settle();
  for (let i = 0; i < 3; i++) {
    d.release();
    await settle();
  }
  assert.deepEqual(
    d.batches.map((x) => x[0]),
    ['busy', 'fresh', 'old'],
    'the expired request is served after the others',
  );
  await Promise.all([busy2, old, fresh]);
});

test('preserve_ordering answers in arrival order even when later batches finish first', async () => {
  const a = gatedBackend();
  const b = gatedBackend();
  const { s } = scheduler([a, b], { maxBatchSize: 1, preserveOrdering: true });
  const order: string[] = [];
  const first = s.submit(request('first')).then(() => order.push('first'));
  const second = s.submit(request('second')).then(() => order.push('second'));
  await settle();
  const runningSecond = a.batches[0]?.[0] === 'second' ? a : b;
  const runningFirst = runningSecond === a ? b : a;
  runningSecond.release();
  await settle();
  assert.deepEqual(order, []);
  runningFirst.release();
  await Promise.all([first, second]);
  assert.deepEqual(order, ['first', 'second']);
});

test('close cuts batch delays short, answers every accepted request, unloads, then refuses', async () => {
  const b = gatedBackend();
  const { s } = scheduler([b], { maxBatchSize: 8, preferred: [8], delayMs: 1_000_000 });
  const accepted = [s.submit(request('1')), s.submit(request('2'))];
  await settle();
  assert.deepEqual(b.batches, []);
  const closed = s.close();
  await settle();
  assert.deepEqual(b.batches, [['1', '2']]);
  b.release();
  await closed;
  assert.deepEqual(
    (await Promise.all(accepted)).map((r) => r.ok),
    [true, true],
  );
  assert.equal(b.unloaded, true);
  const refused = await s.submit(request('late'));
  assert.match(errorOf(refused) ?? '', /unloading/);
});

test('refuseIfFull: refuses (and counts) only when every priority level is at its max_queue_size', async () => {
  const b = gatedBackend();
  const { s, stats } = scheduler([b], {
    priorityLevels: 2,
    defaultPriorityLevel: 1,
    queuePolicies: [
      { ...REJECT, max_queue_size: 1 },
      { ...REJECT, max_queue_size: 1 },
    ],
  });
  const busy = s.submit(request('busy'));
  await settle();
  assert.equal(s.refuseIfFull(), undefined, 'both levels have room');
  const first = s.submit(request('q1'));
  assert.equal(s.refuseIfFull(), undefined, 'level 2 still has room');
  const second = s.submit(request('q2', { parameters: { priority: 2 } }));
  const refusal = s.refuseIfFull();
  assert.equal(refusal?.code, 'UNAVAILABLE');
  assert.match(refusal?.message ?? '', /^Exceeds maximum queue size for model 'm'$/);
  assert.equal(stats.failureCounts().REJECTED, 1);
  b.release();
  await settle();
  b.release();
  await settle();
  b.release();
  assert.deepEqual(
    (await Promise.all([busy, first, second])).map((r) => r.ok),
    [true, true, true],
  );
  assert.equal(s.refuseIfFull(), undefined);
});
