// The bounded queue between ended spans and the collector: add() never waits and never grows past
// maxQueueSize (what does not fit is dropped and counted); one batch at a time goes out, retried with
// backoff; shutdown() sends what is queued within its deadline.
import type { RecordedSpan } from './recorded-span.ts';
import type { SendResult } from './otlp-http-sender.ts';

export type DropReason = 'queue_full' | 'export_failed' | 'shutdown';

export interface ExportQueueOptions {
  encode: (spans: readonly RecordedSpan[]) => Uint8Array;
  send: (body: Uint8Array, signal: AbortSignal) => Promise<SendResult>;
  maxQueueSize: number;
  maxBatchSize: number;
  scheduleDelayMs: number;
  retry: RetryPolicy;
  onDropped: (reason: DropReason, count: number) => void;
  onExported: (count: number) => void;
  log: (line: string) => void;
}

export interface RetryPolicy {
  /** Sends per batch, the first included. */
  attempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export class SpanExportQueue {
  private queue: RecordedSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly stop = new AbortController();
  private lastFailureLog = 0;

  constructor(private readonly options: ExportQueueOptions) {}

  /** Spans waiting (not counting a batch being sent). */
  get size(): number {
    return this.queue.length;
  }

  add(span: RecordedSpan): void {
    if (this.closed || this.queue.length >= this.options.maxQueueSize) {
      this.options.onDropped(this.closed ? 'shutdown' : 'queue_full', 1);
      return;
    }
    this.queue.push(span);
    if (this.running !== undefined) return;
    if (this.queue.length >= this.options.maxBatchSize) this.start(0);
    else if (this.timer === undefined) this.start(this.options.scheduleDelayMs);
  }

  /** Sends everything queued now; resolves when the queue is empty or its batches failed. */
  async flush(): Promise<void> {
    while ((this.running !== undefined || this.queue.length > 0) && !this.stop.signal.aborted) {
      if (this.running === undefined) this.run();
      await this.running;
    }
  }

  /** Refuses new spans, sends what is queued, and after `deadlineMs` gives up: the rest is dropped as `shutdown`. */
  async shutdown(deadlineMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clearTimer();
    let deadline: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      deadline = setTimeout(resolve, deadlineMs);
    });
    await Promise.race([this.flush(), expired]);
    clearTimeout(deadline);
    this.stop.abort();
    await this.running;
    if (this.queue.length > 0) this.options.onDropped('shutdown', this.queue.splice(0).length);
  }

  private start(delayMs: number): void {
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, delayMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    if (this.running !== undefined || this.stop.signal.aborted) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.queue.length > 0 && !this.stop.signal.aborted) this.start(this.queue.length >= this.options.maxBatchSize ? 0 : this.options.scheduleDelayMs);
    });
  }

  /** Full batches go out back to back; a partial batch only when the timer or a flush asked for it (this run). */
  private async drain(): Promise<void> {
    do {
      // The whole queue when it fits in one batch: no elements moved.
      const fits = this.queue.length <= this.options.maxBatchSize;
      const batch = fits ? this.queue : this.queue.splice(0, this.options.maxBatchSize);
      if (fits) this.queue = [];
      await this.exportBatch(batch);
    } while (this.queue.length >= this.options.maxBatchSize && !this.stop.signal.aborted);
  }

  private async exportBatch(batch: RecordedSpan[]): Promise<void> {
    const { retry } = this.options;
    let body: Uint8Array;
    try {
      body = this.options.encode(batch);
    } catch (err) {
      this.fail(batch.length, `encoding failed: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    let backoff = retry.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      const result = await this.options.send(body, this.stop.signal);
      if (result.ok) {
        this.options.onExported(batch.length);
        return;
      }
      // Cut short by shutdown's deadline: counted with the spans still queued then.
      if (this.stop.signal.aborted) {
        this.options.onDropped('shutdown', batch.length);
        return;
      }
      if (!result.retryable || attempt >= retry.attempts) {
        this.fail(batch.length, result.reason);
        return;
      }
      // Full jitter below the capped exponential step; a collector's Retry-After wins when it asks for longer.
      const wait = Math.max(result.retryAfterMs ?? 0, Math.random() * Math.min(backoff, retry.maxBackoffMs));
      backoff *= 2;
      if (!(await this.sleep(Math.min(wait, retry.maxBackoffMs)))) {
        this.options.onDropped('shutdown', batch.length);
        return;
      }
    }
  }

  private fail(count: number, reason: string): void {
    this.options.onDropped('export_failed', count);
    // One line a minute at most: a collector that is down must not flood the log.
    const now = Date.now();
    if (now - this.lastFailureLog >= 60_000) {
      this.lastFailureLog = now;
      this.options.log(`tracing: ${count} spans not exported (${reason}); later failures are counted in herd_tracing_spans_dropped_total`);
    }
  }

  /** Resolves true after `ms`, false at once when the queue is shutting down. */
  private sleep(ms: number): Promise<boolean> {
    const signal = this.stop.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      timer.unref();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
