// Durable, cheap request and attempt rows: push() returns a promise that settles once the rows would
// survive the process being killed. With a spool, that is one append to a local file per event-loop turn
// (every request finishing in the turn shares it) and the database gets them in large batches later;
// without one, the database commit itself is the group commit, one transaction per turn.
import type { LedgerEntry } from './ledger-entry.ts';
import type { AttemptRow, LedgerStats, RequestRecord } from './ledger.ts';
import type { LedgerSpool } from './ledger-spool.ts';

export type { LedgerEntry } from './ledger-entry.ts';

export interface LedgerWriteQueueOptions {
  /** Writes a batch in one transaction; rows already present must be ignored (a retried batch, a replayed spool). */
  write(entries: readonly LedgerEntry[]): Promise<void> | void;
  /** With a spool: the database gets the rows at most this long after push(). Without: the wait after a failed write. */
  flushIntervalMs: number;
  /** Rows per transaction at most; with a spool, this many waiting rows start a write at once. */
  maxBatchRows: number;
  /** Bound on memory while the database fails (default 100 000 rows). */
  maxQueuedRows?: number;
  spool?: LedgerSpool | undefined;
  onError?: (error: unknown) => void;
}

interface QueuedEntry extends LedgerEntry {
  resolve: () => void;
  reject: (error: unknown) => void;
  /** The caller was told (resolved or rejected) already. */
  told: boolean;
  /** The spool file holding it, once appended. */
  segment: string | undefined;
  inDatabase: boolean;
  /** Date.now() at push(): how far the database is behind. */
  queuedAt: number;
}

export class LedgerWriteQueue {
  private queue: QueuedEntry[] = [];
  private unspooled: QueuedEntry[] = [];
  private queuedRows = 0;
  /** The batch being written now (out of `queue` until it commits or fails). */
  private inFlight: QueuedEntry[] = [];
  private inFlightRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  private spoolTurn: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private failing = false;
  private closed = false;
  private readonly counters = { written: 0, flushes: 0, failedFlushes: 0, dropped: 0 };
  /** Spool files holding a request's attempt intents: released once its rows are in the database. */
  private readonly intents = new Map<string, string[]>();

  private readonly options: LedgerWriteQueueOptions;

  constructor(options: LedgerWriteQueueOptions) {
    this.options = { ...options };
  }

  /** Spools from now on (the ledger opens its spool after its database). */
  useSpool(spool: LedgerSpool): void {
    this.options.spool = spool;
  }

  /** An attempt intent of `requestId` went to spool file `segment` (see LedgerSpool.intend). */
  intended(requestId: string, segment: string): void {
    const held = this.intents.get(requestId);
    if (held) held.push(segment);
    else this.intents.set(requestId, [segment]);
  }

  /** Resolves once the rows are durable (spooled, or committed); rejects if that failed (they stay queued for the database). */
  push(request: RequestRecord, attempts: readonly AttemptRow[]): Promise<void> {
    let resolve!: () => void, reject!: (error: unknown) => void;
    const durable = new Promise<void>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    // Most callers do not wait (tests, the CLI): a rejection must not go unhandled.
    durable.catch(() => undefined);
    const entry: QueuedEntry = { request, attempts, resolve, reject, told: false, segment: undefined, inDatabase: false, queuedAt: Date.now() };
    this.queue.push(entry);
    this.queuedRows += 1 + attempts.length;
    this.dropOverflow();
    if (this.options.spool) {
      this.unspooled.push(entry);
      this.spoolTurn ??= setImmediate(() => this.writeSpool());
      if (this.queuedRows >= this.options.maxBatchRows) this.writeSoon();
      else this.schedule(this.options.flushIntervalMs);
    } else if (this.timer === undefined) {
      this.writeSoon();
    }
    return durable;
  }

  /** Resolves once everything queued before the call is in the database; rejects if a write fails. */
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
    const oldest = this.inFlight[0] ?? this.queue[0];
    return {
      queued: this.queuedRows,
      ...this.counters,
      behindRows: this.queuedRows + this.inFlightRows,
      behindMs: oldest === undefined ? 0 : Math.max(0, Date.now() - oldest.queuedAt),
    };
  }

  /** Stops the timers and writes what is left. */
  async close(): Promise<void> {
    this.closed = true;
    this.writeSpool();
    await this.flush();
  }

  /** One append for every entry pushed since the last: their answers may now be sent. */
  private writeSpool(): void {
    this.spoolTurn = undefined;
    const spool = this.options.spool;
    const entries = this.unspooled.filter((e) => !e.inDatabase);
    for (const e of this.unspooled) if (e.inDatabase) this.tell(e);
    this.unspooled = [];
    if (!spool || entries.length === 0) return;
    try {
      const segment = spool.append(entries);
      for (const e of entries) {
        e.segment = segment;
        this.tell(e);
      }
    } catch (err) {
      for (const e of entries) this.tell(e, err);
      this.options.onError?.(err);
      // Not durable locally: get them into the database as soon as it can take them.
      if (!this.failing) this.writeSoon();
    }
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
    this.inFlight = batch;
    this.inFlightRows = rows;
    // What is appended from now on goes to a new file, so the current one can go once its rows are written.
    this.options.spool?.seal();
    try {
      await this.options.write(batch);
    } catch (err) {
      this.inFlight = [];
      this.inFlightRows = 0;
      // Back to the front, in order: the next try writes them again (the write ignores duplicates).
      this.queue.unshift(...batch);
      this.queuedRows += rows;
      this.counters.failedFlushes++;
      this.failing = true;
      // Without a spool the commit was the promise; with one, the spool already kept it.
      if (!this.options.spool) for (const entry of batch) this.tell(entry, err);
      this.dropOverflow();
      if (!this.closed) this.schedule(this.options.flushIntervalMs);
      throw err;
    }
    this.inFlight = [];
    this.inFlightRows = 0;
    this.failing = false;
    this.counters.written += rows;
    this.counters.flushes++;
    const perSegment = new Map<string, number>();
    for (const entry of batch) {
      entry.inDatabase = true;
      if (entry.segment !== undefined) perSegment.set(entry.segment, (perSegment.get(entry.segment) ?? 0) + 1);
      const intents = this.intents.size > 0 ? this.intents.get(entry.request.requestId) : undefined;
      if (intents) {
        // Its final rows are in the database: its intents are superseded.
        this.intents.delete(entry.request.requestId);
        for (const s of intents) perSegment.set(s, (perSegment.get(s) ?? 0) + 1);
      }
      // Spooled entries were told at their append; the rest now.
      if (entry.segment !== undefined || !this.options.spool) this.tell(entry);
    }
    for (const [segment, count] of perSegment) this.options.spool?.written(segment, count);
  }

  private tell(entry: QueuedEntry, error?: unknown): void {
    if (entry.told) return;
    entry.told = true;
    if (error === undefined) entry.resolve();
    else entry.reject(error);
  }

  private background(): void {
    this.soon = undefined;
    this.timer = undefined;
    if (this.running || this.queue.length === 0) return;
    this.runBatch().catch((err: unknown) => this.options.onError?.(err));
  }

  /** The one writer: batches never overlap, so they commit in the order they were pushed. */
  private runBatch(): Promise<void> {
    const batch = this.writeOneBatch();
    this.running = batch;
    const after = () => {
      if (this.running === batch) this.running = undefined;
      if (this.queue.length === 0 || this.timer !== undefined || this.closed) return;
      // Without a spool, what arrived during this write is the next group; with one, it waits for its interval.
      if (!this.options.spool || this.queuedRows >= this.options.maxBatchRows) this.writeSoon();
      else this.schedule(this.options.flushIntervalMs);
    };
    batch.then(after, after);
    return batch;
  }

  private writeSoon(): void {
    if (this.running || this.timer !== undefined) return;
    this.soon ??= setImmediate(() => this.background());
  }

  private schedule(ms: number): void {
    this.timer ??= setTimeout(() => this.background(), ms);
    // A pending write must not keep a finished process (a CLI, a test) alive; close() flushes.
    this.timer.unref();
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
      const dropped = this.queue.shift() as QueuedEntry;
      const rows = 1 + dropped.attempts.length;
      this.queuedRows -= rows;
      this.counters.dropped += rows;
      this.tell(dropped, new Error('ledger queue full: rows dropped'));
    }
  }
}
