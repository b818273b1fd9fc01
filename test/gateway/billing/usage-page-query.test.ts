// usagePage and spendTotals on a real SQLite file and on PostgreSQL (DATABASE_URL): ordering, keyset pages,
// the window count of all groups, totals per currency.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { runUsagePageContract } from './ledger-console-contract.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';

test('SQLite: usagePage and spendTotals', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-ledger-usage-')), 'herd.db');
  await runUsagePageContract(t, async (options) => SqliteLedger.open(file, options));
});

test('PostgreSQL: usagePage and spendTotals', { skip: skipWithoutPostgres('usage-page-query.test.ts (PostgreSQL)') }, async (t) => {
  const schema = uniqueSchema('h_ledger_usage_page');
  t.after(() => dropSchema(schema));
  await runUsagePageContract(t, (options) => PostgresLedger.open({ ...options, url: DATABASE_URL as string, schema, poolSize: 2 }));
});
