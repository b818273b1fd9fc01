// A client batch's one reservation settled line by line (Ledger.settlePart) on SQLite and PostgreSQL
// (DATABASE_URL): replayed lines charge once, parts from two instances at once take turns, the hold never
// goes below zero (the excess is still charged), release refunds what is left, alerts follow settled spend,
// and recover() leaves a batch's reservation open until its window has passed.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { Ledger, LedgerOptions } from '../../../src/gateway/billing/ledger.ts';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { dayMonthLines } from './budget-fixtures.ts';
import { type OpenTestLedger, sampleRequest } from './ledger-contract.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';

const T0 = Date.parse('2026-05-20T10:00:00Z');
const DAY = 86_400_000;

async function runBatchSettlement(t: TestContext, open: OpenTestLedger): Promise<void> {
  const clock = { now: T0 };
  const opened: Ledger[] = [];
  const ledger = async (options: LedgerOptions = {}) => {
    const l = await open({ now: () => clock.now, flushIntervalMs: 60_000, ...options });
    opened.push(l);
    return l;
  };
  t.after(async () => {
    for (const l of opened) await l.close();
  });
  let n = 0;
  const key = () => `bkey_${++n}`;

  await t.test('each line moves its cost from the hold to settled spend once; a replay charges nothing; release refunds the rest', async () => {
    const l = await ledger();
    const k = key();
    const lines = dayMonthLines(k, { dayMicros: 10_000 }, clock.now);
    await l.reserve({ keyId: k, requestId: `${k}-batch`, estimateMicros: 1_000, lines });
    assert.deepEqual(await l.budgetSpend(lines), [1_000, 1_000]);
    const first = await l.settlePart(`${k}-batch`, `${k}-line1`, 300);
    assert.deepEqual(first, { state: 'open', costMicros: 300, heldMicros: 300, remainingMicros: 700, changed: true });
    assert.deepEqual(await l.budgetSpend(lines), [1_000, 1_000], 'a line within the hold moves spend from held to settled: the total stays');
    const replay = await l.settlePart(`${k}-batch`, `${k}-line1`, 999);
    assert.deepEqual(replay, { state: 'open', costMicros: 300, heldMicros: 300, remainingMicros: 700, changed: false }, 'the first charge stands');
    await l.settlePart(`${k}-batch`, `${k}-line2`, 200);
    assert.deepEqual(await l.release(`${k}-batch`), { state: 'released', changed: true });
    assert.deepEqual(await l.spend(k), { dayMicros: 500, monthMicros: 500 }, 'the parts stay charged, the 500 left of the hold is refunded');
    assert.deepEqual(await l.release(`${k}-batch`), { state: 'released', changed: false });
    const late = await l.settlePart(`${k}-batch`, `${k}-line3`, 40);
    assert.deepEqual(late, { state: 'released', costMicros: 40, heldMicros: 0, remainingMicros: 0, changed: true }, 'a line answered after the release still charges');
    assert.deepEqual(await l.spend(k), { dayMicros: 540, monthMicros: 540 });
    await assert.rejects(l.settlePart('never-reserved', 'x-line', 1), /no reservation never-reserved/);
    await assert.rejects(l.settlePart(`${k}-batch`, `${k}-line4`, -1), /whole micros, at least 0/);
  });

  await t.test('the hold never goes below zero: a line past it is charged in full as settled spend', async () => {
    const l = await ledger();
    const k = key();
    const lines = dayMonthLines(k, { dayMicros: 10_000 }, clock.now);
    await l.reserve({ keyId: k, requestId: `${k}-batch`, estimateMicros: 500, lines });
    await l.settlePart(`${k}-batch`, `${k}-a`, 400);
    const over = await l.settlePart(`${k}-batch`, `${k}-b`, 300);
    assert.deepEqual(over, { state: 'open', costMicros: 300, heldMicros: 100, remainingMicros: 0, changed: true });
    assert.deepEqual(await l.budgetSpend(lines), [700, 700], 'settled 700, nothing held');
    await l.settlePart(`${k}-batch`, `${k}-c`, 50);
    await l.release(`${k}-batch`);
    assert.deepEqual(await l.spend(k), { dayMicros: 750, monthMicros: 750 }, 'nothing to refund: release takes nothing back from settled spend');
  });

  await t.test('parts from two instances at once, each line sent twice: every line charged once, the totals exact', async () => {
    const a = await ledger();
    const b = await ledger();
    const k = key();
    const lines = dayMonthLines(k, { dayMicros: 100_000 }, clock.now);
    await a.reserve({ keyId: k, requestId: `${k}-batch`, estimateMicros: 2_000, lines });
    const settles = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).settlePart(`${k}-batch`, `${k}-line${i % 20}`, 60 + (i % 20)));
    const results = await Promise.all(settles);
    assert.equal(results.filter((r) => r.changed).length, 20, 'each of the 20 lines charged by exactly one of its two calls');
    const total = Array.from({ length: 20 }, (_, i) => 60 + i).reduce((x, y) => x + y, 0);
    assert.deepEqual(await b.budgetSpend(lines), [2_000, 2_000], `${total} settled out of the 2,000 held: the total stays`);
    await b.release(`${k}-batch`);
    assert.deepEqual(await a.spend(k), { dayMicros: total, monthMicros: total });
  });

  await t.test('alerts follow the parts: thresholds crossed by settled lines, once each, not by the hold', async () => {
    const l = await ledger();
    const k = key();
    const lines = dayMonthLines(k, { dayMicros: 1_000 }, clock.now, [50, 80, 100]);
    await l.reserve({ keyId: k, requestId: `${k}-batch`, estimateMicros: 1_000, lines });
    const outbox = l.alertOutbox?.();
    assert.ok(outbox);
    const mine = async () => (await outbox.list()).filter((r) => r.subject === k).map((r) => r.threshold);
    assert.deepEqual(await mine(), [], 'holding the whole budget crosses nothing');
    for (let i = 0; i < 6; i++) await l.settlePart(`${k}-batch`, `${k}-line${i}`, 100);
    assert.deepEqual(await mine(), [50]);
    await l.settlePart(`${k}-batch`, `${k}-line5`, 100);
    await l.settlePart(`${k}-batch`, `${k}-line6`, 300);
    assert.deepEqual((await mine()).sort(), [50, 80]);
  });

  await t.test("a line's row names its batch and keeps the realtime list price; a realtime row has neither", async () => {
    const l = await ledger();
    const k = key();
    const line = sampleRequest({ requestId: `${k}-line`, keyId: k, startedAt: clock.now, batchId: `${k}-batch`, listUsdMicros: 4_000, realtimeListUsdMicros: 8_000 });
    const plain = sampleRequest({ requestId: `${k}-rt`, keyId: k, startedAt: clock.now });
    await Promise.all([l.record(line, []), l.record(plain, [])]);
    await l.flush();
    const read = await l.getRequest(`${k}-line`);
    assert.deepEqual([read?.request.batchId, read?.request.realtimeListUsdMicros], [`${k}-batch`, 8_000]);
    const other = await l.getRequest(`${k}-rt`);
    assert.equal('batchId' in (other?.request ?? {}) || 'realtimeListUsdMicros' in (other?.request ?? {}), false);
    const page = await l.listRequests({ keyId: k, limit: 10 });
    assert.deepEqual(page.rows.map((r) => r.batchId ?? null).sort(), [`${k}-batch`, null].sort());
  });

  await t.test("recover() leaves a batch's reservation open until its window has passed, then refunds what it holds", async () => {
    const l = await ledger();
    const k = key();
    const lines = dayMonthLines(k, {}, clock.now);
    await l.reserve({ keyId: k, requestId: `${k}-batch`, estimateMicros: 900, lines, expiresAtMs: clock.now + DAY, atMs: clock.now });
    await l.reserve({ keyId: k, requestId: `${k}-plain`, estimateMicros: 50, lines, atMs: clock.now });
    await l.settlePart(`${k}-batch`, `${k}-line1`, 100);
    const early = await l.recover({ olderThanMs: 60_000, nowMs: clock.now + 2 * 3_600_000 });
    assert.ok(early.released >= 1);
    assert.deepEqual(await l.spend(k, clock.now), { dayMicros: 900, monthMicros: 900 }, 'the plain one released, the batch still holds 800 and charged 100');
    await l.recover({ olderThanMs: 60_000, nowMs: clock.now + DAY + 1 });
    assert.deepEqual(await l.spend(k, clock.now), { dayMicros: 100, monthMicros: 100 }, 'past its window: the 800 left is refunded');
  });
}

test('SQLite: batch reservations settled line by line', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-batch-settle-')), 'herd.db');
  await runBatchSettlement(t, async (options) => SqliteLedger.open(file, options));
});

test('PostgreSQL: batch reservations settled line by line', { skip: skipWithoutPostgres('batch-settlement.test.ts (PostgreSQL)') }, async (t) => {
  const schema = uniqueSchema('h_batch_settle');
  t.after(() => dropSchema(schema));
  await runBatchSettlement(t, (options) => PostgresLedger.open({ ...options, url: DATABASE_URL as string, schema, poolSize: 4 }));
});
