// One key store test, run on SQLite (a temp file) and on PostgreSQL (a schema of its own, dropped after;
// skipped without DATABASE_URL), with a raw SQL handle for editing rows behind the store's back.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { ChangeContext, KeyStore } from '../../../src/gateway/keys/key-store.ts';
import { openKeyStore, type OpenKeyStoreOptions } from '../../../src/gateway/keys/open-key-store.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from '../billing/pg-test-schema.ts';

export interface StoreHarness {
  kind: 'sqlite' | 'postgres';
  /** What openKeyStore takes. */
  location: string;
  schema: string | undefined;
  open(options?: OpenKeyStoreOptions): Promise<KeyStore>;
  /** Plain SQL beside the store (`?` placeholders); rows as the driver returns them. */
  sql(statement: string, params?: readonly (string | number | null)[]): Promise<Record<string, unknown>[]>;
}

export const ctx: ChangeContext = { actor: { id: 'cli@test', name: 'tester', role: 'admin' }, requestId: 'req-1', sourceIp: '127.0.0.1' };

export function testBothEngines(name: string, body: (h: StoreHarness) => Promise<void>): void {
  test(`${name} (sqlite)`, async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'herd-key-store-')), 'nested', 'herd.db');
    await body({
      kind: 'sqlite',
      location: `sqlite:${file}`,
      schema: undefined,
      open: (options = {}) => openKeyStore(`sqlite:${file}`, options),
      sql: async (statement, params = []) => {
        const db = new Database(file);
        try {
          const s = db.prepare(statement);
          if (s.reader) return s.all(...params) as Record<string, unknown>[];
          s.run(...params);
          return [];
        } finally {
          db.close();
        }
      },
    });
  });
  test(`${name} (postgres)`, { skip: skipWithoutPostgres('key store on PostgreSQL') }, async () => {
    const schema = uniqueSchema('h_store');
    const url = DATABASE_URL as string;
    const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
    try {
      await body({
        kind: 'postgres',
        location: url,
        schema,
        open: (options = {}) => openKeyStore(url, { schema, ...options }),
        sql: async (statement, params = []) => {
          let n = 0;
          return (
            await pool.query(
              statement.replace(/\?/g, () => `$${++n}`),
              [...params],
            )
          ).rows;
        },
      });
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
}
