// The Ledger on a SQLite file (better-sqlite3, WAL), the embedded default: every reservation change
// runs in BEGIN IMMEDIATE, so worker processes sharing the file check and update a key's spend in turn.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { HerdError } from '../../core/errors.ts';
import { applySqliteMigrations } from '../storage/apply-sqlite-migrations.ts';
import type { AlertOutbox } from './alert-outbox.ts';
import type { Micros } from './money.ts';
import { SqliteAlertOutbox } from './sqlite-alert-outbox.ts';
import { SqliteBudgets } from './sqlite-budgets.ts';
import type {
  BudgetLine,
  Ledger,
  LedgerOptions,
  LedgerStats,
  RecoverOptions,
  RecoverResult,
  ReleaseResult,
  Reservation,
  ReserveInput,
  SettleInput,
  SettleResult,
  SettlePartResult,
  Spend,
  UsageGroup,
  UsageQuery,
  UsageRow,
  AttemptRow,
  RequestDetail,
  RequestListQuery,
  RequestPage,
  RequestRecord,
  SpendTotal,
  UsagePage,
  UsagePageQuery,
} from './ledger.ts';
import { LEDGER_SCOPE, ledgerMigrations } from './ledger-migrations.ts';
import { ATTEMPT_COLUMNS, REQUEST_COLUMNS, convertAttemptToValues, convertRequestToValues, convertUsageRow } from './ledger-rows.ts';
import { findInlineAttempt } from './inline-attempt.ts';
import { type AttemptIntent, recoverIntents } from './ledger-intents.ts';
import { LedgerSpool } from './ledger-spool.ts';
import { LedgerWriteQueue, type LedgerEntry } from './ledger-write-queue.ts';
import { buildUsageQuery } from './usage-query.ts';
import { convertRowToAttempt, convertRowToRequest, convertRowToSpendTotal } from './ledger-read-rows.ts';
import { checkTime, createBinder } from './page-cursor.ts';
import { buildDailyUpsert } from './ledger-daily.ts';
import { assembleRequestPage, buildRequestDetailQueries, buildRequestListQuery } from './request-list-query.ts';
import { assembleUsagePage, buildSpendTotalsQuery, buildUsagePageQuery } from './usage-page-query.ts';

export interface SqliteLedgerOptions extends LedgerOptions {
  /**
   * NORMAL (default) syncs the WAL at checkpoints, not at every commit: a process crash loses
   * nothing, a power cut may lose the last commits. FULL also survives power loss, at an fsync per reservation.
   */
  synchronous?: 'NORMAL' | 'FULL';
}

export class SqliteLedger implements Ledger {
  readonly kind = 'sqlite' as const;
  readonly path: string;
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly queue: LedgerWriteQueue;
  private readonly sql;
  private readonly budgets: SqliteBudgets;
  private outbox: SqliteAlertOutbox | undefined;
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
    this.budgets = new SqliteBudgets(db);
    this.sql = {
      insertRequest: insert('ledger_requests', REQUEST_COLUMNS),
      // Never beside an attempt already inline in its request row (a recovered intent replayed after the
      // request's own row): one attempt, one row, whichever table holds it.
      insertAttempt: db.prepare(`INSERT INTO ledger_attempts (${ATTEMPT_COLUMNS.join(', ')}) SELECT ${ATTEMPT_COLUMNS.map(() => '?').join(', ')}
        WHERE NOT EXISTS (SELECT 1 FROM ledger_requests WHERE request_id = ? AND attempt_outcome IS NOT NULL) ON CONFLICT DO NOTHING`),
      // The rollup of the rows this batch inserted (ids as a JSON array): one upsert per (day, group).
      rollUp: db.prepare(buildDailyUpsert('ledger_requests', 'request_id IN (SELECT value FROM json_each(?))')),
      usage: new Map<UsageGroup, Database.Statement>(),
      spendTotals: undefined as Database.Statement | undefined,
    };
    this.queue = new LedgerWriteQueue({
      write: async (entries) => this.writeEntries(entries),
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      maxBatchRows: options.maxBatchRows ?? 500,
      onError: options.onError,
    });
  }

  async reserve(input: ReserveInput): Promise<Reservation> {
    return this.immediate(() => this.budgets.reserve(input, input.atMs ?? this.now()));
  }

  async settle(requestId: string, actual: SettleInput): Promise<SettleResult> {
    return this.immediate(() => this.budgets.settle(requestId, actual, actual.atMs ?? this.now()));
  }

  async settlePart(reservationId: string, lineRequestId: string, costMicros: Micros, atMs?: number): Promise<SettlePartResult> {
    return this.immediate(() => this.budgets.settlePart(reservationId, lineRequestId, costMicros, atMs ?? this.now()));
  }

  async release(requestId: string): Promise<ReleaseResult> {
    return this.immediate(() => this.budgets.release(requestId, this.now()));
  }

  async recover(options: RecoverOptions): Promise<RecoverResult> {
    return this.immediate(() => this.budgets.recover(options.nowMs ?? this.now(), options.olderThanMs));
  }

  async budgetSpend(lines: readonly BudgetLine[]): Promise<Micros[]> {
    return this.guard(() => this.db.transaction(() => this.budgets.budgetSpend(lines))());
  }

  async spend(keyId: string, atMs?: number): Promise<Spend> {
    return this.guard(() => this.budgets.spend(keyId, atMs ?? this.now()));
  }

  alertOutbox(): AlertOutbox {
    this.outbox ??= new SqliteAlertOutbox(this.db, (body) => this.immediate(body));
    return this.outbox;
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

  // The console's queries: one statement per page (the SQL is shared with PostgreSQL).
  async usagePage(query: UsagePageQuery): Promise<UsagePage> {
    return this.guard(() => {
      const { sql, params } = buildUsagePageQuery('sqlite', query, query.untilMs ?? this.now());
      return assembleUsagePage(this.db.prepare(sql).all(params) as Record<string, unknown>[], query);
    });
  }

  async spendTotals(sinceMs: number, untilMs: number): Promise<SpendTotal[]> {
    checkTime('since', sinceMs);
    checkTime('until', untilMs);
    return this.guard(() => {
      const { sql, params } = buildSpendTotalsQuery('sqlite', sinceMs, untilMs);
      this.sql.spendTotals ??= this.db.prepare(sql);
      return (this.sql.spendTotals.all(params) as Record<string, unknown>[]).map(convertRowToSpendTotal);
    });
  }

  async listRequests(query: RequestListQuery): Promise<RequestPage> {
    return this.guard(() => {
      const { sql, params } = buildRequestListQuery('sqlite', query);
      return assembleRequestPage(this.db.prepare(sql).all(params) as Record<string, unknown>[], query.limit);
    });
  }

  async getRequest(requestId: string): Promise<RequestDetail | undefined> {
    return this.guard(() => {
      const detail = buildRequestDetailQueries('sqlite');
      return this.db.transaction(() => {
        const row = this.db.prepare(detail.request).get(requestId) as Record<string, unknown> | undefined;
        if (row === undefined) return undefined;
        const attempts = this.db.prepare(detail.attempts).all(requestId) as Record<string, unknown>[];
        return { request: convertRowToRequest(row), attempts: attempts.map(convertRowToAttempt) };
      })();
    });
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    return this.guard(() => {
      // The text depends on the grouping alone (the range is all parameters): one statement per grouping.
      const { params, bind } = createBinder('sqlite');
      const sql = buildUsageQuery('sqlite', query.by, bind, query.sinceMs, query.untilMs ?? this.now());
      let statement = this.sql.usage.get(query.by);
      if (!statement) this.sql.usage.set(query.by, (statement = this.db.prepare(sql)));
      const rows = statement.all(params) as Record<string, unknown>[];
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
          // Only rows actually inserted are rolled up: a replayed batch (spool, recovered intents) adds nothing twice.
          const inserted: string[] = [];
          for (const { request, attempts } of entries) {
            const inline = findInlineAttempt(request, attempts);
            if (this.sql.insertRequest.run(convertRequestToValues(request, inline)).changes === 1) inserted.push(request.requestId);
            if (inline) continue;
            for (const attempt of attempts) this.sql.insertAttempt.run([...convertAttemptToValues(attempt), attempt.requestId]);
          }
          if (inserted.length > 0) this.sql.rollUp.run(JSON.stringify(inserted));
        })
        .immediate(),
    );
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
