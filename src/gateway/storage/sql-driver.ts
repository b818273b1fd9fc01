// One small SQL interface over SQLite (better-sqlite3) and PostgreSQL (pg), so a store is written once:
// `?` placeholders everywhere (translated for pg), plain rows back, transactions that may span awaits.
import { HerdError } from '../../core/errors.ts';

/** Buffers are BLOB (SQLite) or BYTEA (PostgreSQL). */
export type SqlValue = string | number | null | Buffer;
/** A result row; callers name its columns. */
export type SqlRow = object;

/** Runs statements; inside a transaction, on that transaction. */
export interface SqlRunner {
  query<T extends SqlRow = SqlRow>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** PostgreSQL: `pg_notify(channel, payload)`, delivered at commit; SQLite: nothing (readers poll data_version). */
  notify(channel: string, payload: string): Promise<void>;
  /** PostgreSQL: a transaction-scoped advisory lock; SQLite: nothing (a write transaction already excludes every other writer). */
  lockExclusive(lockId: number): Promise<void>;
}

export interface SqlDriver extends SqlRunner {
  readonly kind: 'sqlite' | 'postgres';
  /** For messages: a path, or the PostgreSQL URL without credentials. */
  readonly location: string;
  /** Runs `body` in one write transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(body: (tx: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** `?` → `$1, $2 …` for pg. The statements this is used on hold no `?` inside string literals. */
export function translatePlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** A driver failure as one UNAVAILABLE naming the store (`key store /path`); drivers' messages carry no values. */
export function wrapStoreFailure(store: string, err: unknown): HerdError {
  if (err instanceof HerdError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new HerdError('UNAVAILABLE', `${store} failed: ${message}`, { cause: err });
}

/** A unique-constraint violation from either engine (SQLITE_CONSTRAINT_UNIQUE, SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  let current: unknown = err;
  for (let i = 0; i < 3 && current !== undefined && current !== null; i++) {
    const code = (current as { code?: unknown }).code;
    if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
