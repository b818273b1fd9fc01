// Measures what the ledger costs the request path (numbers go to the test diagnostics): record() is
// an in-memory append; rows written in batches vs one transaction per request; and the synchronous
// reserve + settle pair every budgeted request pays. Asserts only the broad shape, not the machine.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Ledger } from '../../../src/gateway/billing/ledger.ts';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { sampleAttempt, sampleRequest } from './ledger-contract.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';
import { dayMonthLines } from './budget-fixtures.ts';

const rowsPerSecond = (rows: number, ms: number) => Math.round((rows * 1000) / ms);

async function measure(t: TestContext, open: () => Promise<Ledger>, requests: number): Promise<{ batched: number; unbatched: number }> {
  const ledger = await open();
  t.after(() => ledger.close());
  const entry = (id: string) => [sampleRequest({ requestId: id }), [sampleAttempt({ requestId: id })]] as const;

  // One transaction per request (what writing on the request path would cost).
  let started = performance.now();
  for (let i = 0; i < requests; i++) {
    ledger.record(...entry(`single-${i}`));
    await ledger.flush();
  }
  const unbatchedMs = performance.now() - started;

  // The hot path's share: appending to the queue.
  started = performance.now();
  for (let i = 0; i < requests; i++) ledger.record(...entry(`batch-${i}`));
  const enqueueMs = performance.now() - started;
  started = performance.now();
  await ledger.flush();
  const batchedMs = performance.now() - started;

  // Synchronous, every budgeted request: reserve before, settle after.
  const pairs = Math.min(requests, 1_000);
  let reserveMs = 0;
  let settleMs = 0;
  for (let i = 0; i < pairs; i++) {
    const t0 = performance.now();
    await ledger.reserve({ keyId: `key_${i % 8}`, requestId: `res-${i}`, estimateMicros: 100, lines: dayMonthLines(`key_${i % 8}`, { dayMicros: 1e12 }, Date.now()) });
    const t1 = performance.now();
    await ledger.settle(`res-${i}`, { costMicros: 90 });
    reserveMs += t1 - t0;
    settleMs += performance.now() - t1;
  }
  const rows = requests * 2;
  const result = { batched: rowsPerSecond(rows, batchedMs), unbatched: rowsPerSecond(rows, unbatchedMs) };
  t.diagnostic(
    `${ledger.kind}: ${requests} requests (${rows} rows): one transaction per request ${result.unbatched} rows/s (${((unbatchedMs / requests) * 1000).toFixed(0)} µs/request); ` +
      `batched ${result.batched} rows/s (${((batchedMs / requests) * 1000).toFixed(1)} µs/request, off the request path); record() ${((enqueueMs / requests) * 1000).toFixed(2)} µs/request on it; ` +
      `reserve ${((reserveMs / pairs) * 1000).toFixed(0)} µs + settle ${((settleMs / pairs) * 1000).toFixed(0)} µs per request (sequential)`,
  );
  assert.equal(ledger.stats().failedFlushes, 0);
  return result;
}

test('SQLite: batched writes vs one transaction per request; reservation cost', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-ledger-bench-')), 'herd.db');
  const { batched, unbatched } = await measure(t, async () => SqliteLedger.open(file, { flushIntervalMs: 60_000, maxBatchRows: 500 }), 5_000);
  assert.ok(batched > unbatched * 2, `batched ${batched} rows/s should beat one transaction per request ${unbatched} rows/s`);
});

test('PostgreSQL: batched writes vs one transaction per request; reservation cost', { skip: skipWithoutPostgres('ledger-throughput.test.ts (PostgreSQL case)') }, async (t) => {
  const schema = uniqueSchema('herd_ledger_bench');
  t.after(() => dropSchema(schema));
  const { batched, unbatched } = await measure(t, () => PostgresLedger.open({ url: DATABASE_URL as string, schema, flushIntervalMs: 60_000, maxBatchRows: 500 }), 2_000);
  assert.ok(batched > unbatched * 2, `batched ${batched} rows/s should beat one transaction per request ${unbatched} rows/s`);
});
