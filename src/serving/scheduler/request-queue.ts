// The scheduler's queue: one FIFO per priority level, each with its queue policy (max size,
// default timeout, REJECT or DELAY on expiry), walked in priority order — Triton's PriorityQueue.
import type { InferenceRequest, InferenceResult } from '../backends/backend.ts';
import type { ModelQueuePolicy } from '../model-config/model-config.ts';

export interface QueuedRequest {
  request: InferenceRequest;
  /** Batch elements the request carries (first dim of a batching model's inputs, else 1). */
  batchSize: number;
  /** Requests with different keys are never batched together (other dims, datatypes). */
  shapeKey: string;
  enqueuedAt: number;
  /** Clock time after which the queue policy applies; Infinity for none. */
  deadline: number;
  /** Arrival order, used to answer in order when preserve_ordering is set. */
  seq: number;
  finish: (result: InferenceResult) => void;
  /** Taken from the queue for execution: a cancellation then reaches the backend instead. */
  running: boolean;
  /** Removes the cancellation listener once the request is answered. */
  unwatch: (() => void) | undefined;
}

/** A FIFO that does not shift arrays on every pop. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  at(i: number): T | undefined {
    return this.items[this.head + i];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    // Clear the slot: a taken request (its tensors, the body they view, its promise) must not stay
    // reachable from the queue until the next compaction, or it survives young-generation GCs and is
    // promoted, which makes old-generation collections frequent under load.
    this.items[this.head++] = undefined as T;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes one item wherever it waits; false when it is not here. */
  remove(item: T): boolean {
    const at = this.items.indexOf(item, this.head);
    if (at < 0) return false;
    this.items.splice(at, 1);
    return true;
  }

  /** Removes and returns the items that match, keeping the order of the rest. */
  extract(match: (item: T) => boolean): T[] {
    const kept: T[] = [];
    const taken: T[] = [];
    for (let i = this.head; i < this.items.length; i++) (match(this.items[i] as T) ? taken : kept).push(this.items[i] as T);
    this.items = kept;
    this.head = 0;
    return taken;
  }
}

interface Level {
  policy: ModelQueuePolicy;
  queue: Fifo<QueuedRequest>;
  /** Requests whose timeout expired under a DELAY policy: served after the level's others. */
  delayed: Fifo<QueuedRequest>;
}

export const NO_POLICY: ModelQueuePolicy = { timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 0 };

export class RequestQueue {
  private readonly levels: Level[];
  private count = 0;
  private withDeadline = 0;

  /** `policies[0]` belongs to priority level 1 (the highest). */
  constructor(policies: readonly ModelQueuePolicy[]) {
    this.levels = (policies.length > 0 ? policies : [NO_POLICY]).map((policy) => ({ policy, queue: new Fifo(), delayed: new Fifo() }));
  }

  get size(): number {
    return this.count;
  }

  policyOf(level: number): ModelQueuePolicy {
    return (this.levels[level] ?? (this.levels[0] as Level)).policy;
  }

  /** True when every level has a max_queue_size and is at it: any new request would be refused. */
  isEveryLevelFull(): boolean {
    for (const level of this.levels) {
      const max = level.policy.max_queue_size;
      if (max === 0 || level.queue.length + level.delayed.length < max) return false;
    }
    return true;
  }

  /** False when the level's queue is full (max_queue_size counts queued requests of that level). */
  push(item: QueuedRequest, level: number): boolean {
    const target = this.levels[level] ?? (this.levels[0] as Level);
    const max = target.policy.max_queue_size;
    if (max > 0 && target.queue.length + target.delayed.length >= max) return false;
    target.queue.push(item);
    this.count += 1;
    if (item.deadline !== Infinity) this.withDeadline += 1;
    return true;
  }

  /** The i-th request in service order, without removing it. */
  peek(i: number): QueuedRequest | undefined {
    for (const level of this.levels) {
      if (i < level.queue.length) return level.queue.at(i);
      i -= level.queue.length;
      if (i < level.delayed.length) return level.delayed.at(i);
      i -= level.delayed.length;
    }
    return undefined;
  }

  /** Removes the first `n` requests in service order. */
  take(n: number): QueuedRequest[] {
    const out: QueuedRequest[] = [];
    for (const level of this.levels) {
      while (out.length < n && level.queue.length > 0) out.push(level.queue.shift() as QueuedRequest);
      while (out.length < n && level.delayed.length > 0) out.push(level.delayed.shift() as QueuedRequest);
    }
    this.count -= out.length;
    for (const item of out) if (item.deadline !== Infinity) this.withDeadline -= 1;
    return out;
  }

  /**
   * Applies the queue policies at `now`: expired REJECT requests are removed and returned; expired
   * DELAY requests move behind their level's others (their deadline is spent).
   */
  expire(now: number): QueuedRequest[] {
    if (this.withDeadline === 0) return [];
    const rejected: QueuedRequest[] = [];
    for (const level of this.levels) {
      const expired = level.queue.extract((r) => r.deadline <= now);
      for (const r of expired) {
        this.withDeadline -= 1;
        r.deadline = Infinity;
        if (level.policy.timeout_action === 'DELAY') level.delayed.push(r);
        else rejected.push(r);
      }
    }
    this.count -= rejected.length;
    return rejected;
  }

  /** The earliest deadline still pending, or Infinity. */
  nextDeadline(): number {
    if (this.withDeadline === 0) return Infinity;
    let min = Infinity;
    for (const level of this.levels) {
      for (let i = 0; i < level.queue.length; i++) min = Math.min(min, (level.queue.at(i) as QueuedRequest).deadline);
    }
    return min;
  }

  /** Takes out one request whose client went away; false when it is no longer queued. */
  remove(item: QueuedRequest): boolean {
    for (const level of this.levels) {
      if (level.queue.remove(item) || level.delayed.remove(item)) {
        this.count -= 1;
        if (item.deadline !== Infinity) this.withDeadline -= 1;
        return true;
      }
    }
    return false;
  }

  /** Removes everything (shutdown of a model that cannot drain). */
  clear(): QueuedRequest[] {
    const all = this.take(this.count);
    return all;
  }
}
