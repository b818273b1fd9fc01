// Group commit for request and attempt rows: push() queues a request's rows and returns a promise that
// settles once they are committed; everything pushed in one turn of the event loop (and, for an async
// database, everything pushed while the previous commit was in flight) shares one transaction.
import type { AttemptRow, LedgerStats, RequestRecord } from './ledger.ts';

export interface LedgerEntry {
  request: RequestRecord;
  attempts: readonly AttemptRow[];
}

export interface LedgerWriteQueueOptions {
  /** Writes a batch in one transaction; rows already present must be ignored (a retried batch). */
  write(entries: readonly LedgerEntry[]): Promise<void> | void;
  /** After a failed write, the rows wait this long before the next try. */
  retryIntervalMs: number;
  /** Rows per transaction at most. */
  maxBatchRows: number;
  /** Bound on memory while the database fails (default 100 000 rows). */
  maxQueuedRows?: number;
  onError?: (error: unknown) => void;
}

interface QueuedEntry extends LedgerEntry {
  resolve: () => void;
  reject: (error: unknown) => void;
  /** Rejected once already (the caller was told): a later successful write cannot tell it again. */
  told: boolean;
}

export class LedgerWriteQueue {
  private queue: QueuedEntry[] = [];
  private queuedRows = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly counters = { written: 0, flushes: 0, failedFlushes: 0, dropped: 0 };

  constructor(private readonly options: LedgerWriteQueueOptions) {}

  /** Resolves once the rows are committed; rejects if the first commit they were part of failed (they stay queued and are retried). */
  push(request: RequestRecord, attempts: readonly AttemptRow[]): Promise<void> {
    let resolve!: () => void, reject!: (error: unknown) => void;
    const committed = new Promise<void>((ok, fail) => { resolve = ok; reject = fail; });
    // Most callers do not wait for the commit (tests, the CLI): their rejection must not go unhandled.
    committed.catch(() => undefined);
    this.queue.push({ request, attempts, resolve, reject, told: false });
    this.queuedRows += 1 + attempts.length;
    this.dropOverflow();
    if (this.retryTimer === undefined && this.running === undefined) this.soon ??= setImmediate(() => this.background());
    return committed;
  }

  /** Resolves once everything queued before the call is written; rejects if a write fails. */
  async flush(): Promise<void> {
    this.cancelTimers();
    for (;;) {
      if (this.running) {
        await this.running.catch(() => undefined);
        continue;
      }
      if (this.queue.length === 0) return;
      await this.runBatch();
    }
  }

  stats(): LedgerStats {
    return { queued: this.queuedRows, ...this.counters };
  }

  /** Stops the timers and writes what is left. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async writeOneBatch(): Promise<void> {
    const batch: QueuedEntry[] = [];
    let rows = 0;
    while (this.queue.length > 0 && (rows === 0 || rows + 1 + (this.queue[0] as QueuedEntry).attempts.length <= this.options.maxBatchRows)) {
      const entry = this.queue.shift() as QueuedEntry;
      batch.push(entry);
      rows += 1 + entry.attempts.length;
    }
    this.queuedRows -= rows;
    try {
      await this.options.write(batch);
    } catch (err) {
      // Back to the front, in order: the next flush retries them (the write ignores duplicates).
      this.queue.unshift(...batch);
      this.queuedRows += rows;
      this.counters.failedFlushes++;
      for (const entry of batch) {
        if (!entry.told) entry.reject(err);
        entry.told = true;
      }
      this.dropOverflow();
      if (!this.closed) this.scheduleRetry();
      throw err;
    }
    this.counters.written += rows;
    this.counters.flushes++;
    for (const entry of batch) entry.resolve();
  }

  private background(): void {
    this.soon = undefined;
    this.retryTimer = undefined;
    if (this.running || this.queue.length === 0) return;
    this.runBatch().catch((err: unknown) => this.options.onError?.(err));
  }

  /** The one writer: batches never overlap, so they commit in the order they were pushed. */
  private runBatch(): Promise<void> {
    const batch = this.writeOneBatch();
    this.running = batch;
    const after = () => {
      if (this.running === batch) this.running = undefined;
      // What arrived during this write forms the next batch.
      if (this.queue.length > 0 && this.retryTimer === undefined && !this.closed) this.soon ??= setImmediate(() => this.background());
    };
    batch.then(after, after);
    return batch;
  }

  private scheduleRetry(): void {
    this.retryTimer ??= setTimeout(() => this.background(), this.options.retryIntervalMs);
    // A pending retry must not keep a finished process (a CLI, a test) alive; close() flushes.
    this.retryTimer.unref();
  }

  private cancelTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.soon) clearImmediate(this.soon);
    this.retryTimer = undefined;
    this.soon = undefined;
  }

  private dropOverflow(): void {
    const bound = this.options.maxQueuedRows ?? 100_000;
    while (this.queuedRows > bound && this.queue.length > 1) {
      const dropped = this.queue.shift() as QueuedEntry;
      const rows = 1 + dropped.attempts.length;
      this.queuedRows -= rows;
      this.counters.dropped += rows;
      if (!dropped.told) dropped.reject(new Error('ledger queue full: rows dropped'));
      dropped.told = true;
    }
  }
}
