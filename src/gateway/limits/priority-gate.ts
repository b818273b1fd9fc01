// A priority queue in front of a LimitStore: requests wait for a slot (a lease, a window's room)
// in class order HIGH, NORMAL, BATCH, FIFO within a class, with aging so BATCH cannot starve;
// each waits at most its own budget and a full queue sheds its lowest-ranked waiter.
//
// Aging rule: a waiter is ordered by its *virtual arrival* = arrival + rank × aging_ms (HIGH 0,
// NORMAL 1, BATCH 2). Equivalently its class rises one step per aging_ms waited: a BATCH request
// that has waited 2 × aging_ms goes before every HIGH request that arrives after that moment, so
// under any stream of HIGH arrivals it is admitted within 2 × aging_ms plus the time to serve the
// (bounded, ≤ max_queue) set of requests ranked ahead of it then. The order is fixed at arrival,
// so the queue is a sorted array, never re-sorted.
import type { AbortLink } from '../../core/abort-link.ts';
import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../../core/clock.ts';
import { HerdError, toHerdError } from '../../core/errors.ts';
import { LimitHold } from './limit-hold.ts';
import { pickLongestRefusal, type LimitCheck, type LimitDecision, type LimitStore } from './limit-store.ts';
import { PRIORITY_RANK, type Priority } from './priority.ts';

export interface PriorityGateOptions {
  /** What waits here, for messages: `upstream model holysheep/gpt-4.1`, `provider holysheep`. */
  subject: string;
  /** Counter scope in the store (`model:holysheep/gpt-4.1`). */
  group: string;
  checks: readonly LimitCheck[];
  store: LimitStore;
  clock: Clock;
  agingMs: number;
  maxQueue: number;
  /** Longest wait here; a request's own budget may be shorter. Undefined: the request's budget alone. */
  queueTimeoutMs?: number | undefined;
  /** Shared store: how often a waiting head looks for slots other replicas freed. */
  pollMs: number;
}

export interface GateRequest {
  priority: Priority;
  /** Aborting it leaves the queue at once, rejecting with the signal's reason. */
  signal: AbortLink;
  /** The request's budget for waiting (e.g. what is left of its deadline). */
  maxWaitMs: number;
}

export interface GatePass {
  readonly waitedMs: number;
  /** Frees the slot for the next waiter; idempotent. */
  release(): void;
}

export type GateRejection = 'timeout' | 'full' | 'evicted' | 'too_late';

/** Cumulative counts and current gauges, read at scrape time. */
export interface GateStats {
  waiting: Record<Priority, number>;
  inFlight: number;
  admitted: Record<Priority, number>;
  /** Sum of the queue waits of admitted requests, ms (with `admitted`: the mean wait). */
  waitMsTotal: Record<Priority, number>;
  /** Longest queue wait of an admitted request so far, ms. */
  maxWaitMs: number;
  rejected: Record<GateRejection, number>;
}

interface Waiter {
  priority: Priority;
  /** Virtual arrival (see the aging rule); ties broken by seq. */
  order: number;
  seq: number;
  enqueuedAt: number;
  /** Absolute time by which it must be admitted. */
  deadline: number;
  done: boolean;
  timer: Timer | undefined;
  signal: AbortLink;
  onAbort: () => void;
  resolve(pass: GatePass): void;
  reject(err: unknown): void;
}

const perPriority = (): Record<Priority, number> => ({ HIGH: 0, NORMAL: 0, BATCH: 0 });

export class PriorityGate {
  readonly subject: string;
  private readonly options: PriorityGateOptions;
  private readonly queue: Waiter[] = [];
  private seq = 0;
  private holders = 0;
  private pumping = false;
  private again = false;
  private wake: Timer | undefined;
  private inFlight = 0;
  /** Moving average of how long a slot is held, for a Retry-After estimate. */
  private meanHoldMs: number | undefined;
  private lastWindowWaitMs: number | undefined;
  private readonly counts = { admitted: perPriority(), waitMsTotal: perPriority(), maxWaitMs: 0, rejected: { timeout: 0, full: 0, evicted: 0, too_late: 0 } };

  constructor(options: PriorityGateOptions) {
    this.options = options;
    this.subject = options.subject;
  }

  acquire(request: GateRequest): Promise<GatePass> {
    const { clock, agingMs, maxQueue, queueTimeoutMs, store } = this.options;
    // Nobody waiting and the counts in this process: a free slot is granted without queueing (no
    // timer, no abort listener), which is every request while the upstream is below its limit.
    if (this.queue.length === 0 && store.acquireNow !== undefined && !request.signal.aborted) {
      const id = this.newHolderId();
      const decision = store.acquireNow(this.options.group, id, this.options.checks);
      if (decision.granted) {
        const now = clock.now();
        return Promise.resolve(this.grant(request.priority, now, new LimitHold({ store, group: this.options.group, id, checks: this.options.checks, clock })));
      }
    }
    return new Promise<GatePass>((resolve, reject) => {
      if (request.signal.aborted) {
        reject(request.signal.reason);
        return;
      }
      const now = clock.now();
      const budget = Math.max(0, Math.min(request.maxWaitMs, queueTimeoutMs ?? Number.POSITIVE_INFINITY));
      const waiter: Waiter = {
        priority: request.priority,
        order: now + PRIORITY_RANK[request.priority] * agingMs,
        seq: this.seq++,
        enqueuedAt: now,
        deadline: now + budget,
        done: false,
        timer: undefined,
        signal: request.signal,
        onAbort: () => this.leave(waiter, request.signal.reason),
        resolve,
        reject,
      };
      if (this.queue.length >= maxQueue) {
        const worst = this.queue.at(-1);
        if (worst === undefined || !ranksBefore(waiter, worst)) {
          this.counts.rejected.full++;
          reject(this.busyError(`its queue is full (${maxQueue} waiting)`, { ahead: this.queue.length }));
          return;
        }
        this.fail(worst, 'evicted', this.busyError(`a request of higher priority took this one's place in its full queue (${maxQueue} waiting)`, { ahead: this.queue.length }));
      }
      this.queue.splice(this.insertionIndex(waiter), 0, waiter);
      if (Number.isFinite(budget)) {
        waiter.timer = clock.setTimer(() => {
          this.fail(waiter, 'timeout', this.busyError(`no slot was free within ${Math.round(budget)} ms`, { ahead: this.queue.indexOf(waiter) }));
        }, budget);
      }
      request.signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.pump();
    });
  }

  stats(): GateStats {
    const waiting = perPriority();
    for (const w of this.queue) waiting[w.priority]++;
    const { admitted, waitMsTotal, maxWaitMs, rejected } = this.counts;
    return { waiting, inFlight: this.inFlight, admitted: { ...admitted }, waitMsTotal: { ...waitMsTotal }, maxWaitMs, rejected: { ...rejected } };
  }

  get depth(): number {
    return this.queue.length;
  }

  /** Tries the head, and the next ones while slots keep coming; one drain at a time. */
  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.drain().finally(() => {
      this.pumping = false;
      if (this.again) {
        this.again = false;
        this.pump();
      }
    });
  }

  private async drain(): Promise<void> {
    const { store, clock, group, checks, pollMs } = this.options;
    this.wake?.cancel();
    this.wake = undefined;
    while (this.queue.length > 0) {
      this.again = false;
      const head = this.queue[0] as Waiter;
      const id = this.newHolderId();
      let decision: LimitDecision;
      try {
        decision = await store.acquire(group, id, checks);
      } catch (err) {
        this.fail(head, undefined, toHerdError(err));
        continue;
      }
      if (decision.granted) {
        const hold = new LimitHold({ store, group, id, checks, clock });
        if (head.done)
          void hold.release(); // timed out or left while the store answered
        else this.admit(head, hold);
        continue;
      }
      if (head.done) continue;
      const refusal = pickLongestRefusal(decision.refusals);
      if (refusal.neverFits) {
        this.fail(head, 'full', this.busyError('its limit admits no request at all (check the configured limits)', { ahead: 0 }));
        continue;
      }
      if (this.again) continue; // a slot freed or a better waiter came while the store answered
      const wait = refusal.retryAfterMs;
      if (wait !== undefined) {
        this.lastWindowWaitMs = wait;
        if (clock.now() + wait > head.deadline) {
          // The window frees too late for this request: say so now instead of at its deadline.
          this.fail(head, 'too_late', this.busyError(`its next slot frees in ${(wait / 1000).toFixed(1)} s, later than this request can wait`, { ahead: 0, knownWaitMs: wait }));
          continue;
        }
        this.wake = clock.setTimer(() => this.pump(), wait);
      } else if (store.shared) {
        this.wake = clock.setTimer(() => this.pump(), pollMs);
      }
      // Otherwise a local release pumps again.
      return;
    }
  }

  private admit(waiter: Waiter, hold: LimitHold): void {
    this.remove(waiter);
    waiter.resolve(this.grant(waiter.priority, waiter.enqueuedAt, hold));
  }

  private grant(priority: Priority, enqueuedAt: number, hold: LimitHold): GatePass {
    const { clock } = this.options;
    const grantedAt = clock.now();
    const waitedMs = grantedAt - enqueuedAt;
    this.counts.admitted[priority]++;
    this.counts.waitMsTotal[priority] += waitedMs;
    this.counts.maxWaitMs = Math.max(this.counts.maxWaitMs, waitedMs);
    this.inFlight++;
    const release = () => {
      if (hold.isReleased) return;
      this.inFlight--;
      const held = clock.now() - grantedAt;
      this.meanHoldMs = this.meanHoldMs === undefined ? held : 0.8 * this.meanHoldMs + 0.2 * held;
      const freed = hold.release();
      // A local store frees the slot inside release(); with nobody queued there is nothing to pump.
      if (this.queue.length > 0 || this.options.store.shared)
        void freed.then(
          () => this.pump(),
          () => this.pump(),
        );
      else void freed.catch(() => undefined);
    };
    return { waitedMs, release };
  }

  /** Holder ids only need to be unique within the store: a counter here, a UUID across replicas. */
  private newHolderId(): string {
    return this.options.store.shared ? randomUUID() : `h${this.holders++}`;
  }

  private leave(waiter: Waiter, reason: unknown): void {
    if (waiter.done) return;
    this.remove(waiter);
    waiter.reject(reason);
    this.pump();
  }

  private fail(waiter: Waiter, reason: GateRejection | undefined, error: HerdError): void {
    if (waiter.done) return;
    if (reason) this.counts.rejected[reason]++;
    this.remove(waiter);
    waiter.reject(error);
    // A new head may fit where this one did not (a longer budget).
    if (this.queue.length > 0) this.pump();
  }

  /** Out of the queue for good: admitted, failed or gone. */
  private remove(waiter: Waiter): void {
    waiter.done = true;
    waiter.timer?.cancel();
    waiter.signal.removeEventListener('abort', waiter.onAbort);
    const i = this.queue.indexOf(waiter);
    if (i >= 0) this.queue.splice(i, 1);
  }

  private insertionIndex(waiter: Waiter): number {
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ranksBefore(this.queue[mid] as Waiter, waiter)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private busyError(why: string, at: { ahead: number; knownWaitMs?: number }): HerdError {
    return new HerdError('UNAVAILABLE', `${this.subject} is busy: ${why}.`, { retryAfterSeconds: this.estimateRetrySeconds(at) });
  }

  /**
   * A window says exactly when it frees. A lease only lets us estimate: the waiters ahead plus
   * this one, served `limit` at a time, each holding a slot for the recent average.
   */
  private estimateRetrySeconds(at: { ahead: number; knownWaitMs?: number }): number {
    if (at.knownWaitMs !== undefined) return Math.max(1, Math.ceil(at.knownWaitMs / 1000));
    const lease = this.options.checks.find((c) => c.kind === 'lease');
    const ms = lease && lease.limit > 0 ? ((Math.max(0, at.ahead) + 1) * (this.meanHoldMs ?? 1000)) / lease.limit : (this.lastWindowWaitMs ?? 1000);
    return Math.max(1, Math.ceil(ms / 1000));
  }
}

function ranksBefore(a: Waiter, b: Waiter): boolean {
  return a.order < b.order || (a.order === b.order && a.seq < b.seq);
}
