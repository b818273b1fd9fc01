// The Ledger on PostgreSQL (pg), for several replicas sharing one ledger; budget checks stay exact
// across replicas because every spend change holds the key's day and month rows locked (see below).
import type { AttemptIntent } from './ledger-intents.ts';
import { LedgerSpool } from './ledger-spool.ts';
import type { Pool, PoolClient } from 'pg';
import { HerdError } from '../../core/errors.ts';
import type { BackoffPolicy } from '../resilience/backoff.ts';
import { applyPostgresMigrations, quoteIdentifier } from '../storage/apply-postgres-migrations.ts';
import { describePostgresUrl } from '../storage/describe-postgres-failure.ts';
import { PostgresStartUp } from './postgres-start-up.ts';
import { budgetPeriods, checkBudgets } from './check-budgets.ts';
import type {
  AttemptRow,
  Ledger,
  LedgerOptions,
  LedgerStats,
  RecoverOptions,
  RecoverResult,
  ReleaseResult,
  RequestRecord,
  Reservation,
  ReservationState,
  ReserveInput,
  SettleInput,
  SettleResult,
  Spend,
  UsageQuery,
  UsageRow,
} from './ledger.ts';
import { LEDGER_SCOPE, ledgerMigrations } from './ledger-migrations.ts';
import { convertUsageRow } from './ledger-rows.ts';
import { LedgerWriteQueue, type LedgerEntry } from './ledger-write-queue.ts';
import { toSafeMicros } from './money.ts';
import { buildUsageQuery } from './usage-query.ts';
import { createPostgresPool } from '../storage/create-postgres-pool.ts';
import { PostgresRunner } from './postgres-runner.ts';
import { writePostgresEntries } from './write-postgres-entries.ts';
import {
  ANSWERED_OPEN,
  FIND_RESERVATION,
  HOLD,
  LOCK_SPEND,
  type LockedSpendRow,
  READ_SPEND,
  RELEASE,
  RELEASE_STALE,
  type ReleasedRow,
  SETTLE,
  SETTLE_UNRESERVED,
  SUBTRACT_SPEND,
} from './postgres-ledger-sql.ts';

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
 * Budget atomicity: a reservation first upserts the key's day and month spend rows with
 * INSERT … ON CONFLICT DO UPDATE, which creates them if needed, row-locks them (day, then month, as
 * every statement here does, so transactions cannot deadlock on them) and returns their latest
 * committed totals; the check and the increment follow in the same transaction, so a concurrent
 * reservation for the same key — from any replica — waits for the lock and then sees this one.
 * READ COMMITTED suffices: no decision rests on a row read without its lock. Settle and release
 * are single statements (one round trip) that lock the reservation row first, then the spend rows.
 */
export class PostgresLedger implements Ledger {
  readonly kind = 'postgres' as const;
  private readonly queue: LedgerWriteQueue;
  private readonly runner: PostgresRunner;
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
    const periods = budgetPeriods(at);
    return this.runner.transaction(async (c) => {
      const { rows } = await c.query<LockedSpendRow>(LOCK_SPEND, [input.keyId, periods.day, periods.month, input.requestId]);
      const existing = rows[0]?.r_state === null || rows[0] === undefined ? undefined : rows[0];
      if (existing) return this.replay(c, input, existing);
      const find = (period: string) => toSafeMicros(rows.find((r) => r.period === period)?.micros ?? 0);
      const spent = { dayMicros: find(periods.day), monthMicros: find(periods.month) };
      const over = checkBudgets(input.keyId, spent, input.estimateMicros, input.budgets, input.currency);
      if (over) {
        // LOCK_SPEND's join read its snapshot before waiting for the lock, so a reservation of this id
        // committed while we waited is invisible to it; a fresh statement sees it (READ COMMITTED).
        const again = await c.query<LockedSpendRow>(FIND_RESERVATION, [input.requestId]);
        if (again.rows[0]) return this.replay(c, input, again.rows[0]);
        throw over;
      }
      // A plain INSERT: a reservation of the same id by another key racing this one fails with 23505,
      // and the retried transaction then finds it.
      await c.query(HOLD, [input.requestId, input.keyId, input.estimateMicros, periods.day, periods.month, at]);
      return {
        requestId: input.requestId,
        keyId: input.keyId,
        state: 'open',
        estimateMicros: input.estimateMicros,
        actualMicros: undefined,
        created: true,
        spent: { dayMicros: spent.dayMicros + input.estimateMicros, monthMicros: spent.monthMicros + input.estimateMicros },
      };
    });
  }

  private async replay(c: PoolClient, input: ReserveInput, existing: Omit<LockedSpendRow, 'period' | 'micros'>): Promise<Reservation> {
    if (existing.r_key_id !== input.keyId) throw new HerdError('INVALID_ARG', `request id ${input.requestId} is already reserved by another key`);
    return {
      requestId: input.requestId,
      keyId: input.keyId,
      state: existing.r_state as ReservationState,
      estimateMicros: toSafeMicros(existing.r_estimate),
      actualMicros: existing.r_actual === null ? undefined : toSafeMicros(existing.r_actual),
      created: false,
      spent: await this.readSpend(c, input.keyId, existing.r_day as string, existing.r_month as string),
    };
  }

  async settle(requestId: string, actual: SettleInput): Promise<SettleResult> {
    this.requireOpened();
    const at = Math.round(actual.atMs ?? this.now());
    for (let attempt = 1; ; attempt++) {
      const { rows } = await this.runner.statement<{ state: ReservationState; actual_micros: string | null }>(SETTLE, [requestId, actual.costMicros, at]);
      const row = rows[0];
      if (row) {
        if (row.state === 'settled') return { state: 'settled', actualMicros: toSafeMicros(row.actual_micros), changed: false };
        return { state: 'settled', actualMicros: actual.costMicros, changed: true };
      }
      if (actual.keyId === undefined) throw new HerdError('NOT_FOUND', `no reservation for request ${requestId} and no key to charge`);
      if (actual.costMicros === 0) return { state: 'none', actualMicros: 0, changed: false };
      const periods = budgetPeriods(at);
      const created = await this.runner.statement<{ inserted: string }>(SETTLE_UNRESERVED, [requestId, actual.keyId, actual.costMicros, periods.day, periods.month, at]);
      if (toSafeMicros(created.rows[0]?.inserted) === 1) return { state: 'settled', actualMicros: actual.costMicros, changed: true };
      // A reservation for this id appeared meanwhile: settle that one.
      if (attempt >= 3) throw new HerdError('UNAVAILABLE', `the PostgreSQL ledger could not settle ${requestId}: it kept changing`);
    }
  }

  async release(requestId: string): Promise<ReleaseResult> {
    this.requireOpened();
    const { rows } = await this.runner.statement<{ state: ReservationState }>(RELEASE, [requestId, Math.round(this.now())]);
    const row = rows[0];
    if (!row) return { state: 'none', changed: false };
    return row.state === 'open' ? { state: 'released', changed: true } : { state: row.state, changed: false };
  }

  async recover(options: RecoverOptions): Promise<RecoverResult> {
    this.requireOpened();
    const now = Math.round(options.nowMs ?? this.now());
    const settled = await this.settleAnswered(now);
    const released = await this.runner.transaction(async (c) => {
      const { rows } = await c.query<ReleasedRow>(RELEASE_STALE, [now, now - options.olderThanMs]);
      const deltas = new Map<string, { key: string; period: string; micros: number }>();
      let releasedMicros = 0;
      for (const row of rows) {
        const micros = toSafeMicros(row.estimate_micros);
        releasedMicros += micros;
        for (const period of [row.day_period, row.month_period]) {
          const id = `${row.key_id}\u0000${period}`;
          const entry = deltas.get(id) ?? { key: row.key_id, period, micros: 0 };
          entry.micros -= micros;
          deltas.set(id, entry);
        }
      }
      // Sorted by key, then period ('d:' before 'm:'): the lock order reservations use.
      const sorted = [...deltas.values()].filter((d) => d.micros !== 0).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.period < b.period ? -1 : 1));
      if (sorted.length > 0) {
        await c.query(SUBTRACT_SPEND, [sorted.map((d) => d.key), sorted.map((d) => d.period), sorted.map((d) => String(d.micros))]);
      }
      return { released: rows.length, releasedMicros };
    });
    return { ...released, ...settled };
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
    return this.runner.guard(() => this.readSpend(this.pool, keyId, periods.day, periods.month));
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

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    this.requireOpened();
    return this.runner.guard(async () => {
      const { rows } = await this.pool.query(buildUsageQuery('postgres', query.by), [Math.round(query.sinceMs), Math.round(query.untilMs ?? this.now())]);
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

  private async readSpend(c: Pick<Pool, 'query'>, keyId: string, day: string, month: string): Promise<Spend> {
    const { rows } = await c.query<{ period: string; micros: string }>(READ_SPEND, [keyId, day, month]);
    const find = (period: string) => toSafeMicros(rows.find((r) => r.period === period)?.micros ?? 0);
    return { dayMicros: find(day), monthMicros: find(month) };
  }
}
