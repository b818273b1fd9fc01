// A ledger database seen from outside, for SQLite and PostgreSQL alike: open a Ledger on it, read it with
// plain SQL, and write rows the way the ledger wrote them before a given schema version.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { applyPostgresMigrations } from '../../../src/gateway/storage/apply-postgres-migrations.ts';
import type { Ledger, LedgerOptions } from '../../../src/gateway/billing/ledger.ts';
import { LEDGER_SCOPE, ledgerMigrations } from '../../../src/gateway/billing/ledger-migrations.ts';
import { ATTEMPT_COLUMNS, REQUEST_COLUMNS, convertAttemptToValues, convertRequestToValues, type DbValue } from '../../../src/gateway/billing/ledger-rows.ts';
import type { LedgerEntry } from '../../../src/gateway/billing/ledger-write-queue.ts';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { applySqliteMigrations } from '../../../src/gateway/storage/apply-sqlite-migrations.ts';
import { DATABASE_URL, dropSchema, uniqueSchema } from './pg-test-schema.ts';

export type Row = Record<string, string | null>;

export interface LedgerHarness {
  readonly kind: 'sqlite' | 'postgres';
  /** Location for openLedger / `herd usage --ledger` (SQLite only; PostgreSQL tests pass the schema). */
  readonly location: string;
  open(options?: LedgerOptions): Promise<Ledger>;
  /** Every value as text (NULL stays null), so both drivers compare alike. */
  query(sql: string): Promise<Row[]>;
  /** Creates the schema at `version` and inserts the entries as that version's ledger did: every attempt in ledger_attempts. */
  writeAsVersion(version: number, entries: readonly LedgerEntry[]): Promise<void>;
  close(): Promise<void>;
}

const asText = (row: Record<string, unknown>): Row => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null || v === undefined ? null : String(v)]));

/** Columns a request row had at `version` (migration 4 added the inline attempt, 5 the route rule and two token figures). */
const requestColumnsAt = (version: number) =>
  version >= 5 ? REQUEST_COLUMNS.length : version === 4 ? REQUEST_COLUMNS.indexOf('route_rule') : REQUEST_COLUMNS.indexOf('attempt_model');

export function createSqliteHarness(): LedgerHarness {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-ledger-harness-')), 'herd.db');
  return {
    kind: 'sqlite',
    location: `sqlite:${file}`,
    open: async (options = {}) => SqliteLedger.open(file, options),
    query: async (sql) => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare(sql).all() as Record<string, unknown>[]).map(asText);
      } finally {
        db.close();
      }
    },
    writeAsVersion: async (version, entries) => {
      const db = new Database(file);
      try {
        applySqliteMigrations(db, LEDGER_SCOPE, ledgerMigrations.slice(0, version));
        const n = requestColumnsAt(version);
        const insertRequest = db.prepare(`INSERT INTO ledger_requests (${REQUEST_COLUMNS.slice(0, n).join(', ')}) VALUES (${Array(n).fill('?').join(', ')})`);
        const insertAttempt = db.prepare(`INSERT INTO ledger_attempts (${ATTEMPT_COLUMNS.join(', ')}) VALUES (${ATTEMPT_COLUMNS.map(() => '?').join(', ')})`);
        db.transaction(() => {
          for (const e of entries) {
            insertRequest.run(convertRequestToValues(e.request).slice(0, n));
            for (const a of e.attempts) insertAttempt.run(convertAttemptToValues(a));
          }
        })();
      } finally {
        db.close();
      }
    },
    close: async () => undefined,
  };
}

export function createPostgresHarness(prefix: string): LedgerHarness {
  const schema = uniqueSchema(prefix);
  const url = DATABASE_URL as string;
  const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
  const placeholders = (count: number) => Array.from({ length: count }, (_, i) => `$${i + 1}`).join(', ');
  return {
    kind: 'postgres',
    location: url,
    open: async (options = {}) => PostgresLedger.open({ ...options, url, schema, poolSize: 2 }),
    query: async (sql) => (await pool.query(sql)).rows.map(asText),
    writeAsVersion: async (version, entries) => {
      await applyPostgresMigrations(pool, LEDGER_SCOPE, ledgerMigrations.slice(0, version), schema);
      const n = requestColumnsAt(version);
      for (const e of entries) {
        await pool.query(
          `INSERT INTO ledger_requests (${REQUEST_COLUMNS.slice(0, n).join(', ')}) VALUES (${placeholders(n)})`,
          convertRequestToValues(e.request).slice(0, n) as DbValue[],
        );
        for (const a of e.attempts) {
          await pool.query(`INSERT INTO ledger_attempts (${ATTEMPT_COLUMNS.join(', ')}) VALUES (${placeholders(ATTEMPT_COLUMNS.length)})`, convertAttemptToValues(a));
        }
      }
    },
    close: async () => {
      await pool.end();
      await dropSchema(schema);
    },
  };
}
