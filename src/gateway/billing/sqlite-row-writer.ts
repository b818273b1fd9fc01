// The SQLite ledger's request and attempt rows, written by a thread of their own with its own connection to the
// ledger file. In the event loop a batch of 500 rows held it ~5 ms: ~16 µs of each request's main-thread CPU in
// bench/gateway (c=16), which the loop now spends serving requests.
import { Worker } from 'node:worker_threads';
import { HerdError } from '../../core/errors.ts';
import type { DbValue } from './ledger-rows.ts';

export interface RowWriterConfig {
  /** The ledger file, absolute; its schema is already migrated. */
  path: string;
  synchronous: 'NORMAL' | 'FULL';
}

/** Rows in REQUEST_COLUMNS / ATTEMPT_COLUMNS order, written in one transaction. */
export interface RowBatch {
  id: number;
  requests: DbValue[][];
  attempts: DbValue[][];
}

export interface RowWriterReply {
  id: number;
  /** Absent when the batch was committed. */
  error?: string;
}

const BOOTSTRAP_URL = new URL('./sqlite-row-writer-bootstrap.mjs', import.meta.url);

interface Pending {
  resolve(): void;
  reject(err: Error): void;
}

export class SqliteRowWriter {
  private readonly config: RowWriterConfig;
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(config: RowWriterConfig) {
    this.config = config;
  }

  /** Resolves once the rows are committed (rows already present are kept); rejects with UNAVAILABLE naming the file. */
  write(requests: DbValue[][], attempts: DbValue[][]): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    // Idle, the thread must not keep a finished process alive; while a batch is out, it must.
    if (this.pending.size === 0) worker.ref();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const batch: RowBatch = { id, requests, attempts };
      worker.postMessage(batch);
    });
  }

  /** Ends the thread; the ledger's queue has flushed by then, so no batch is out. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** Started at the first write: a ledger opened only to read (reports, the CLI) starts no thread. */
  private start(): Worker {
    const worker = new Worker(BOOTSTRAP_URL, { workerData: this.config, execArgv: [], name: 'herd-ledger-writer' });
    worker.on('message', (reply: RowWriterReply) => {
      const pending = this.pending.get(reply.id);
      if (pending === undefined) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.error === undefined) pending.resolve();
      else pending.reject(this.failure(reply.error));
    });
    // The queue retries a failed batch: a dead thread is replaced at the next write.
    const fail = (reason: string) => {
      if (this.worker === worker) this.worker = undefined;
      for (const pending of this.pending.values()) pending.reject(this.failure(reason));
      this.pending.clear();
    };
    worker.on('error', (err: Error) => fail(err.message));
    worker.on('exit', (code: number) => fail(`its writer thread exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private failure(reason: string): HerdError {
    return new HerdError('UNAVAILABLE', `ledger ${this.config.path} failed: ${reason}`);
  }
}
