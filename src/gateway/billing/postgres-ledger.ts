// The Ledger on PostgreSQL (pg), for several replicas sharing one ledger; budget checks stay exact
// across replicas because every spend change holds the key's day and month rows locked (see below).
import type { AttemptIntent } from './ledger-intents.ts';
import { LedgerSpool } from './ledger-spool.ts';
import type { Pool } from 'pg';
import { HerdError } from '../../core/errors.ts';
import type { BackoffPolicy } from '../resilience/backoff.ts';
import { applyPostgresMigrations, quoteIdentifier } from '../storage/apply-postgres-migrations.ts';
import { describePostgresUrl } from '../storage/describe-postgres-failure.ts';
import { PostgresStartUp } from './postgres-start-up.ts';
import { budgetPeriods } from './check-budgets.ts';
import type {
  AttemptRow,
  BudgetLine,
  Ledger,
  LedgerOptions,
  LedgerStats,
  RecoverOptions,
  RecoverResult,
  ReleaseResult,
  RequestRecord,
  RequestDetail,
  RequestListQuery,
  RequestPage,
  Reservation,
  ReserveInput,
  SettleInput,
  SettleResult,
  SettlePartResult,
  Spend,
  SpendTotal,
  UsagePage,
  UsagePageQuery,
  UsageQuery,
  UsageRow,
} from './ledger.ts';
import { LEDGER_SCOPE, ledgerMigrations } from './ledger-migrations.ts';
import { convertUsageRow } from './ledger-rows.ts';
import { LedgerWriteQueue, type LedgerEntry } from './ledger-write-queue.ts';
import { toSafeMicros, type Micros } from './money.ts';
import { buildUsageQuery } from './usage-query.ts';
import { convertRowToAttempt, convertRowToRequest, convertRowToSpendTotal } from './ledger-read-rows.ts';
import { checkTime, createBinder } from './page-cursor.ts';
import { assembleRequestPage, buildRequestDetailQueries, buildRequestListQuery } from './request-list-query.ts';
import { assembleUsagePage, buildSpendTotalsQuery, buildUsagePageQuery } from './usage-page-query.ts';
import { createPostgresPool } from '../storage/create-postgres-pool.ts';
import { PostgresRunner } from './postgres-runner.ts';
import { writePostgresEntries } from './write-postgres-entries.ts';
import { ANSWERED_OPEN, readCounters, releaseLines, releaseStale, reserveLines, settleLines, settlePartLines } from './postgres-budgets.ts';
import { PostgresAlertOutbox } from './postgres-alert-outbox.ts';
import type { AlertOutbox } from './alert-outbox.ts';

export interface PostgresLedgerOptions extends LedgerOptions {
  /** postgres://user:pass@host:port/db */
  url: string;
  /** Tables live in this schema (created if needed) instead of the connection's default; tests use one per run. */
  schema?: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** A connection attempt gives up after this long (default 2000 ms): an unreachable server must not hold requests. */
  connectTimeoutMs?: number;
  /** A statement gives up after this long (default 5000 ms), on the client (a dead network) and on the server. */
  queryTimeoutMs?: number;
  /** The last start-up step, once the database answers: settle or release what earlier processes left open. */
  recover?: Pick<RecoverOptions, 'olderThanMs'>;
  /** Start-up lines: the database unreachable (and why), reached again. */
  log?: (line: string) => void;
  /** With a spool, the waits between start-up attempts while the database is unreachable (default 250 ms doubling to 2 s: an attempt costs one connection, bounded by connectTimeoutMs). */
  startUpBackoff?: BackoffPolicy;
}

const COMMIT_WAIT_MS = 1_000;

/**
 * Budget atomicity (postgres-budgets.ts): a reservation upserts and row-locks every spend counter its
 * budget lines name, in one fixed order, then checks every line and adds to each in the same
 * transaction, so a concurrent reservation on the same key or team — from any replica — waits for the
 * locks and then sees this one. Settle and release lock the reservation row first, then the counters.
 */
export class PostgresLedger implements Ledger {
  readonly kind = 'postgres' as const;
  private readonly queue: LedgerWriteQueue;
  private readonly runner: PostgresRunner;
  private outbox: PostgresAlertOutbox | undefined;
  private readonly now: () => number;
  private closed = false;

  /**
   * Connects, migrates and replays what a previous process spooled. With a spool (a serving process), a
   * database that cannot be reached does not stop the start: the ledger serves from the spool (reserve and
   * the readers answer UNAVAILABLE) and runs the same start-up again with backoff until it succeeds.
   * Without one (the CLI, reports), that failure is thrown. A malformed URL is always thrown.
   */
  static async open(options: PostgresLedgerOptions): Promise<PostgresLedger> {
    const target = describePostgresUrl(options.url);
    if (options.schema !== undefined) quoteIdentifier(options.schema);
    const pool = createPostgresPool(options);
    let taken: ReturnType<typeof LedgerSpool.open> | undefined;
    try {
      // The folder first: a second server on it is refused at once, and rows spool from the first request.
      if (options.spoolDir !== undefined) taken = LedgerSpool.open(options.spoolDir);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    const ledger = new PostgresLedger(pool, options, target, taken);
    try {
      await ledger.startUp.begin();
    } catch (err) {
      // Only an unreachable or refusing database is waited for (with a spool); this is not one.
      ledger.spool?.close();
      await pool.end().catch(() => undefined);
      throw err;
    }
    return ledger;
  }

  private readonly spool: LedgerSpool | undefined;
  private readonly startUp: PostgresStartUp;
  private readonly log: (line: string) => void;

  private constructor(
    private readonly pool: Pool,
    options: PostgresLedgerOptions,
    private readonly target: string,
    taken: ReturnType<typeof LedgerSpool.open> | undefined,
  ) {
    this.runner = new PostgresRunner(pool, () => this.closed);
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => undefined);
    this.queue = new LedgerWriteQueue({
      write: (entries) => this.writeQueued(entries),
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      maxBatchRows: options.maxBatchRows ?? 500,
      onError: options.onError,
    });
    this.spool = taken?.spool;
    if (taken) this.queue.useSpool(taken.spool);
    const recover = options.recover;
    this.startUp = new PostgresStartUp({
      target,
      spoolDir: options.spoolDir,
      leftovers: taken && taken.leftoverFiles.length > 0 ? { entries: taken.leftovers, intents: taken.intents, files: taken.leftoverFiles } : undefined,
      migrate: () => applyPostgresMigrations(pool, LEDGER_SCOPE, ledgerMigrations, options.schema),
      write: (entries) => this.writeEntries(entries),
      removeFiles: (files) => taken?.spool.removeFiles(files),
      recover: recover ? () => this.recover({ olderThanMs: recover.olderThanMs }) : undefined,
      backoff: options.startUpBackoff ?? { baseMs: 250, capMs: 2000 },
      log: this.log,
    });
  }

  /** Until the start-up has reached the database, budgets and reports cannot be answered. */
  private requireOpened(): void {
    if (this.startUp.opened) return;
    throw new HerdError('UNAVAILABLE', 'the ledger database has not been reached since start-up: spend cannot be checked right now', { retryAfterSeconds: 1 });
  }

  /** The write queue's batches wait for the start-up (they are spooled meanwhile), so they follow the leftovers in order. */
  private async writeQueued(entries: readonly LedgerEntry[]): Promise<void> {
    if (!this.startUp.opened) await this.startUp.whenOpened;
    await this.writeEntries(entries);
  }

  async reserve(input: ReserveInput): Promise<Reservation> {
    this.requireOpened();
    const at = Math.round(input.atMs ?? this.now());
    return this.runner.transaction((c) => reserveLines(c, input, at));
  }

  async settle(requestId: string, actual: SettleInput): Promise<SettleResult> {
    this.requireOpened();
    const at = Math.round(actual.atMs ?? this.now());
    return this.runner.transaction((c) => settleLines(c, requestId, actual, at));
  }

  async settlePart(reservationId: string, lineRequestId: string, costMicros: Micros, atMs?: number): Promise<SettlePartResult> {
    this.requireOpened();
    const at = Math.round(atMs ?? this.now());
    return this.runner.transaction((c) => settlePartLines(c, reservationId, lineRequestId, costMicros, at));
  }

  async release(requestId: string): Promise<ReleaseResult> {
    this.requireOpened();
    const at = Math.round(this.now());
    return this.runner.transaction((c) => releaseLines(c, requestId, at));
  }

  async recover(options: RecoverOptions): Promise<RecoverResult> {
    this.requireOpened();
    const now = Math.round(options.nowMs ?? this.now());
    const settled = await this.settleAnswered(now);
    const released = await this.runner.transaction((c) => releaseStale(c, now, now - options.olderThanMs));
    return { ...released, ...settled };
  }

  async budgetSpend(lines: readonly BudgetLine[]): Promise<Micros[]> {
    this.requireOpened();
    return this.runner.guard(() => readCounters(this.pool, lines));
  }

  alertOutbox(): AlertOutbox {
    this.outbox ??= new PostgresAlertOutbox(this.runner);
    return this.outbox;
  }

  /** Open reservations whose request row committed: the answer went out; settle (or, if nothing answered, release) each through the usual statements. */
  private async settleAnswered(now: number): Promise<Pick<RecoverResult, 'settled' | 'settledMicros'>> {
    const { rows } = await this.runner.guard(() => this.pool.query<{ request_id: string; model: string | null; cost_micros: string }>(ANSWERED_OPEN));
    let settled = 0,
      settledMicros = 0;
    for (const row of rows) {
      if (row.model === null) {
        await this.release(row.request_id);
        continue;
      }
      const cost = toSafeMicros(row.cost_micros);
      const result = await this.settle(row.request_id, { costMicros: cost, atMs: now });
      if (result.changed) {
        settled++;
        settledMicros += cost;
      }
    }
    return { settled, settledMicros };
  }

  async spend(keyId: string, atMs?: number): Promise<Spend> {
    this.requireOpened();
    const periods = budgetPeriods(atMs ?? this.now());
    const [day = 0, month = 0] = await this.runner.guard(() =>
      readCounters(this.pool, [
        { subject: keyId, bucket: periods.day },
        { subject: keyId, bucket: periods.month },
      ]),
    );
    return { dayMicros: day, monthMicros: month };
  }

  intend(intent: AttemptIntent): void {
    if (this.closed || !this.spool) return;
    this.queue.intended(intent.requestId, this.spool.intend(intent));
  }

  record(request: RequestRecord, attempts: readonly AttemptRow[]): Promise<void> {
    if (this.closed) throw new HerdError('UNAVAILABLE', 'the PostgreSQL ledger is closed');
    const committed = this.queue.push(request, attempts);
    // An unreachable server (its network gone) can leave a connection attempt hanging: an answer waits for
    // the commit this long at most; the rows stay queued either way.
    let timer: NodeJS.Timeout | undefined;
    const bounded = Promise.race([
      committed,
      new Promise<void>((_, reject) => {
        timer = setTimeout(() => reject(new HerdError('UNAVAILABLE', 'the PostgreSQL ledger did not commit in time; the rows stay queued')), COMMIT_WAIT_MS);
        timer.unref();
      }),
    ]).finally(() => clearTimeout(timer));
    bounded.catch(() => undefined);
    return bounded;
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  // The console's queries: one statement per page (the SQL is shared with SQLite).
  async usagePage(query: UsagePageQuery): Promise<UsagePage> {
    this.requireOpened();
    const { sql, params } = buildUsagePageQuery('postgres', query, query.untilMs ?? this.now());
    return this.runner.guard(async () => assembleUsagePage((await this.pool.query(sql, params)).rows, query));
  }

  async spendTotals(sinceMs: number, untilMs: number): Promise<SpendTotal[]> {
    this.requireOpened();
    checkTime('since', sinceMs);
    checkTime('until', untilMs);
    return this.runner.guard(async () => {
      const { sql, params } = buildSpendTotalsQuery('postgres', sinceMs, untilMs);
      const { rows } = await this.pool.query(sql, params);
      return rows.map(convertRowToSpendTotal);
    });
  }

  async listRequests(query: RequestListQuery): Promise<RequestPage> {
    this.requireOpened();
    const { sql, params } = buildRequestListQuery('postgres', query);
    return this.runner.guard(async () => assembleRequestPage((await this.pool.query(sql, params)).rows, query.limit));
  }

  /** Two statements, not one transaction: a request's row and its attempts are committed together, so both or neither are seen. */
  async getRequest(requestId: string): Promise<RequestDetail | undefined> {
    this.requireOpened();
    const detail = buildRequestDetailQueries('postgres');
    return this.runner.guard(async () => {
      const { rows } = await this.pool.query(detail.request, [requestId]);
      const row = rows[0] as Record<string, unknown> | undefined;
      if (row === undefined) return undefined;
      const attempts = await this.pool.query(detail.attempts, [requestId]);
      return { request: convertRowToRequest(row), attempts: attempts.rows.map(convertRowToAttempt) };
    });
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    this.requireOpened();
    return this.runner.guard(async () => {
      const { params, bind } = createBinder('postgres');
      const { rows } = await this.pool.query(buildUsageQuery('postgres', query.by, bind, query.sinceMs, query.untilMs ?? this.now()), params);
      return rows.map(convertUsageRow);
    });
  }

  stats(): LedgerStats {
    const stats = this.queue.stats();
    if (this.startUp.isReady) return stats;
    // Not reached yet since start-up: behind by what a previous process left as well, however few rows.
    const left = this.startUp.leftoverBacklog();
    const leftMs = left.oldestAt === undefined ? 0 : Math.max(0, Date.now() - left.oldestAt);
    return { ...stats, behindRows: stats.behindRows + left.rows, behindMs: Math.max(stats.behindMs, leftMs), waitingForDatabase: this.startUp.waitingFor() };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const opened = this.startUp.opened;
    this.startUp.close();
    try {
      await this.queue.close();
    } catch (err) {
      // Never reached: the rows are spooled, and the next start writes them. Otherwise, as in any outage, say so.
      if (opened) throw err;
      this.log(`PostgreSQL ledger ${this.target} never answered: ${this.stats().behindRows} rows stay in the spool for the next start`);
    } finally {
      // Deletes only the files whose rows are all in the database: the rest wait for the next start.
      this.spool?.close();
      await this.pool.end();
    }
  }

  /** One transaction per batch (see writePostgresEntries). */
  private writeEntries(entries: readonly LedgerEntry[]): Promise<void> {
    return writePostgresEntries(this.runner, entries);
  }
}
