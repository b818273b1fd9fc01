// SqlDriver on one better-sqlite3 connection (WAL): a transaction spanning awaits holds a per-file mutex (two connections
// of one process cannot deadlock the thread) and BEGIN IMMEDIATE's write lock (other processes wait, busy_timeout).
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { HerdError } from '../../core/errors.ts';
import { applySqliteMigrations, type SqliteMigration } from './apply-sqlite-migrations.ts';
import { type SqlDriver, type SqlRow, type SqlRunner, type SqlValue, wrapStoreFailure } from './sql-driver.ts';

export interface SqliteDriverOptions {
  /** What the file holds, for messages ('key store'). */
  label: string;
  /** Fail instead of creating the file. */
  mustExist?: boolean;
  migrations?: { scope: string; list: readonly SqliteMigration[] };
}

export class SqliteDriver implements SqlDriver {
  readonly kind = 'sqlite' as const;
  readonly location: string;
  private readonly label: string;
  private readonly db: Database.Database;
  private readonly dataVersionStatement: Database.Statement;
  /**
   * The tails of the queues of statements and transactions, one per file. A second connection's BEGIN
   * IMMEDIATE waiting (synchronously, busy_timeout) on a transaction of this process that is between two
   * awaits would block the very thread that must finish it; queueing per file keeps that from happening.
   */
  private static readonly tails = new Map<string, Promise<unknown>>();
  private readonly statements = new Map<string, Database.Statement>();
  private closed = false;

  static open(file: string, options: SqliteDriverOptions): SqliteDriver {
    const path = resolve(file);
    if (options.mustExist && !existsSync(path)) throw new HerdError('NOT_FOUND', `${options.label} ${path} does not exist`);
    let db: Database.Database | undefined;
    try {
      if (!options.mustExist) mkdirSync(dirname(path), { recursive: true });
      db = new Database(path, { fileMustExist: options.mustExist ?? false, timeout: 5000 });
      db.pragma('journal_mode = WAL');
      if (options.migrations) applySqliteMigrations(db, options.migrations.scope, options.migrations.list);
    } catch (err) {
      db?.close();
      if (err instanceof HerdError) throw err;
      throw new HerdError('UNAVAILABLE', `cannot open ${options.label} ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return new SqliteDriver(db, path, options.label);
  }

  private constructor(db: Database.Database, path: string, label: string) {
    this.db = db;
    this.location = path;
    this.label = label;
    this.dataVersionStatement = db.prepare('PRAGMA data_version').pluck();
  }

  /** True while a transaction is open on the connection: a synchronous reader must not look now. */
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** Moves whenever another connection commits (no I/O: the connection's own state). */
  dataVersion(): number {
    return this.guard(() => this.dataVersionStatement.get() as number);
  }

  /** For the rare synchronous reader (a lookup that must see another process's commit now). */
  querySync<T extends SqlRow = SqlRow>(sql: string, params: readonly SqlValue[] = []): T[] {
    return this.guard(() => this.run<T>(sql, params));
  }

  query<T extends SqlRow = SqlRow>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.serialize(async () => this.guard(() => this.run<T>(sql, params)));
  }

  async notify(): Promise<void> {}

  async lockExclusive(): Promise<void> {}

  transaction<T>(body: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.serialize(async () => {
      this.guard(() => this.db.exec('BEGIN IMMEDIATE'));
      const tx: SqlRunner = {
        query: async <R extends SqlRow = SqlRow>(sql: string, params: readonly SqlValue[] = []) => this.guard(() => this.run<R>(sql, params)),
        notify: async () => undefined,
        lockExclusive: async () => undefined,
      };
      try {
        const result = await body(tx);
        this.guard(() => this.db.exec('COMMIT'));
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    await (SqliteDriver.tails.get(this.location) ?? Promise.resolve()).catch(() => undefined);
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private run<T>(sql: string, params: readonly SqlValue[]): T[] {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    if (statement.reader) return statement.all(...params) as T[];
    statement.run(...params);
    return [];
  }

  private serialize<T>(step: () => Promise<T>): Promise<T> {
    const tail = SqliteDriver.tails.get(this.location) ?? Promise.resolve();
    const next = tail.then(step, step);
    const settled = next.catch(() => undefined);
    SqliteDriver.tails.set(this.location, settled);
    // The map holds a file's entry only while work is queued on it.
    void settled.then(() => {
      if (SqliteDriver.tails.get(this.location) === settled) SqliteDriver.tails.delete(this.location);
    });
    return next;
  }

  private guard<T>(body: () => T): T {
    if (this.closed) throw new HerdError('UNAVAILABLE', `${this.label} ${this.location} is closed`);
    try {
      return body();
    } catch (err) {
      throw wrapStoreFailure(`${this.label} ${this.location}`, err);
    }
  }
}
