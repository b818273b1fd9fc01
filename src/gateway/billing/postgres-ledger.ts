// The Ledger on PostgreSQL (pg), for several replicas sharing one ledger; budget checks stay exact
// across replicas because every spend change holds the key's day and month rows locked (see below).
import pg from 'pg';
import { findInlineAttempt } from './inline-attempt.ts';
import type { AttemptIntent } from './ledger-intents.ts';
import { LedgerSpool } from './ledger-spool.ts';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { HerdError } from '../../core/errors.ts';
import type { BackoffPolicy } from '../resilience/backoff.ts';
import { applyPostgresMigrations, quoteIdentifier } from './apply-postgres-migrations.ts';
import { describePostgresUrl } from './describe-postgres-failure.ts';
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
import { ATTEMPT_COLUMNS, REQUEST_COLUMNS, type DbRow, convertAttemptToRow, convertRequestToRow, convertUsageRow } from './ledger-rows.ts';
import { LedgerWriteQueue, type LedgerEntry } from './ledger-write-queue.ts';
import { toSafeMicros } from './money.ts';
import { buildUsageQuery } from './usage-query.ts';

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

/** What recover() reads back from the reservations it releases. */
interface ReleasedRow {
  key_id: string;
  estimate_micros: string;
  day_period: string;
  month_period: string;
}

// Every statement below that changes ledger_spend upserts the (key, day) row before the (key, month)
// row, so they take row locks in one order and two transactions cannot deadlock on them.

/** Creates the key's spend rows if needed, locks them, returns their latest totals, and any reservation of this id. */
const LOCK_SPEND = `
  WITH locked AS (
    INSERT INTO ledger_spend (key_id, period, micros) VALUES ($1, $2, 0), ($1, $3, 0)
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros
    RETURNING period, micros)
  SELECT l.period, l.micros, r.key_id AS r_key_id, r.state AS r_state, r.estimate_micros AS r_estimate,
    r.actual_micros AS r_actual, r.day_period AS r_day, r.month_period AS r_month
  FROM locked l LEFT JOIN ledger_reservations r ON r.request_id = $4`;

interface LockedSpendRow {
  period: string;
  micros: string;
  r_key_id: string | null;
  r_state: string | null;
  r_estimate: string | null;
  r_actual: string | null;
  r_day: string | null;
  r_month: string | null;
}

/** The open reservation and its estimate added to the (already locked) spend rows. */
const HOLD = `
  WITH r AS (
    INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, day_period, month_period, created_at)
    VALUES ($1, $2, 'open', $3::bigint, $4, $5, $6))
  INSERT INTO ledger_spend (key_id, period, micros) VALUES ($2, $4, $3::bigint), ($2, $5, $3::bigint)
  ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros`;

// settle and release are one statement each, hence one transaction and one round trip: the CTE locks
// the reservation (FOR UPDATE sees the latest committed state), changes it only from the states the
// transition allows, and moves the difference into the spend rows; the final SELECT shows the state before.
const SETTLE = `
  WITH old AS (
    SELECT request_id, key_id, state, estimate_micros, actual_micros, day_period, month_period
    FROM ledger_reservations WHERE request_id = $1 FOR UPDATE),
  upd AS (
    UPDATE ledger_reservations r SET state = 'settled', actual_micros = $2::bigint, resolved_at = $3
    FROM old WHERE r.request_id = old.request_id AND old.state <> 'settled'
    RETURNING old.key_id, old.day_period, old.month_period,
      $2::bigint - CASE WHEN old.state = 'open' THEN old.estimate_micros ELSE 0 END AS delta),
  spend AS (
    INSERT INTO ledger_spend (key_id, period, micros)
    SELECT key_id, day_period, delta FROM upd UNION ALL SELECT key_id, month_period, delta FROM upd
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros)
  SELECT state, actual_micros FROM old`;

/** A settlement with no reservation (the request skipped reserve): recorded as settled, charged once. */
const SETTLE_UNRESERVED = `
  WITH ins AS (
    INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, actual_micros, day_period, month_period, created_at, resolved_at)
    VALUES ($1, $2, 'settled', 0, $3::bigint, $4, $5, $6, $6) ON CONFLICT (request_id) DO NOTHING RETURNING key_id),
  spend AS (
    INSERT INTO ledger_spend (key_id, period, micros)
    SELECT key_id, $4, $3::bigint FROM ins UNION ALL SELECT key_id, $5, $3::bigint FROM ins
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros)
  SELECT COUNT(*) AS inserted FROM ins`;

const RELEASE = `
  WITH old AS (
    SELECT request_id, key_id, state, estimate_micros, day_period, month_period
    FROM ledger_reservations WHERE request_id = $1 FOR UPDATE),
  upd AS (
    UPDATE ledger_reservations r SET state = 'released', resolved_at = $2
    FROM old WHERE r.request_id = old.request_id AND old.state = 'open'
    RETURNING old.key_id, old.day_period, old.month_period, old.estimate_micros),
  spend AS (
    INSERT INTO ledger_spend (key_id, period, micros)
    SELECT key_id, day_period, -estimate_micros FROM upd UNION ALL SELECT key_id, month_period, -estimate_micros FROM upd
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros)
  SELECT state FROM old`;

const COMMIT_WAIT_MS = 1_000;

const RETRYABLE = new Set(['40001', '40P01', '23505']); // serialization failure, deadlock, a racing duplicate insert

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
    const schema = options.schema;
    if (schema !== undefined) quoteIdentifier(schema);
    const queryTimeoutMs = options.queryTimeoutMs ?? 5000;
    const serverOptions = [`-c statement_timeout=${queryTimeoutMs}`, ...(schema !== undefined ? [`-c search_path=${schema}`] : [])];
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      // Bounded everywhere: the network to the server may vanish without a reset (a cut cable, a dropped route).
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
      query_timeout: queryTimeoutMs + 1000,
      keepAlive: true,
      options: serverOptions.join(' '),
    });
    // An idle connection dropped by the server must not crash the process; the next query reconnects.
    pool.on('error', (err) => options.onError?.(err));
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
    return this.transaction(async (c) => {
      const { rows } = await c.query<LockedSpendRow>(LOCK_SPEND, [input.keyId, periods.day, periods.month, input.requestId]);
      const existing = rows[0]?.r_state === null || rows[0] === undefined ? undefined : rows[0];
      if (existing) return this.replay(c, input, existing);
      const find = (period: string) => toSafeMicros(rows.find((r) => r.period === period)?.micros ?? 0);
      const spent = { dayMicros: find(periods.day), monthMicros: find(periods.month) };
      const over = checkBudgets(input.keyId, spent, input.estimateMicros, input.budgets, input.currency);
      if (over) {
        // LOCK_SPEND's join read its snapshot before waiting for the lock, so a reservation of this id
        // committed while we waited is invisible to it; a fresh statement sees it (READ COMMITTED).
        const again = await c.query<LockedSpendRow>(
          `SELECT key_id AS r_key_id, state AS r_state, estimate_micros AS r_estimate, actual_micros AS r_actual,
          day_period AS r_day, month_period AS r_month FROM ledger_reservations WHERE request_id = $1`,
          [input.requestId],
        );
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
      const { rows } = await this.statement<{ state: ReservationState; actual_micros: string | null }>(SETTLE, [requestId, actual.costMicros, at]);
      const row = rows[0];
      if (row) {
        if (row.state === 'settled') return { state: 'settled', actualMicros: toSafeMicros(row.actual_micros), changed: false };
        return { state: 'settled', actualMicros: actual.costMicros, changed: true };
      }
      if (actual.keyId === undefined) throw new HerdError('NOT_FOUND', `no reservation for request ${requestId} and no key to charge`);
      if (actual.costMicros === 0) return { state: 'none', actualMicros: 0, changed: false };
      const periods = budgetPeriods(at);
      const created = await this.statement<{ inserted: string }>(SETTLE_UNRESERVED, [requestId, actual.keyId, actual.costMicros, periods.day, periods.month, at]);
      if (toSafeMicros(created.rows[0]?.inserted) === 1) return { state: 'settled', actualMicros: actual.costMicros, changed: true };
      // A reservation for this id appeared meanwhile: settle that one.
      if (attempt >= 3) throw new HerdError('UNAVAILABLE', `the PostgreSQL ledger could not settle ${requestId}: it kept changing`);
    }
  }

  async release(requestId: string): Promise<ReleaseResult> {
    this.requireOpened();
    const { rows } = await this.statement<{ state: ReservationState }>(RELEASE, [requestId, Math.round(this.now())]);
    const row = rows[0];
    if (!row) return { state: 'none', changed: false };
    return row.state === 'open' ? { state: 'released', changed: true } : { state: row.state, changed: false };
  }

  async recover(options: RecoverOptions): Promise<RecoverResult> {
    this.requireOpened();
    const now = Math.round(options.nowMs ?? this.now());
    const settled = await this.settleAnswered(now);
    const released = await this.transaction(async (c) => {
      const { rows } = await c.query<ReleasedRow>(
        `UPDATE ledger_reservations SET state = 'released', resolved_at = $1 WHERE state = 'open' AND created_at < $2
         RETURNING key_id, estimate_micros, day_period, month_period`,
        [now, now - options.olderThanMs],
      );
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
        await c.query(
          `INSERT INTO ledger_spend (key_id, period, micros) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
          ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros`,
          [sorted.map((d) => d.key), sorted.map((d) => d.period), sorted.map((d) => String(d.micros))],
        );
      }
      return { released: rows.length, releasedMicros };
    });
    return { ...released, ...settled };
  }

  /** Open reservations whose request row committed: the answer went out; settle (or, if nothing answered, release) each through the usual statements. */
  private async settleAnswered(now: number): Promise<Pick<RecoverResult, 'settled' | 'settledMicros'>> {
    const { rows } = await this.guard(() =>
      this.pool.query<{ request_id: string; model: string | null; cost_micros: string }>(
        `SELECT q.request_id, q.model, q.cost_micros FROM ledger_reservations r JOIN ledger_requests q ON q.request_id = r.request_id
       WHERE r.state = 'open' ORDER BY r.created_at`,
      ),
    );
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
    return this.guard(() => this.readSpend(this.pool, keyId, periods.day, periods.month));
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
    return this.guard(async () => {
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

  /** One transaction per batch; json_populate_recordset turns the whole batch into rows with one parameter. A single attempt rides in its request row. */
  private async writeEntries(entries: readonly LedgerEntry[]): Promise<void> {
    const requests: DbRow[] = [];
    const attempts: DbRow[] = [];
    for (const { request, attempts: tried } of entries) {
      const inline = findInlineAttempt(request, tried);
      requests.push(convertRequestToRow(request, inline));
      if (!inline) for (const attempt of tried) attempts.push(convertAttemptToRow(attempt));
    }
    await this.transaction(async (c) => {
      await c.query(
        `INSERT INTO ledger_requests (${REQUEST_COLUMNS.join(', ')}) SELECT ${REQUEST_COLUMNS.join(', ')}
        FROM json_populate_recordset(NULL::ledger_requests, $1) ON CONFLICT DO NOTHING`,
        [JSON.stringify(requests)],
      );
      if (attempts.length > 0) {
        await c.query(
          `INSERT INTO ledger_attempts (${ATTEMPT_COLUMNS.join(', ')}) SELECT ${ATTEMPT_COLUMNS.join(', ')}
          FROM json_populate_recordset(NULL::ledger_attempts, $1) a
          WHERE NOT EXISTS (SELECT 1 FROM ledger_requests r WHERE r.request_id = a.request_id AND r.attempt_outcome IS NOT NULL)
          ON CONFLICT DO NOTHING`,
          [JSON.stringify(attempts)],
        );
      }
    });
  }

  private async readSpend(c: Pick<Pool, 'query'>, keyId: string, day: string, month: string): Promise<Spend> {
    const { rows } = await c.query<{ period: string; micros: string }>('SELECT period, micros FROM ledger_spend WHERE key_id = $1 AND period IN ($2, $3)', [keyId, day, month]);
    const find = (period: string) => toSafeMicros(rows.find((r) => r.period === period)?.micros ?? 0);
    return { dayMicros: find(day), monthMicros: find(month) };
  }

  /** One statement (its own transaction), retried like a transaction. */
  private async statement<R extends QueryResultRow>(sql: string, params: unknown[]): Promise<QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pool.query<R>(sql, params);
      } catch (err) {
        if (attempt < 5 && RETRYABLE.has((err as { code?: string }).code ?? '')) continue;
        if (err instanceof HerdError) throw err;
        throw new HerdError('UNAVAILABLE', `the PostgreSQL ledger failed: ${messageOf(err)}`, { cause: err });
      }
    }
  }

  /** BEGIN … COMMIT on one pooled connection; retried (up to 5 times) on deadlock, serialization failure or a racing insert. */
  private async transaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed && this.pool.ended) throw new HerdError('UNAVAILABLE', 'the PostgreSQL ledger is closed');
    for (let attempt = 1; ; attempt++) {
      const client = await this.guard(() => this.pool.connect());
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await body(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        if (attempt < 5 && RETRYABLE.has((err as { code?: string }).code ?? '')) continue;
        if (err instanceof HerdError) throw err;
        throw new HerdError('UNAVAILABLE', `the PostgreSQL ledger failed: ${messageOf(err)}`, { cause: err });
      } finally {
        client.release(broken);
      }
    }
  }

  private async guard<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (err) {
      if (err instanceof HerdError) throw err;
      throw new HerdError('UNAVAILABLE', `the PostgreSQL ledger failed: ${messageOf(err)}`, { cause: err });
    }
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
