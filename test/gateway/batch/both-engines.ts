// Runs a batch store test on SQLite (a temp file) and on PostgreSQL (a throwaway schema; skipped without DATABASE_URL).
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchStore } from '../../../src/gateway/batch/batch-store.ts';
import { openBatchStore } from '../../../src/gateway/batch/open-batch-store.ts';
import { openLedger } from '../../../src/gateway/billing/open-ledger.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from '../billing/pg-test-schema.ts';

/** `withLedger`: SQLite opens a real ledger in the same file first (the batch scope's migrations leave the ledger's alone). */
export function bothEngines(name: string, body: (store: BatchStore) => Promise<void>, options: { withLedger?: boolean } = {}): void {
  test(`${name} (sqlite)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-batch-store-'));
    const ledger = options.withLedger === true ? await openLedger(`sqlite:${join(dir, 'herd.db')}`) : undefined;
    const store = await openBatchStore(`sqlite:${join(dir, 'herd.db')}`);
    try {
      await body(store);
    } finally {
      await store.close();
      await ledger?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  test(`${name} (postgres)`, { skip: skipWithoutPostgres('batch store on PostgreSQL') }, async () => {
    const schema = uniqueSchema('h_batch');
    const store = await openBatchStore(DATABASE_URL as string, { schema, poolSize: 2 });
    try {
      await body(store);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  });
}
