// The Ledger on a SQLite file (better-sqlite3, WAL), the embedded default: every reservation change
// runs in BEGIN IMMEDIATE, so worker processes sharing the file check and update a key's spend in turn.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { HerdError } from '../../core/errors.ts';
import { applySqliteMigrations } from '../storage/apply-sqlite-migrations.ts';
import { budgetPeriods, checkBudgets } from './check-budgets.ts';
import type {
  Ledger,
  LedgerOptions,
  LedgerStats,
  RecoverOptions,
  RecoverResult,
  ReleaseResult,
  Reservation,
  ReservationState,
  ReserveInput,
  SettleInput,
  SettleResult,
  Spend,
  UsageGroup,
  UsageQuery,
  UsageRow,
  AttemptRow,
  RequestRecord,
} from './ledger.ts';
import { LEDGER_SCOPE, ledgerMigrations } from './ledger-migrations.ts';
import { ATTEMPT_COLUMNS, REQUEST_COLUMNS, convertAttemptToValues, convertRequestToValues, convertUsageRow } from './ledger-rows.ts';
import { findInlineAttempt } from './inline-attempt.ts';
import { type AttemptIntent, recoverIntents } from './ledger-intents.ts';
import { LedgerSpool } from './ledger-spool.ts';
import { LedgerWriteQueue, type LedgerEntry } from './ledger-write-queue.ts';
import { buildUsageQuery } from './usage-query.ts';

export interface SqliteLedgerOptions extends LedgerOptions {
  /**
   * NORMAL (default) syncs the WAL at checkpoints, not at every commit: a process crash loses
   * nothing, a power cut may lose the last commits. FULL also survives power loss, at an fsync per reservation.
   */
  synchronous?: 'NORMAL' | 'FULL';
}

interface ReservationRow {
  request_id: string;
  key_id: string;
  state: ReservationState;
  estimate_micros: number;
  actual_micros: number | null;
  day_period: string;
  month_period: string;
  created_at: number;
}

export class SqliteLedger implements Ledger {
  readonly kind = 'sqlite' as const;
  readonly path: string;
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly queue: LedgerWriteQueue;
  private readonly sql;
  private closed = false;

  static open(file: string, options: SqliteLedgerOptions = {}): SqliteLedger {
    const path = resolve(file);
    let db: Database.Database | undefined;
    try {
      mkdirSync(dirname(path), { recursive: true });
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
      // Other processes (workers, the CLI) may hold the write lock for a moment: wait, do not fail.
      db.pragma('busy_timeout = 5000');
      // better-sqlite3's page cache per connection is large, and an append-mostly ledger fills and keeps it;
      // SQLite's own default holds the pages appends touch (docs/decisions/sqlite-page-cache.md).
      db.pragma('cache_size = -2000');
      applySqliteMigrations(db, LEDGER_SCOPE, ledgerMigrations);
    } catch (err) {
      db?.close();
      throw new HerdError('UNAVAILABLE', `cannot open ledger ${path}: ${messageOf(err)}`, { cause: err });
    }
    const ledger = new SqliteLedger(db, path, options);
    ledger.openSpool(options.spoolDir);
    return ledger;
  }

  private spool: LedgerSpool | undefined;

  /** Rows a killed process left in the spool go into the database before anything else (recover() needs them). */
  private openSpool(dir: string | undefined): void {
    if (dir === undefined) return;
    try {
      const { spool, leftovers, intents, leftoverFiles } = LedgerSpool.open(dir);
      for (let i = 0; i < leftovers.length; i += 500) this.writeEntries(leftovers.slice(i, i + 500));
      // Calls in flight when it died: their intents become `interrupted` rows (ignored where a row exists).
      const interrupted = recoverIntents(intents, leftovers, 'USD');
      for (let i = 0; i < interrupted.length; i += 500) this.writeEntries(interrupted.slice(i, i + 500));
      spool.removeFiles(leftoverFiles);
      this.spool = spool;
      this.queue.useSpool(spool);
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  private constructor(db: Database.Database, path: string, options: SqliteLedgerOptions) {
    this.db = db;
    this.path = path;
    this.now = options.now ?? Date.now;
    const insert = (table: string, columns: readonly string[]) =>
      db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`);
    this.sql = {
      reservation: db.prepare('SELECT * FROM ledger_reservations WHERE request_id = ?'),
      insertReservation: db.prepare(`INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, actual_micros, day_period, month_period, created_at, resolved_at)
        VALUES (@request_id, @key_id, @state, @estimate_micros, @actual_micros, @day_period, @month_period, @created_at, @resolved_at)`),
      resolve: db.prepare('UPDATE ledger_reservations SET state = ?, actual_micros = ?, resolved_at = ? WHERE request_id = ?'),
      addSpend: db.prepare(`INSERT INTO ledger_spend (key_id, period, micros) VALUES (?, ?, ?)
        ON CONFLICT (key_id, period) DO UPDATE SET micros = micros + excluded.micros`),
      spend: db.prepare('SELECT period, micros FROM ledger_spend WHERE key_id = ? AND period IN (?, ?)'),
      stale: db.prepare("SELECT * FROM ledger_reservations WHERE state = 'open' AND created_at < ? ORDER BY created_at"),
      answered: db.prepare(`SELECT r.*, q.model AS answered_model, q.cost_micros AS answered_cost FROM ledger_reservations r
        JOIN ledger_requests q ON q.request_id = r.request_id WHERE r.state = 'open' ORDER BY r.created_at`),
      insertRequest: insert('ledger_requests', REQUEST_COLUMNS),
      // Never beside an attempt already inline in its request row (a recovered intent replayed after the
      // request's own row): one attempt, one row, whichever table holds it.
      insertAttempt: db.prepare(`INSERT INTO ledger_attempts (${ATTEMPT_COLUMNS.join(', ')}) SELECT ${ATTEMPT_COLUMNS.map(() => '?').join(', ')}
        WHERE NOT EXISTS (SELECT 1 FROM ledger_requests WHERE request_id = ? AND attempt_outcome IS NOT NULL) ON CONFLICT DO NOTHING`),
      usage: new Map<UsageGroup, Database.Statement>(),
    };
    this.queue = new LedgerWriteQueue({
      write: async (entries) => this.writeEntries(entries),
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      maxBatchRows: options.maxBatchRows ?? 500,
      onError: options.onError,
    });
  }

  async reserve(input: ReserveInput): Promise<Reservation> {
    return this.immediate(() => {
      const existing = this.sql.reservation.get(input.requestId) as ReservationRow | undefined;
      if (existing) return this.replay(existing, input.keyId);
      const at = input.atMs ?? this.now();
      const periods = budgetPeriods(at);
      const spent = this.readSpend(input.keyId, periods.day, periods.month);
      const over = checkBudgets(input.keyId, spent, input.estimateMicros, input.budgets, input.currency);
      if (over) throw over;
      this.sql.insertReservation.run({
        request_id: input.requestId,
        key_id: input.keyId,
        state: 'open',
        estimate_micros: input.estimateMicros,
        actual_micros: null,
        day_period: periods.day,
        month_period: periods.month,
        created_at: Math.round(at),
        resolved_at: null,
      });
      this.addSpend(input.keyId, periods.day, periods.month, input.estimateMicros);
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

  async settle(requestId: string, actual: SettleInput): Promise<SettleResult> {
    return this.immediate(() => {
      const at = actual.atMs ?? this.now();
      const row = this.sql.reservation.get(requestId) as ReservationRow | undefined;
      if (!row) {
        if (actual.keyId === undefined) throw new HerdError('NOT_FOUND', `no reservation for request ${requestId} and no key to charge`);
        if (actual.costMicros === 0) return { state: 'none', actualMicros: 0, changed: false };
        const periods = budgetPeriods(at);
        this.sql.insertReservation.run({
          request_id: requestId,
          key_id: actual.keyId,
          state: 'settled',
          estimate_micros: 0,
          actual_micros: actual.costMicros,
          day_period: periods.day,
          month_period: periods.month,
          created_at: Math.round(at),
          resolved_at: Math.round(at),
        });
        this.addSpend(actual.keyId, periods.day, periods.month, actual.costMicros);
        return { state: 'settled', actualMicros: actual.costMicros, changed: true };
      }
      if (row.state === 'settled') return { state: 'settled', actualMicros: row.actual_micros ?? 0, changed: false };
      // Open: replace the estimate. Released (recover() gave up on it): the charge still counts.
      const delta = actual.costMicros - (row.state === 'open' ? row.estimate_micros : 0);
      this.sql.resolve.run('settled', actual.costMicros, Math.round(at), requestId);
      this.addSpend(row.key_id, row.day_period, row.month_period, delta);
      return { state: 'settled', actualMicros: actual.costMicros, changed: true };
    });
  }

  async release(requestId: string): Promise<ReleaseResult> {
    return this.immediate(() => {
      const row = this.sql.reservation.get(requestId) as ReservationRow | undefined;
      if (!row) return { state: 'none', changed: false };
      if (row.state !== 'open') return { state: row.state, changed: false };
      this.sql.resolve.run('released', null, Math.round(this.now()), requestId);
      this.addSpend(row.key_id, row.day_period, row.month_period, -row.estimate_micros);
      return { state: 'released', changed: true };
    });
  }

  async recover(options: RecoverOptions): Promise<RecoverResult> {
    return this.immediate(() => {
      const now = options.nowMs ?? this.now();
      // First the reservations whose request row committed: the answer went out, so the charge is the row's.
      let settled = 0,
        settledMicros = 0;
      for (const row of this.sql.answered.all() as (ReservationRow & { answered_model: string | null; answered_cost: number })[]) {
        const cost = row.answered_model === null ? 0 : row.answered_cost;
        this.sql.resolve.run(row.answered_model === null ? 'released' : 'settled', row.answered_model === null ? null : cost, Math.round(now), row.request_id);
        this.addSpend(row.key_id, row.day_period, row.month_period, cost - row.estimate_micros);
        if (row.answered_model !== null) {
          settled++;
          settledMicros += cost;
        }
      }
      const rows = this.sql.stale.all(now - options.olderThanMs) as ReservationRow[];
      let releasedMicros = 0;
      for (const row of rows) {
        this.sql.resolve.run('released', null, Math.round(now), row.request_id);
        this.addSpend(row.key_id, row.day_period, row.month_period, -row.estimate_micros);
        releasedMicros += row.estimate_micros;
      }
      return { released: rows.length, releasedMicros, settled, settledMicros };
    });
  }

  async spend(keyId: string, atMs?: number): Promise<Spend> {
    const periods = budgetPeriods(atMs ?? this.now());
    return this.guard(() => this.readSpend(keyId, periods.day, periods.month));
  }

  intend(intent: AttemptIntent): void {
    if (this.closed || !this.spool) return;
    this.queue.intended(intent.requestId, this.spool.intend(intent));
  }

  record(request: RequestRecord, attempts: readonly AttemptRow[]): Promise<void> {
    if (this.closed) throw new HerdError('UNAVAILABLE', `ledger ${this.path} is closed`);
    return this.queue.push(request, attempts);
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    return this.guard(() => {
      let statement = this.sql.usage.get(query.by);
      if (!statement) this.sql.usage.set(query.by, (statement = this.db.prepare(buildUsageQuery('sqlite', query.by))));
      const rows = statement.all(Math.round(query.sinceMs), Math.round(query.untilMs ?? this.now())) as Record<string, unknown>[];
      return rows.map(convertUsageRow);
    });
  }

  stats(): LedgerStats {
    return this.queue.stats();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.queue.close();
    } finally {
      this.spool?.close();
      this.db.close();
    }
  }

  private writeEntries(entries: readonly LedgerEntry[]): void {
    this.guard(() =>
      this.db
        .transaction(() => {
          for (const { request, attempts } of entries) {
            const inline = findInlineAttempt(request, attempts);
            this.sql.insertRequest.run(convertRequestToValues(request, inline));
            if (inline) continue;
            for (const attempt of attempts) this.sql.insertAttempt.run([...convertAttemptToValues(attempt), attempt.requestId]);
          }
        })
        .immediate(),
    );
  }

  private replay(row: ReservationRow, keyId: string): Reservation {
    if (row.key_id !== keyId) throw new HerdError('INVALID_ARG', `request id ${row.request_id} is already reserved by another key`);
    return {
      requestId: row.request_id,
      keyId: row.key_id,
      state: row.state,
      estimateMicros: row.estimate_micros,
      actualMicros: row.actual_micros ?? undefined,
      created: false,
      spent: this.readSpend(row.key_id, row.day_period, row.month_period),
    };
  }

  private readSpend(keyId: string, day: string, month: string): Spend {
    const rows = this.sql.spend.all(keyId, day, month) as { period: string; micros: number }[];
    const find = (period: string) => rows.find((r) => r.period === period)?.micros ?? 0;
    return { dayMicros: find(day), monthMicros: find(month) };
  }

  private addSpend(keyId: string, day: string, month: string, micros: number): void {
    if (micros === 0) return;
    this.sql.addSpend.run(keyId, day, micros);
    this.sql.addSpend.run(keyId, month, micros);
  }

  private immediate<T>(body: () => T): T {
    return this.guard(() => this.db.transaction(body).immediate());
  }

  /** SQLite failures become one UNAVAILABLE error naming the file; HerdErrors (budgets) pass through. */
  private guard<T>(body: () => T): T {
    if (this.closed && !this.db.open) throw new HerdError('UNAVAILABLE', `ledger ${this.path} is closed`);
    try {
      return body();
    } catch (err) {
      if (err instanceof HerdError) throw err;
      throw new HerdError('UNAVAILABLE', `ledger ${this.path} failed: ${messageOf(err)}`, { cause: err });
    }
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
