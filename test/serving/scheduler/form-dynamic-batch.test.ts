import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formDynamicBatch, type BatchPolicy } from '../../../src/serving/scheduler/form-dynamic-batch.ts';
import type { QueuedRequest } from '../../../src/serving/scheduler/request-queue.ts';

const queued = (sizes: number[], at = 0, keys?: string[]): ((i: number) => QueuedRequest | undefined) => {
  const items = sizes.map((batchSize, i) => ({ batchSize, shapeKey: keys?.[i] ?? 'k', enqueuedAt: at, deadline: Infinity, seq: i }) as QueuedRequest);
  return (i) => items[i];
};
const policy = (p: Partial<BatchPolicy> = {}): BatchPolicy => ({ maxBatchSize: 8, preferredBatchSizes: [], maxQueueDelayMs: 0, ...p });

test('no delay: whatever is pending goes at once, up to max_batch_size', () => {
  assert.deepEqual(formDynamicBatch(queued([1, 1, 1]), 0, policy()), { send: 3, batchSize: 3 });
  assert.deepEqual(formDynamicBatch(queued(Array(12).fill(1)), 0, policy()), { send: 8, batchSize: 8 });
  assert.deepEqual(formDynamicBatch(queued([3, 3, 3]), 0, policy()), { send: 2, batchSize: 6 });
});

test('a preferred size goes at once; the largest one reached is chosen', () => {
  const p = policy({ preferredBatchSizes: [2, 4], maxQueueDelayMs: 10 });
  assert.deepEqual(formDynamicBatch(queued([1, 1, 1]), 0, p), { send: 2, batchSize: 2 });
  assert.deepEqual(formDynamicBatch(queued([1, 1, 1, 1, 1]), 0, p), { send: 4, batchSize: 4 });
});

test('below a preferred size the batch waits for the rest of the delay, then goes as it is', () => {
  const p = policy({ preferredBatchSizes: [4], maxQueueDelayMs: 10 });
  assert.deepEqual(formDynamicBatch(queued([1, 1, 1], 0), 3, p), { waitMs: 7 });
  assert.deepEqual(formDynamicBatch(queued([1, 1, 1], 0), 10, p), { send: 3, batchSize: 3 });
  const noPreferred = policy({ maxQueueDelayMs: 5 });
  assert.deepEqual(formDynamicBatch(queued([1, 1], 0), 1, noPreferred), { waitMs: 4 });
  assert.deepEqual(formDynamicBatch(queued(Array(8).fill(1), 0), 1, noPreferred), { send: 8, batchSize: 8 }, 'max_batch_size reached');
});

test('a request of another shape ends the batch; it is not skipped over', () => {
  const p = policy({ maxQueueDelayMs: 100 });
  assert.deepEqual(formDynamicBatch(queued([1, 1, 1], 0, ['a', 'a', 'b']), 0, p), { send: 2, batchSize: 2 });
  assert.deepEqual(formDynamicBatch(queued([1, 1], 0, ['a', 'b']), 0, p), { send: 1, batchSize: 1 });
});

test('an empty queue waits forever', () => {
  assert.deepEqual(
    formDynamicBatch(() => undefined, 0, policy()),
    { waitMs: Infinity },
  );
});
