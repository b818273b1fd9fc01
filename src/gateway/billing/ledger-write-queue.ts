// Keeps request and attempt rows off the request path: record() appends to memory; rows are written one
// transaction per batch, every flushIntervalMs or once maxBatchRows wait; failed batches are retried.
import type { AttemptRow, LedgerStats, RequestRecord } from './ledger.ts';

export interface LedgerEntry {
  request: RequestRecord;
  attempts: readonly AttemptRow[];
}

export interface LedgerWriteQueueOptions {
  /** Writes a batch in one transaction; rows already present must be ignored (a retried batch). */
  write(entries: readonly LedgerEntry[]): Promise<void>;
  flushIntervalMs: number;
  maxBatchRows: number;
  /** Bound on memory while the database fails (default 100 000 rows). */
  maxQueuedRows?: number;
  onError?: (error: unknown) => void;
}

export class LedgerWriteQueue {
  private queue: LedgerEntry[] = [];
  private queuedRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly counters = { written: 0, flushes: 0, failedFlushes: 0, dropped: 0 };

  constructor(private readonly options: LedgerWriteQueueOptions) {}

  push(request: RequestRecord, attempts: readonly AttemptRow[]): void {
    this.queue.push({ request, attempts });
    this.queuedRows += 1 + attempts.length;
    this.dropOverflow();
    if (this.queuedRows >= this.options.maxBatchRows) this.flushSoon();
    else if (this.timer === undefined && !this.closed) this.schedule();
  }

  /** Resolves once everything queued before the call is written; rejects if a write fails. */
  async flush(): Promise<void> {
    this.cancelTimers();
    while (this.running) await this.running.catch(() => undefined);
    while (this.queue.length > 0) {
      this.running = this.writeOneBatch();
      try {
        await this.running;
      } finally {
        this.running = undefined;
      }
    }
  }

  stats(): LedgerStats {
    return { queued: this.queuedRows, ...this.counters };
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async writeOneBatch(): Promise<void> {
    const batch: LedgerEntry[] = [];
    let rows = 0;
    while (this.queue.length > 0 && (rows === 0 || rows + 1 + (this.queue[0] as LedgerEntry).attempts.length <= this.options.maxBatchRows)) {
      const entry = this.queue.shift() as LedgerEntry;
      batch.push(entry);
      rows += 1 + entry.attempts.length;
    }
    this.queuedRows -= rows;
    try {
      await this.options.write(batch);
      this.counters.written += rows;
      this.counters.flushes++;
    } catch (err) {
      // Back to the front, in order: the next flush retries them (the write ignores duplicates).
      this.queue.unshift(...batch);
      this.queuedRows += rows;
      this.counters.failedFlushes++;
      this.dropOverflow();
      if (!this.closed) this.schedule();
      throw err;
    }
  }

  private background(): void {
    this.timer = undefined;
    this.soon = undefined;
    if (this.running || this.queue.length === 0) return;
    void this.flush().catch((err) => this.options.onError?.(err));
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => this.background(), this.options.flushIntervalMs);
    // A pending flush must not keep a finished process (a CLI, a test) alive; close() flushes.
    this.timer.unref();
  }

  private flushSoon(): void {
    this.soon ??= setImmediate(() => this.background());
  }

  private cancelTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.soon) clearImmediate(this.soon);
    this.timer = undefined;
    this.soon = undefined;
  }

  private dropOverflow(): void {
    const bound = this.options.maxQueuedRows ?? 100_000;
    while (this.queuedRows > bound && this.queue.length > 1) {
      const dropped = this.queue.shift() as LedgerEntry;
      const rows = 1 + dropped.attempts.length;
      this.queuedRows -= rows;
      this.counters.dropped += rows;
    }
  }
}
