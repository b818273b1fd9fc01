// Triton's default scheduler: requests wait in one FIFO queue and each model instance executes one
// request at a time. Keeps per-request timings for statistics and can drain for a clean shutdown.
import { HerdError, toHerdError } from '../../core/errors.ts';
import type { Backend, ExecutionMarks, InferenceRequest, InferenceResult } from '../backends/backend.ts';
import type { ModelStats } from '../stats.ts';

interface Pending {
  request: InferenceRequest;
  enqueuedAt: bigint;
  resolve: (result: InferenceResult) => void;
}

export class InstancePool {
  private readonly queue: Pending[] = [];
  private readonly idle: Backend[];
  private inFlight = 0;
  private drainWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly instances: Backend[],
    private readonly stats: ModelStats,
    /** Batch elements a request carries (first dim of a batching model's input, else 1). */
    private readonly batchSizeOf: (request: InferenceRequest) => number,
  ) {
    this.idle = [...instances];
  }

  /** Resolves with exactly one result; never rejects. */
  submit(request: InferenceRequest): Promise<InferenceResult> {
    if (this.closed) {
      return Promise.resolve({ ok: false, error: new HerdError('UNAVAILABLE', `model '${request.modelName}' is unloading`) });
    }
    this.stats.pending += 1;
    return new Promise((resolve) => {
      this.queue.push({ request, enqueuedAt: process.hrtime.bigint(), resolve });
      this.dispatch();
    });
  }

  /** Waits until every accepted request has been answered. */
  drain(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Refuses new work, answers what was accepted, then unloads every instance. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
    await Promise.allSettled(this.instances.map((b) => b.unload()));
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const backend = this.idle.pop() as Backend;
      const job = this.queue.shift() as Pending;
      this.inFlight += 1;
      void this.run(backend, job);
    }
  }

  private async run(backend: Backend, job: Pending): Promise<void> {
    const start = process.hrtime.bigint();
    const marks: ExecutionMarks = {};
    let result: InferenceResult;
    try {
      const results = await backend.execute([job.request], marks);
      result = results[0] ?? { ok: false, error: new HerdError('INTERNAL', `backend returned no response for model '${job.request.modelName}'`) };
    } catch (err) {
      result = { ok: false, error: toHerdError(err) };
    }
    const end = process.hrtime.bigint();
    this.record(job, result, start, end, marks);
    this.inFlight -= 1;
    this.stats.pending -= 1;
    this.idle.push(backend);
    job.resolve(result);
    this.dispatch();
    if (this.queue.length === 0 && this.inFlight === 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  private record(job: Pending, result: InferenceResult, start: bigint, end: bigint, marks: ExecutionMarks): void {
    const now = Date.now();
    const totalNs = Number(end - job.enqueuedAt);
    if (!result.ok) {
      this.stats.recordFailure(totalNs, now);
      return;
    }
    const inputEnd = marks.inputEnd ?? start;
    const inferEnd = marks.inferEnd ?? end;
    const computeInputNs = Number(inputEnd - start);
    const computeInferNs = Number(inferEnd - inputEnd);
    const computeOutputNs = Number(end - inferEnd);
    const batch = this.batchSizeOf(job.request);
    this.stats.recordExecution(batch, computeInputNs, computeInferNs, computeOutputNs);
    this.stats.recordSuccess({ queueNs: Number(start - job.enqueuedAt), computeInputNs, computeInferNs, computeOutputNs, totalNs }, batch, now);
  }
}
