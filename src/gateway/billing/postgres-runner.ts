// How the PostgreSQL ledger talks to its pool: one statement or one BEGIN … COMMIT, retried on the
// failures a retry fixes, every other failure turned into HerdError UNAVAILABLE.
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { HerdError } from '../../core/errors.ts';

const RETRYABLE = new Set(['40001', '40P01', '23505']); // serialization failure, deadlock, a racing duplicate insert

export class PostgresRunner {
  /** `isClosed` tells a transaction on a closed ledger from one on a pool that merely failed. */
  constructor(
    readonly pool: Pool,
    private readonly isClosed: () => boolean,
  ) {}

  /** One statement (its own transaction), retried like a transaction. */
  async statement<R extends QueryResultRow>(sql: string, params: unknown[]): Promise<QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pool.query<R>(sql, params);
      } catch (err) {
        if (attempt < 5 && RETRYABLE.has((err as { code?: string }).code ?? '')) continue;
        throw asUnavailable(err);
      }
    }
  }

  /** BEGIN … COMMIT on one pooled connection; retried (up to 5 times) on deadlock, serialization failure or a racing insert. */
  async transaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.isClosed() && this.pool.ended) throw new HerdError('UNAVAILABLE', 'the PostgreSQL ledger is closed');
    for (let attempt = 1; ; attempt++) {
      const client = await this.guard(() => this.pool.connect());
      let broken: Error | undefined;
      // A connection cut mid-transaction also emits 'error' on the client: the failing query reports it.
      const onError = (err: Error) => {
        broken = err;
      };
      client.on('error', onError);
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
        throw asUnavailable(err);
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    }
  }

  async guard<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (err) {
      throw asUnavailable(err);
    }
  }
}

function asUnavailable(err: unknown): HerdError {
  if (err instanceof HerdError) return err;
  return new HerdError('UNAVAILABLE', `the PostgreSQL ledger failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
