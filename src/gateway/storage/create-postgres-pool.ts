// A PostgreSQL connection pool (the ledger's, the key store's): every wait bounded (connect, statement on
// the server and on the client), the tables' schema on the search path, idle-connection errors reported.
import pg from 'pg';
import type { Pool } from 'pg';

export interface PostgresPoolOptions {
  url: string;
  schema?: string;
  poolSize?: number;
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
  onError?: (error: unknown) => void;
}

/** `schema` must already be checked as an identifier. */
export function createPostgresPool(options: PostgresPoolOptions): Pool {
  const schema = options.schema;
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
  return pool;
}
