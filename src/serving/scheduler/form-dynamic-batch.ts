// The dynamic batcher's decision, as a pure function over the queue (Triton's GetDynamicBatch):
// how many queued requests to send now, or how long to wait for a better batch.
import type { QueuedRequest } from './request-queue.ts';

export interface BatchPolicy {
  maxBatchSize: number;
  /** Sorted ascending; empty means max_batch_size is the one preferred size. */
  preferredBatchSizes: readonly number[];
  maxQueueDelayMs: number;
}

export type BatchDecision = { send: number; batchSize: number } | { waitMs: number };

/**
 * Walks the queue in service order, growing a batch of requests with the same shape key. A batch of
 * a preferred size goes at once; otherwise the batch waits for more requests until the oldest one has
 * waited max_queue_delay, then whatever is pending goes.
 */
export function formDynamicBatch(peek: (i: number) => QueuedRequest | undefined, now: number, policy: BatchPolicy): BatchDecision {
  const first = peek(0);
  if (!first) return { waitMs: Infinity };
  const maxPreferred = policy.preferredBatchSizes.length > 0 ? (policy.preferredBatchSizes[policy.preferredBatchSizes.length - 1] as number) : policy.maxBatchSize;
  let pending = 0;
  let count = 0;
  let bestPreferred = 0;
  let bestCount = 0;
  let sendNow = false;
  for (let i = 0; ; i++) {
    const item = peek(i);
    if (!item) break;
    const size = Math.max(1, item.batchSize);
    if (count > 0) {
      if (pending + size > maxPreferred && bestPreferred === 0) {
        bestPreferred = pending;
        bestCount = count;
      }
      if (pending + size > policy.maxBatchSize || item.shapeKey !== first.shapeKey) {
        sendNow = true;
        break;
      }
    }
    pending += size;
    count += 1;
    if (policy.preferredBatchSizes.includes(pending)) {
      bestPreferred = pending;
      bestCount = count;
    }
  }
  const delayExceeded = now - first.enqueuedAt >= policy.maxQueueDelayMs;
  if (bestPreferred !== 0 && !delayExceeded) return { send: bestCount, batchSize: bestPreferred };
  if (sendNow || delayExceeded || pending >= maxPreferred) return { send: count, batchSize: pending };
  return { waitMs: policy.maxQueueDelayMs - (now - first.enqueuedAt) };
}
