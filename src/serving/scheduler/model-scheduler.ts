// Runs one model version's requests on its instances. Without dynamic batching each instance takes one
// request at a time, FIFO (Triton's default scheduler); with it, requests wait in priority queues and
// leave as batches (Triton's dynamic batcher). Every accepted request gets exactly one answer,
// including during shutdown, which first drains the queue.
import { systemClock, type Clock, type Timer } from '../../core/clock.ts';
import type { AbortLink } from '../../core/abort-link.ts';
import { cancelled, HerdError, toHerdError } from '../../core/errors.ts';
import type { Backend, ComputeDurations, ExecutionMarks, InferenceRequest, InferenceResult } from '../backends/backend.ts';
import type { ModelQueuePolicy } from '../model-config/model-config.ts';
import type { FailureReason, ModelStats } from '../stats.ts';
import { formDynamicBatch, type BatchPolicy } from './form-dynamic-batch.ts';
import type { RateLimiter, ResourceNeed } from './rate-limiter.ts';
import { RequestQueue, type QueuedRequest } from './request-queue.ts';
import { endComputeTraces, startComputeTraces } from './trace-execution.ts';

export interface SchedulerInstance {
  name: string;
  backend: Backend;
  /** Resources held while executing, when the rate limiter is on. */
  resources: readonly ResourceNeed[];
  priority: number;
}

export interface DynamicBatchingOptions {
  policy: BatchPolicy;
  preserveOrdering: boolean;
  /** 0: one level, `priority` request parameters are ignored (as in Triton). */
  priorityLevels: number;
  /** 1-based, as in the config. */
  defaultPriorityLevel: number;
  /** Policy of each level, index 0 = level 1. */
  queuePolicies: readonly ModelQueuePolicy[];
}

export interface ModelSchedulerOptions {
  modelName: string;
  instances: readonly SchedulerInstance[];
  /** Loaded but never given requests (instance_group passive: true); unloaded with the others. */
  passiveInstances?: readonly SchedulerInstance[];
  stats: ModelStats;
  /** Batch elements of a request (first dim of a batching model's inputs, else 1). */
  batchSizeOf: (request: InferenceRequest) => number;
  /** Requests with different keys are not batched together. */
  shapeKeyOf: (request: InferenceRequest) => string;
  batching?: DynamicBatchingOptions;
  rateLimiter?: RateLimiter;
  clock?: Clock;
}

const MS_TO_NS = 1e6;
/** What a decoupled request's submit() resolves with once executeDecoupled returned: its responses went through its sender. */
const DECOUPLED_EXECUTED: InferenceResult = Object.freeze({ ok: true, outputs: [] });

/** What the repository and the inference path need of any model's scheduler (batching or ensemble). */
export interface Scheduler {
  /** Resolves with exactly one result; never rejects. */
  submit(request: InferenceRequest): Promise<InferenceResult>;
  /** The refusal a new request would get right now, recorded as a failure; undefined when it may be accepted. */
  refuseIfFull(): HerdError | undefined;
  /** Refuses new work, answers what was accepted, then unloads. */
  close(): Promise<void>;
}

export class ModelScheduler implements Scheduler {
  private readonly queue: RequestQueue;
  private readonly idle: SchedulerInstance[];
  private readonly clock: Clock;
  private inFlight = 0;
  private seq = 0;
  private nextToDeliver = 0;
  private readonly finished = new Map<number, () => void>();
  private timer: Timer | undefined;
  private timerAt = Infinity;
  private closed = false;
  private drainWaiters: (() => void)[] = [];
  private queueFull: HerdError | undefined;

  constructor(private readonly options: ModelSchedulerOptions) {
    this.clock = options.clock ?? systemClock;
    this.queue = new RequestQueue(options.batching?.queuePolicies ?? []);
    this.idle = [...options.instances].reverse();
  }

  /**
   * Resolves with exactly one result; never rejects. A decoupled request (one with a responseSender) gets
   * its responses through the sender; its result here says only whether it ran.
   */
  submit(request: InferenceRequest): Promise<InferenceResult> {
    const now = this.clock.now();
    if (this.closed) return Promise.resolve(this.fail(new HerdError('UNAVAILABLE', `model '${this.options.modelName}' is unloading`), 0, 'REJECTED'));
    let level: number;
    try {
      level = this.levelOf(request);
    } catch (err) {
      return Promise.resolve(this.fail(toHerdError(err), 0, 'REJECTED'));
    }
    const signal = request.signal;
    if (signal?.aborted) {
      this.options.stats.cancelled.queued += 1;
      return Promise.resolve(this.fail(cancelled(), 0, 'CANCELED'));
    }
    const policy = this.queue.policyOf(level);
    const timeoutUs = this.timeoutOf(request, policy);
    request.trace?.mark('QUEUE_START');
    return new Promise((resolve) => {
      const item: QueuedRequest = {
        request,
        batchSize: this.options.batchSizeOf(request),
        shapeKey: this.options.batching ? this.options.shapeKeyOf(request) : '',
        enqueuedAt: now,
        deadline: timeoutUs > 0 ? now + timeoutUs / 1000 : Infinity,
        seq: -1,
        finish: resolve,
        running: false,
        unwatch: undefined,
      };
      if (!this.queue.push(item, level)) {
        resolve(this.fail(this.queueFullError(), 0, 'REJECTED'));
        return;
      }
      item.seq = this.seq++;
      this.options.stats.pending += 1;
      if (signal !== undefined) this.watch(item, signal);
      this.schedule();
    });
  }

  /**
   * A queued request whose client goes away leaves the queue at once, answered CANCELLED (Triton's
   * CANCELED failure); one already running is only counted: its backend reads the same signal.
   */
  private watch(item: QueuedRequest, signal: AbortLink): void {
    const onAbort = () => {
      if (item.running) {
        this.options.stats.cancelled.running += 1;
        return;
      }
      if (!this.queue.remove(item)) return;
      const stats = this.options.stats;
      stats.pending -= 1;
      stats.cancelled.queued += 1;
      item.unwatch = undefined;
      this.deliver(item, this.fail(cancelled(), (this.clock.now() - item.enqueuedAt) * MS_TO_NS, 'CANCELED'));
      // The request may have been what a batch was waiting on, or the last thing a drain waited for.
      this.schedule();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    item.unwatch = () => signal.removeEventListener('abort', onAbort);
  }

  /**
   * The refusal a new request would get because every queue level is full, recorded as that request's
   * failure; undefined when one might be accepted. Lets a transport answer 503 before it decodes the body:
   * under overload, refusals are most of the traffic and decoding them starves the accepted requests.
   */
  refuseIfFull(): HerdError | undefined {
    if (this.closed || !this.queue.isEveryLevelFull()) return undefined;
    const error = this.queueFullError();
    this.fail(error, 0, 'REJECTED');
    return error;
  }

  /** Waits until every accepted request has been answered. */
  drain(): Promise<void> {
    if (this.queue.size === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Refuses new work, answers what was accepted (batch delays are cut short), then unloads every instance. */
  async close(): Promise<void> {
    this.closed = true;
    this.schedule();
    await this.drain();
    this.timer?.cancel();
    await Promise.allSettled([...this.options.instances, ...(this.options.passiveInstances ?? [])].map((i) => i.backend.unload()));
  }

  private levelOf(request: InferenceRequest): number {
    const batching = this.options.batching;
    if (!batching || batching.priorityLevels === 0) return 0;
    const priority = request.parameters['priority'];
    if (priority === undefined || priority === 0) return batching.defaultPriorityLevel - 1;
    if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > batching.priorityLevels) {
      throw new HerdError(
        'INVALID_ARG',
        `priority ${JSON.stringify(priority)} is not valid for model '${this.options.modelName}': use 1 (highest) to ${batching.priorityLevels}, or 0 for the default level ${batching.defaultPriorityLevel}`,
      );
    }
    return priority - 1;
  }

  /** The request's `timeout` (µs) applies only where the policy allows overriding, as in Triton. */
  private timeoutOf(request: InferenceRequest, policy: ModelQueuePolicy): number {
    const asked = request.parameters['timeout'];
    if (policy.allow_timeout_override && typeof asked === 'number' && asked > 0) return asked;
    return policy.default_timeout_microseconds;
  }

  private schedule(): void {
    const now = this.clock.now();
    for (const expired of this.queue.expire(now)) {
      this.options.stats.pending -= 1;
      this.deliver(expired, this.fail(new HerdError('UNAVAILABLE', 'Request timeout expired'), (now - expired.enqueuedAt) * MS_TO_NS, 'REJECTED'));
    }
    let waitUntil = Infinity;
    while (this.idle.length > 0 && this.queue.size > 0) {
      let count = 1;
      const batching = this.options.batching;
      if (batching) {
        const decision = formDynamicBatch((i) => this.queue.peek(i), now, this.closed ? { ...batching.policy, maxQueueDelayMs: 0 } : batching.policy);
        if ('waitMs' in decision) {
          waitUntil = now + decision.waitMs;
          break;
        }
        count = decision.send;
      }
      const items = this.queue.take(count);
      this.options.stats.pending -= items.length;
      for (const item of items) item.running = true;
      const instance = this.idle.pop() as SchedulerInstance;
      this.inFlight += 1;
      void this.run(instance, items);
    }
    this.armTimer(Math.min(waitUntil, this.queue.nextDeadline()));
    this.checkDrained();
  }

  private armTimer(at: number): void {
    if (at === this.timerAt) return;
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = at;
    if (at === Infinity) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.schedule();
    }, at - this.clock.now());
  }

  /**
   * Model warmup (Triton's TritonModelInstance::WarmUp): runs `requests` as one execution on every
   * instance in turn, before the model serves, recorded in the statistics as Triton records them.
   * Resolves with the first instance's failures, or an empty list.
   */
  async warmUp(requests: readonly InferenceRequest[]): Promise<HerdError[]> {
    for (const instance of this.options.instances) {
      const now = this.clock.now();
      const items = requests.map(
        (request): QueuedRequest => ({
          request,
          batchSize: this.options.batchSizeOf(request),
          shapeKey: '',
          enqueuedAt: now,
          deadline: Infinity,
          seq: -1,
          finish: () => undefined,
          running: true,
          unwatch: undefined,
        }),
      );
      const results = await this.execute(instance, items);
      const errors = results.flatMap((r) => (r.ok ? [] : [r.error]));
      if (errors.length > 0) return errors;
    }
    return [];
  }

  private async run(instance: SchedulerInstance, items: QueuedRequest[]): Promise<void> {
    const results = await this.execute(instance, items);
    this.inFlight -= 1;
    this.idle.push(instance);
    items.forEach((item, i) => {
      this.deliver(item, results[i] as InferenceResult);
    });
    this.schedule();
  }

  private async execute(instance: SchedulerInstance, items: QueuedRequest[]): Promise<InferenceResult[]> {
    const release =
      this.options.rateLimiter && instance.resources.length > 0 ? await this.options.rateLimiter.acquire(instance.resources, instance.priority, instance.name) : undefined;
    const requests = items.map((i) => i.request);
    // Before the backend runs: a traced request's compute span is the parent of what the backend calls (llm, BLS).
    const traceStart = startComputeTraces(requests, items);
    const start = this.clock.now();
    const hrStart = process.hrtime.bigint();
    const marks: ExecutionMarks = {};
    let results: InferenceResult[];
    const decoupled = requests[0]?.responseSender !== undefined;
    try {
      if (decoupled && instance.backend.executeDecoupled) {
        await instance.backend.executeDecoupled(requests, marks);
        results = requests.map(() => DECOUPLED_EXECUTED);
      } else {
        results = await instance.backend.execute(requests, marks);
        if (results.length !== items.length)
          throw new HerdError('INTERNAL', `backend of model '${this.options.modelName}' returned ${results.length} responses for ${items.length} requests`);
      }
    } catch (err) {
      const error = toHerdError(err);
      results = items.map(() => ({ ok: false, error }));
    }
    // A decoupled request answers through its sender: a backend without executeDecoupled (or a failed
    // batch) sends its one result as the final response, unless the request is already complete.
    if (decoupled) {
      requests.forEach((request, i) => {
        const result = results[i] as InferenceResult;
        if (result !== DECOUPLED_EXECUTED && request.responseSender && !request.responseSender.closed) request.responseSender.send(result, true);
      });
    }
    const hrEnd = process.hrtime.bigint();
    const end = this.clock.now();
    if (traceStart >= 0) endComputeTraces(requests, traceStart, hrStart, marks, hrEnd);
    release?.();
    const compute = this.record(items, results, { start, end, hrStart, hrEnd, marks });
    return results.map((result) => (result.ok ? { ...result, compute } : result));
  }

  private record(items: QueuedRequest[], results: InferenceResult[], t: { start: number; end: number; hrStart: bigint; hrEnd: bigint; marks: ExecutionMarks }): ComputeDurations {
    const stats = this.options.stats;
    const inputEnd = t.marks.inputEnd ?? t.hrStart;
    const inferEnd = t.marks.inferEnd ?? t.hrEnd;
    const computeInputNs = Number(inputEnd - t.hrStart);
    const computeInferNs = Number(inferEnd - inputEnd);
    const computeOutputNs = Number(t.hrEnd - inferEnd);
    const batch = items.reduce((sum, i) => sum + i.batchSize, 0);
    stats.recordExecution(batch, computeInputNs, computeInferNs, computeOutputNs);
    const wall = Date.now();
    items.forEach((item, i) => {
      const totalNs = (t.end - item.enqueuedAt) * MS_TO_NS;
      if (results[i]?.ok) {
        stats.recordSuccess({ queueNs: (t.start - item.enqueuedAt) * MS_TO_NS, computeInputNs, computeInferNs, computeOutputNs, totalNs }, item.batchSize, wall);
      } else {
        stats.recordFailure(totalNs, wall, 'BACKEND');
      }
    });
    return { inputNs: computeInputNs, inferNs: computeInferNs, outputNs: computeOutputNs };
  }

  /**
   * One error for every refusal: under overload most requests are refused, and building an Error (its stack
   * trace) for each costs the event loop that accepted requests wait on (docs/decisions/shared-queue-full-error.md).
   */
  private queueFullError(): HerdError {
    this.queueFull ??= new HerdError('UNAVAILABLE', `Exceeds maximum queue size for model '${this.options.modelName}'`);
    return this.queueFull;
  }

  private fail(error: HerdError, totalNs: number, reason: FailureReason): InferenceResult {
    this.options.stats.recordFailure(totalNs, Date.now(), reason);
    return { ok: false, error };
  }

  /** Answers in arrival order when preserve_ordering is set, otherwise at once. */
  private deliver(item: QueuedRequest, result: InferenceResult): void {
    item.unwatch?.();
    if (!this.options.batching?.preserveOrdering) {
      item.finish(result);
      return;
    }
    this.finished.set(item.seq, () => item.finish(result));
    for (let next = this.finished.get(this.nextToDeliver); next; next = this.finished.get(this.nextToDeliver)) {
      this.finished.delete(this.nextToDeliver);
      this.nextToDeliver += 1;
      next();
    }
  }

  private checkDrained(): void {
    if (this.queue.size !== 0 || this.inFlight !== 0 || this.drainWaiters.length === 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
