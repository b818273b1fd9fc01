// The ledger contract on PostgreSQL (runs when DATABASE_URL is set, as CI always sets it), plus
// what only PostgreSQL has: replicas migrating at once, a URL's password never in an error, and an outage
// ridden out in the local spool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { BillingService } from '../../../src/gateway/billing/billing-service.ts';
import { openLedger } from '../../../src/gateway/billing/open-ledger.ts';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startTcpFaultProxy, targetOf, throughProxy } from '../../helpers/tcp-fault-proxy.ts';
import { billingTestConfig } from './billing-fixtures.ts';
import { dayMonthLines } from './budget-fixtures.ts';
import { runLedgerContract, sampleRequest } from './ledger-contract.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';

const skip = skipWithoutPostgres('postgres-ledger.test.ts (PostgreSQL ledger contract)');

test('PostgreSQL ledger contract', { skip }, async (t) => {
  const schema = uniqueSchema('h_budget_ledger');
  t.after(() => dropSchema(schema));
  await runLedgerContract(
    t,
    (options) => PostgresLedger.open({ ...options, url: DATABASE_URL as string, schema, poolSize: 4 }),
    async (sql) => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        await client.query(`SET search_path TO "${schema}"`);
        await client.query(sql);
      } finally {
        await client.end();
      }
    },
  );
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

test('rows spooled while the database is unreachable reach it once, in order: by the same process, or by the next one', { skip }, async (t) => {
  const schema = uniqueSchema('herd_ledger_spool');
  t.after(() => dropSchema(schema));
  const proxy = await startTcpFaultProxy(targetOf(DATABASE_URL as string, 5432));
  t.after(() => proxy.close());
  const spoolDir = mkdtempSync(join(tmpdir(), 'herd-pg-spool-'));
  const cutOff = await PostgresLedger.open({ url: throughProxy(DATABASE_URL as string, proxy), schema, spoolDir, flushIntervalMs: 20, connectTimeoutMs: 300, queryTimeoutMs: 300 });
  proxy.cut('refuse');
  const ids = ['s1', 's2', 's3', 's4'];
  // Durable once spooled: none of these waits for the database.
  await Promise.all(ids.map((id) => cutOff.record(sampleRequest({ requestId: id }), [])));
  for (let i = 0; i < 100 && cutOff.stats().failedFlushes === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cutOff.stats().failedFlushes >= 1, 'the database write failed');
  assert.equal(cutOff.stats().behindRows, 4);

  // As if the process had died now: the next one (same folder) writes the spool before anything else.
  const next = await PostgresLedger.open({ url: DATABASE_URL as string, schema, spoolDir });
  const rows = await readRequestIds(schema);
  assert.deepEqual(rows, ids, 'every spooled row, in order');
  await next.close();
  // The cut-off process, back in touch, writes them again: ignored, nothing twice.
  proxy.restore();
  await cutOff.close();
  assert.deepEqual(await readRequestIds(schema), ids);
});

async function readRequestIds(schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string }>(`SELECT request_id FROM "${schema}".ledger_requests ORDER BY xmin::text::bigint, request_id`);
    return rows.map((r) => r.request_id);
  } finally {
    await client.end();
  }
}

test('a release that failed while the database was unreachable is retried until it lands: the hold does not outlive the outage', { skip }, async (t) => {
  const schema = uniqueSchema('herd_ledger_retry');
  t.after(() => dropSchema(schema));
  const proxy = await startTcpFaultProxy(targetOf(DATABASE_URL as string, 5432));
  t.after(() => proxy.close());
  const spoolDir = mkdtempSync(join(tmpdir(), 'herd-pg-retry-'));
  const ledger = await PostgresLedger.open({ url: throughProxy(DATABASE_URL as string, proxy), schema, spoolDir, flushIntervalMs: 20, connectTimeoutMs: 300, queryTimeoutMs: 300 });
  t.after(() => ledger.close());
  const billing = new BillingService({ config: billingTestConfig(), ledger });
  await billing.reserve({ keyId: 'key_r', requestId: 'r-1', estimateMicros: 5_000, lines: dayMonthLines('key_r', { dayMicros: 1_000_000 }, Date.now()) });
  assert.equal((await ledger.spend('key_r')).dayMicros, 5_000);

  proxy.cut('refuse');
  const finishing = billing.finish({
    requestId: 'r-1',
    key: { id: 'key_r' },
    requestedModel: 'gpt4',
    startedAt: Date.now(),
    outcome: 'error',
    error: new HerdError('UPSTREAM_TIMEOUT', 'no answer'),
  });
  await assert.rejects(finishing, (e: HerdError) => e.code === 'UNAVAILABLE');
  assert.equal(billing.pendingSettlements(), 1);

  proxy.restore();
  for (let i = 0; i < 200 && billing.pendingSettlements() > 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(billing.pendingSettlements(), 0, 'retried once the database answered');
  assert.equal((await ledger.spend('key_r')).dayMicros, 0, 'the hold is released');
});
