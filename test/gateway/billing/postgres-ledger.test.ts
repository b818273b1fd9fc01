// The ledger contract on PostgreSQL (runs when DATABASE_URL is set, as CI always sets it), plus
// what only PostgreSQL has: replicas migrating at once, and a URL's password never in an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HerdError } from '../../../src/core/errors.ts';
import { openLedger } from '../../../src/gateway/billing/open-ledger.ts';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { runLedgerContract } from './ledger-contract.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';

const skip = skipWithoutPostgres('postgres-ledger.test.ts (PostgreSQL ledger contract)');

test('PostgreSQL ledger contract', { skip }, async (t) => {
  const schema = uniqueSchema('herd_ledger_test');
  t.after(() => dropSchema(schema));
  await runLedgerContract(t, (options) => PostgresLedger.open({ ...options, url: DATABASE_URL as string, schema, poolSize: 4 }));
});

test('replicas starting together migrate once', { skip }, async (t) => {
  const schema = uniqueSchema('herd_ledger_migrate');
  t.after(() => dropSchema(schema));
  const ledgers = await Promise.all([1, 2, 3].map(() => openLedger(DATABASE_URL as string, { schema })));
  try {
    assert.deepEqual(
      ledgers.map((l) => l.kind),
      ['postgres', 'postgres', 'postgres'],
    );
    const spend = await ledgers[0]!.spend('nobody');
    assert.deepEqual(spend, { dayMicros: 0, monthMicros: 0 });
  } finally {
    await Promise.all(ledgers.map((l) => l.close()));
  }
});

test('a bad password or host fails with UNAVAILABLE and never shows the URL', { skip }, async () => {
  const url = new URL(DATABASE_URL as string);
  url.password = 'hunter2-secret';
  url.port = '1';
  await assert.rejects(
    PostgresLedger.open({ url: url.toString(), schema: uniqueSchema('never') }),
    (err: HerdError) => err.code === 'UNAVAILABLE' && /cannot open the PostgreSQL ledger/.test(err.message) && !err.message.includes('hunter2'),
  );
});
