// The scheduler and a request's signal: a queued request whose signal fires leaves the queue at once with
// CANCELLED (Triton's CANCELED failure), one already aborted is never queued, a running one is only counted,
// and a batch waiting for more requests re-plans without the one that left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import { ManualClock } from '../../../src/core/clock.ts';
import type { InferenceResult } from '../../../src/serving/backends/backend.ts';
import { ModelScheduler } from '../../../src/serving/scheduler/model-scheduler.ts';
import { ModelStats } from '../../../src/serving/stats.ts';
import { gatedBackend, instance, request, settle, type GatedBackend } from './scheduler-fixtures.ts';

function scheduler(b: GatedBackend, delayMs?: number) {
  const clock = new ManualClock();
  const stats = new ModelStats('m', 1);
  const s = new ModelScheduler({
    modelName: 'm',
    instances: [instance('m_0', b.backend)],
    stats,
    clock,
    batchSizeOf: (r) => r.inputs[0]?.shape[0] ?? 1,
    shapeKeyOf: () => '',
    batching:
      delayMs === undefined
        ? undefined
        : {
            policy: { maxBatchSize: 8, preferredBatchSizes: [], maxQueueDelayMs: delayMs },
            preserveOrdering: true,
            priorityLevels: 0,
            defaultPriorityLevel: 1,
            queuePolicies: [{ timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 0 }],
          },
  });
  return { s, clock, stats };
}

const codeOf = (r: InferenceResult) => (r.ok ? 'OK' : r.error.code);

function cancellable(id: string) {
  const controller = new LightAbortController();
  return { controller, request: { ...request(id), signal: controller.signal } };
}

test('a queued request whose client leaves is answered CANCELLED at once and never executes', async () => {
  const b = gatedBackend();
  const { s, stats } = scheduler(b);
  const first = s.submit(request('busy'));
  const gone = cancellable('gone');
  const stays = cancellable('stays');
  const results = [s.submit(gone.request), s.submit(stays.request)];
  await settle();
  assert.equal(stats.pending, 2);
  gone.controller.abort();
  assert.equal(codeOf(await (results[0] as Promise<InferenceResult>)), 'CANCELLED');
  assert.equal(stats.pending, 1);
  b.release();
  await settle();
  b.release();
  assert.deepEqual((await Promise.all([first, results[1] as Promise<InferenceResult>])).map(codeOf), ['OK', 'OK']);
  assert.deepEqual(b.batches, [['busy'], ['stays']]);
  assert.deepEqual(stats.cancelled, { queued: 1, running: 0 });
  assert.equal(stats.failureCounts().CANCELED, 1);
  // A signal that fires after the answer changes nothing.
  stays.controller.abort();
  assert.deepEqual(stats.cancelled, { queued: 1, running: 0 });
});

test('an already aborted request is never queued; a running one is counted and still answered', async () => {
  const b = gatedBackend();
  const { s, stats } = scheduler(b);
  const early = cancellable('early');
  early.controller.abort();
  assert.equal(codeOf(await s.submit(early.request)), 'CANCELLED');
  const running = cancellable('running');
  const result = s.submit(running.request);
  await settle();
  running.controller.abort();
  b.release();
  assert.equal(codeOf(await result), 'OK', 'the backend decides what a cancelled execution answers');
  assert.deepEqual(b.batches, [['running']]);
  assert.deepEqual(stats.cancelled, { queued: 1, running: 1 });
});

test('dynamic batching with ordering: a request leaving a forming batch leaves it; the others go in order', async () => {
  const b = gatedBackend();
  const { s, clock, stats } = scheduler(b, 10);
  const a = cancellable('a');
  const gone = cancellable('gone');
  const c = cancellable('c');
  const results = [a, gone, c].map((x) => s.submit(x.request));
  await settle();
  assert.equal(b.batches.length, 0, 'the batch waits for its delay');
  gone.controller.abort();
  clock.advance(10);
  await settle();
  b.release();
  assert.deepEqual((await Promise.all(results)).map(codeOf), ['OK', 'CANCELLED', 'OK']);
  assert.deepEqual(b.batches, [['a', 'c']]);
  assert.equal(stats.pending, 0);
});
