// listRequests and getRequest on a real SQLite file and on PostgreSQL (DATABASE_URL), and the SQLite
// query plans: every filtered list reads through an index, never the whole table.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { buildRequestListQuery } from '../../../src/gateway/billing/request-list-query.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { FILTERS, runRequestListContract, seedConsoleRows } from './ledger-console-contract.ts';
import { encodeRequestCursor } from '../../../src/gateway/billing/request-list-query.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'herd-ledger-list-')), 'herd.db');

test('SQLite: listRequests and getRequest', async (t) => {
  const file = tempFile();
  await runRequestListContract(t, async (options) => SqliteLedger.open(file, options));
});

test('PostgreSQL: listRequests and getRequest', { skip: skipWithoutPostgres('request-list-query.test.ts (PostgreSQL)') }, async (t) => {
  const schema = uniqueSchema('h_ledger_list');
  t.after(() => dropSchema(schema));
  await runRequestListContract(t, (options) => PostgresLedger.open({ ...options, url: DATABASE_URL as string, schema, poolSize: 2 }));
});

test('SQLite: each filtered list, first page and a cursor page, is read through an index', async () => {
  const file = tempFile();
  const ledger = SqliteLedger.open(file);
  await seedConsoleRows(ledger);
  await ledger.close();
  const db = new Database(file, { readonly: true });
  try {
    const cursor = encodeRequestCursor({ startedAt: Date.parse('2026-05-20T10:05:00Z'), requestId: 'req-020' });
    for (const filter of FILTERS) {
      for (const page of [{ limit: 50 }, { limit: 50, cursor }]) {
        const { sql, params } = buildRequestListQuery('sqlite', { ...filter, ...page });
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail);
        const where = `${JSON.stringify(filter)} ${page.cursor ? 'cursor' : 'first'}: ${plan.join(' / ')}`;
        assert.ok(!plan.some((d) => /^SCAN ledger_requests$/.test(d)), `no full scan: ${where}`);
        assert.ok(
          plan.some((d) => /USING (COVERING )?INDEX ledger_requests_|USING INDEX sqlite_autoindex_ledger_requests/.test(d)),
          `an index: ${where}`,
        );
      }
    }
    // The partial index holds failures alone; the model filter's two branches each seek their own index.
    const plan = (f: Parameters<typeof buildRequestListQuery>[1]) => {
      const { sql, params } = buildRequestListQuery('sqlite', f);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail).join(' / ');
    };
    assert.match(plan({ limit: 50, status: 'error' }), /ledger_requests_failed_started/);
    assert.match(plan({ limit: 50, status: 'RATE_LIMITED' }), /ledger_requests_failed_started/);
    assert.match(plan({ limit: 50, dialect: 'anthropic-messages' }), /ledger_requests_dialect_started/);
    assert.match(plan({ limit: 50, model: 'gpt-4.1' }), /ledger_requests_model_started.*ledger_requests_requested_started/);
  } finally {
    db.close();
  }
});
