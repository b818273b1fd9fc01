// SqlDriver on a pg Pool: `?` placeholders translated, transactions on one pooled client, notifications
// with pg_notify (sent at commit, so a listener never hears of a change it cannot yet read).
import type { Pool, PoolClient } from 'pg';
import { applyPostgresMigrations, quoteIdentifier } from './apply-postgres-migrations.ts';
import type { SqliteMigration } from './apply-sqlite-migrations.ts';
import { createPostgresPool, type PostgresPoolOptions } from './create-postgres-pool.ts';
import { describePostgresUrl } from './describe-postgres-failure.ts';
import { type SqlDriver, type SqlRow, type SqlRunner, type SqlValue, translatePlaceholders, wrapStoreFailure } from './sql-driver.ts';

export interface PostgresDriverOptions extends PostgresPoolOptions {
  /** What the database holds, for messages ('key store'). */
  label: string;
  /** The config field the URL came from, for a malformed-URL message. */
  param: string;
  migrations?: { scope: string; list: readonly SqliteMigration[] };
}

export class PostgresDriver implements SqlDriver {
  readonly kind = 'postgres' as const;
  /** The URL without its password. */
  readonly location: string;
  readonly pool: Pool;
  private readonly name: string;

  /** Connects and migrates; a database that cannot be reached is an UNAVAILABLE naming it. */
  static async open(options: PostgresDriverOptions): Promise<PostgresDriver> {
    const location = describePostgresUrl(options.url, options.param);
    if (options.schema !== undefined) quoteIdentifier(options.schema);
    const pool = createPostgresPool(options);
    const driver = new PostgresDriver(pool, location, options.label);
    try {
      if (options.migrations) await applyPostgresMigrations(pool, options.migrations.scope, options.migrations.list, options.schema);
      else await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw wrapStoreFailure(`${options.label} ${location}`, err);
    }
    return driver;
  }

  private constructor(pool: Pool, location: string, label: string) {
    this.pool = pool;
    this.location = location;
    this.name = `${label} ${location}`;
  }

  async query<T extends SqlRow = SqlRow>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    try {
      return (await this.pool.query<T>(translatePlaceholders(sql), [...params])).rows;
    } catch (err) {
      throw wrapStoreFailure(this.name, err);
    }
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.query('SELECT pg_notify(?, ?)', [channel, payload]);
  }

  async lockExclusive(lockId: number): Promise<void> {
    await this.query('SELECT pg_advisory_xact_lock(?)', [lockId]);
  }

  async transaction<T>(body: (tx: SqlRunner) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw wrapStoreFailure(this.name, err);
    }
    const run = async <R extends SqlRow = SqlRow>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> => {
      try {
        return (await client.query<R>(translatePlaceholders(sql), [...params])).rows;
      } catch (err) {
        throw wrapStoreFailure(this.name, err);
      }
    };
    const tx: SqlRunner = {
      query: run,
      notify: async (channel, payload) => {
        await run('SELECT pg_notify(?, ?)', [channel, payload]);
      },
      lockExclusive: async (lockId) => {
        await run('SELECT pg_advisory_xact_lock(?)', [lockId]);
      },
    };
    try {
      await run('BEGIN');
      const result = await body(tx);
      await run('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
