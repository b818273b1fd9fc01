// The start-up of a PostgreSQL ledger as one repeatable step (migrations, what a previous process spooled,
// recovery), tried at once and, for a serving process, again with backoff until the database answers.
import { HerdError } from '../../core/errors.ts';
import type { BackoffPolicy } from '../resilience/backoff.ts';
import { SchemaNewerError } from '../storage/apply-sqlite-migrations.ts';
import { describePostgresFailure } from '../storage/describe-postgres-failure.ts';
import { type AttemptIntent, recoverIntents } from './ledger-intents.ts';
import type { LedgerEntry } from './ledger-write-queue.ts';
import { RetryUntilReady } from './retry-until-ready.ts';

/** What a previous process left in the spool folder, held until the database takes it. */
export interface Leftovers {
  entries: LedgerEntry[];
  intents: AttemptIntent[];
  files: string[];
}

export interface PostgresStartUpOptions {
  /** The database as describePostgresUrl shows it (no password). */
  target: string;
  /** Where rows spool meanwhile; undefined: no spool, a failed start-up is the caller's error. */
  spoolDir: string | undefined;
  leftovers: Leftovers | undefined;
  migrate: () => Promise<unknown>;
  /** One transaction; rows already present ignored. */
  write: (entries: readonly LedgerEntry[]) => Promise<void>;
  /** Deletes spool files whose rows the database now holds. */
  removeFiles: (files: readonly string[]) => void;
  /** The last step (settle or release what earlier processes left open); runs once the rows may flow. */
  recover: (() => Promise<unknown>) | undefined;
  backoff: BackoffPolicy;
  log: (line: string) => void;
}

/** A failure is logged at once when its reason changes, else at most this often. */
const REPEAT_LOG_MS = 60_000;
const BATCH = 500;

export class PostgresStartUp {
  /** Migrations done and the leftovers written: the database may take this process's rows and reservations. */
  opened = false;
  /** Resolves once opened; rejects when closed first. */
  readonly whenOpened: Promise<void>;
  private markOpened!: () => void;
  private markClosed!: (error: HerdError) => void;
  private closed = false;
  private leftovers: Leftovers | undefined;
  private readonly retry: RetryUntilReady;
  private lastLogged: { reason: string; at: number } | undefined;

  constructor(private readonly options: PostgresStartUpOptions) {
    this.leftovers = options.leftovers;
    const opened = new Promise<void>((resolve) => {
      this.markOpened = resolve;
    });
    const closed = new Promise<never>((_, reject) => {
      this.markClosed = reject;
    });
    this.whenOpened = Promise.race([opened, closed]);
    this.whenOpened.catch(() => undefined);
    this.retry = new RetryUntilReady({
      step: () => this.run(),
      backoff: options.backoff,
      onFailure: (error, attempt, retryInMs) => this.logUnreachable(error, attempt, retryInMs),
      onReady: (attempts) => options.log(`PostgreSQL ledger ${options.target} reached after ${attempts} attempts: spooled rows are being written`),
    });
  }

  /**
   * The first attempt, at open. True: done. False: a spooled ledger serves on and the step runs again in the
   * background. Throws when there is no spool, or the failure is not the database's (a bug, a config error).
   */
  async begin(): Promise<boolean> {
    if (await this.retry.attempt()) return true;
    const error = this.retry.lastError;
    // A schema newer than this Herd never passes by itself: refuse to start, as `herd migrate` refuses.
    if (this.options.spoolDir === undefined || !(error instanceof HerdError) || error.code !== 'UNAVAILABLE' || error instanceof SchemaNewerError) throw error;
    this.retry.retryInBackground();
    return false;
  }

  get isReady(): boolean {
    return this.retry.isReady;
  }

  /** While not ready: why (the last attempt's failure), for /health. */
  waitingFor(): string | undefined {
    if (this.retry.isReady) return undefined;
    const error = this.retry.lastError;
    return error === undefined ? 'connecting' : describePostgresFailure(error).reason;
  }

  /** Rows a previous process left that the database does not hold yet, and the oldest one's finish time. */
  leftoverBacklog(): { rows: number; oldestAt: number | undefined } {
    let rows = 0;
    let oldestAt: number | undefined;
    for (const e of this.leftovers?.entries ?? []) {
      rows += 1 + e.attempts.length;
      oldestAt = Math.min(oldestAt ?? e.request.finishedAt, e.request.finishedAt);
    }
    return { rows, oldestAt };
  }

  /** Stops retrying; batches waiting for the start-up give up (their rows stay in the spool). */
  close(): void {
    this.closed = true;
    this.retry.stop();
    if (!this.opened) this.markClosed(new HerdError('UNAVAILABLE', 'the PostgreSQL ledger closed before reaching its database; its rows stay in the spool'));
  }

  /**
   * The same whether the database answers at once or only later; safe to repeat after a failure anywhere
   * (migrations are idempotent, replayed rows already present are ignored, recovery settles each reservation once).
   */
  private async run(): Promise<void> {
    if (this.closed) throw new HerdError('UNAVAILABLE', 'the PostgreSQL ledger is closed');
    try {
      await this.options.migrate();
    } catch (err) {
      if (err instanceof HerdError) throw err;
      // The message never carries the URL: it may hold a password.
      throw new HerdError('UNAVAILABLE', `cannot open the PostgreSQL ledger: ${messageOf(err)}`, { cause: err });
    }
    const left = this.leftovers;
    if (left !== undefined) {
      try {
        // Rows a previous process spooled and never wrote go in first, in their order (recover() needs them).
        for (let i = 0; i < left.entries.length; i += BATCH) await this.options.write(left.entries.slice(i, i + BATCH));
        // Calls in flight when it died: their intents become `interrupted` rows (ignored where a row exists).
        const interrupted = recoverIntents(left.intents, left.entries, 'USD');
        for (let i = 0; i < interrupted.length; i += BATCH) await this.options.write(interrupted.slice(i, i + BATCH));
      } catch (err) {
        throw err instanceof HerdError ? err : new HerdError('UNAVAILABLE', `cannot write the ledger spool to PostgreSQL: ${messageOf(err)}`, { cause: err });
      }
      this.options.removeFiles(left.files);
      this.leftovers = undefined;
    }
    this.opened = true;
    this.markOpened();
    await this.options.recover?.();
  }

  /** First failure, a new reason, or a minute of the same one: an operator must see it without a line per retry. */
  private logUnreachable(error: unknown, attempt: number, retryInMs: number): void {
    const { reason, needsOperator } = describePostgresFailure(error);
    const at = Date.now();
    if (this.lastLogged?.reason === reason && at - this.lastLogged.at < REPEAT_LOG_MS) return;
    this.lastLogged = { reason, at };
    const { target, spoolDir, log } = this.options;
    const retry = `retrying in ${(retryInMs / 1000).toFixed(1)} s`;
    const fix = needsOperator ? ' This will not pass by itself: check billing.ledger (DATABASE_URL) and the database.' : '';
    if (attempt === 1) {
      log(
        `PostgreSQL ledger ${target} is unreachable (${reason}); serving anyway: rows spool to ${spoolDir} and are written once it answers, keys with a budget get 503 until then; ${retry}.${fix}`,
      );
    } else {
      log(`PostgreSQL ledger ${target} still unreachable after ${attempt} attempts (${reason}); rows keep spooling; ${retry}.${fix}`);
    }
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
