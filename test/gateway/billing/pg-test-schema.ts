// PostgreSQL test isolation: DATABASE_URL or a skip reason, and a schema unique to this process and
// moment, dropped afterwards, so test files running in parallel never share tables.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DATABASE_URL = process.env.DATABASE_URL;

/** The reason to skip a PostgreSQL suite, or false when it can run. */
export function skipWithoutPostgres(suite: string): string | false {
  return DATABASE_URL ? false : `${suite} skipped: DATABASE_URL is not set (e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)`;
}

export function uniqueSchema(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
