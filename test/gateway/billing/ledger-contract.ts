// The behaviour every Ledger must have, run against SQLite and PostgreSQL alike: reserve → settle →
// release, idempotent by request id; budgets checked atomically (also by two instances at once, as
// two replicas would); recovery of stale reservations; batched rows and the usage report.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { HerdError } from '../../../src/core/errors.ts';
import type { AttemptRow, Ledger, LedgerOptions, RequestRecord } from '../../../src/gateway/billing/ledger.ts';
import { planBudgets } from '../../../src/gateway/billing/plan-budgets.ts';
import { dayMonthLines, testKey, testTeam } from './budget-fixtures.ts';

/** Opens a ledger on the suite's database; called several times per test to act as several replicas. */
export type OpenTestLedger = (options?: LedgerOptions) => Promise<Ledger>;

const DAY = 86_400_000;
const T0 = Date.parse('2026-05-20T10:00:00Z');

export function sampleRequest(overrides: Partial<RequestRecord> = {}): RequestRecord {
  return {
    requestId: 'req-1',
    keyId: 'key_a',
    keyName: 'team a',
    requestedModel: 'gpt4',
    model: 'gpt-4.1',
    provider: 'openai',
    upstreamModel: 'gpt-4.1',
    promptTokens: 1_000,
    cachedPromptTokens: 200,
    cacheWriteTokens: 0,
    completionTokens: 500,
    reasoningTokens: 100,
    estimated: false,
    currency: 'CNY',
    costMicros: 41_610,
    usdMicros: 5_700,
    listUsdMicros: 5_700,
    cacheHit: false,
    savedMicros: 0,
    status: 'ok',
    httpStatus: 200,
    priority: 'NORMAL',
    attempts: 1,
    latencyMs: 812.5,
    ttftMs: undefined,
    priceSource: 'herd.yaml models.gpt-4.1.price',
    priceEffectiveAt: undefined,
    startedAt: T0,
    finishedAt: T0 + 812,
    ...overrides,
  };
}

export function sampleAttempt(overrides: Partial<AttemptRow> = {}): AttemptRow {
  return {
    requestId: 'req-1',
    attempt: 1,
    model: 'gpt-4.1',
    provider: 'openai',
    upstreamModel: 'gpt-4.1',
    outcome: 'ok',
    httpStatus: undefined,
    promptTokens: 1_000,
    cachedPromptTokens: 200,
    cacheWriteTokens: 0,
    completionTokens: 500,
    reasoningTokens: 100,
    estimated: false,
    currency: 'CNY',
    costMicros: 41_610,
    usdMicros: 5_700,
    listUsdMicros: 5_700,
    latencyMs: 800,
    ttftMs: undefined,
    startedAt: T0,
    ...overrides,
  };
}

const isBudgetError = (period: 'daily' | 'monthly') => (err: unknown) =>
  err instanceof HerdError && err.code === 'BUDGET_EXCEEDED' && err.message.includes(` per ${period === 'daily' ? 'day' : 'month'} for key `);

/** `raw`: runs SQL on the suite's database (legacy rows written as an older Herd wrote them). */
export async function runLedgerContract(t: TestContext, open: OpenTestLedger, raw?: (sql: string) => Promise<void>): Promise<void> {
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
  const key = () => `key_${++n}`;

  await t.test('reserve, settle and release are idempotent by request id', async () => {
    const l = await ledger();
    const k = key();
    const first = await l.reserve({ keyId: k, requestId: `${k}-r1`, estimateMicros: 500, lines: dayMonthLines(k, {}, clock.now) });
    assert.deepEqual([first.state, first.created, first.spent], ['open', true, { dayMicros: 500, monthMicros: 500 }]);
    const again = await l.reserve({ keyId: k, requestId: `${k}-r1`, estimateMicros: 500, lines: dayMonthLines(k, {}, clock.now) });
    assert.deepEqual([again.state, again.created, again.spent], ['open', false, { dayMicros: 500, monthMicros: 500 }], 'a retried reserve holds nothing more');
    assert.deepEqual(await l.settle(`${k}-r1`, { costMicros: 321 }), { state: 'settled', actualMicros: 321, changed: true });
    assert.deepEqual(await l.settle(`${k}-r1`, { costMicros: 999 }), { state: 'settled', actualMicros: 321, changed: false }, 'a second settle charges nothing');
    assert.deepEqual(await l.release(`${k}-r1`), { state: 'settled', changed: false }, 'a release after the settle refunds nothing');
    assert.deepEqual(await l.spend(k), { dayMicros: 321, monthMicros: 321 });
    const replay = await l.reserve({ keyId: k, requestId: `${k}-r1`, estimateMicros: 500, lines: dayMonthLines(k, { dayMicros: 1 }, clock.now) });
    assert.deepEqual([replay.state, replay.created, replay.actualMicros], ['settled', false, 321], 'a replay after settling is answered from the record, not re-checked');
    await assert.rejects(l.reserve({ keyId: 'other', requestId: `${k}-r1`, estimateMicros: 1, lines: dayMonthLines('other', {}, clock.now) }), /already reserved by another key/);

    await l.reserve({ keyId: k, requestId: `${k}-r2`, estimateMicros: 700, lines: dayMonthLines(k, {}, clock.now) });
    assert.deepEqual(await l.release(`${k}-r2`), { state: 'released', changed: true });
    assert.deepEqual(await l.release(`${k}-r2`), { state: 'released', changed: false });
    assert.deepEqual(await l.release('never-reserved'), { state: 'none', changed: false });
    assert.deepEqual(await l.spend(k), { dayMicros: 321, monthMicros: 321 }, 'the released estimate is refunded exactly once');
  });

  await t.test('budgets: reaching one is allowed, passing it is BUDGET_EXCEEDED; day before month', async () => {
    const l = await ledger();
    const k = key();
    const budgets = { dayMicros: 1_000, monthMicros: 1_800 };
    await l.reserve({ keyId: k, requestId: `${k}-a`, estimateMicros: 600, lines: dayMonthLines(k, budgets, clock.now) });
    await l.reserve({ keyId: k, requestId: `${k}-b`, estimateMicros: 400, lines: dayMonthLines(k, budgets, clock.now) });
    await assert.rejects(
      l.reserve({ keyId: k, requestId: `${k}-c`, estimateMicros: 1, lines: dayMonthLines(k, budgets, clock.now), currency: 'CNY' }),
      (err: HerdError) => isBudgetError('daily')(err) && /^budget ¥0\.001 per day for key key_\d+ is spent \(¥0\.001\); it resets at 00:00 UTC$/.test(err.message),
    );
    await l.settle(`${k}-a`, { costMicros: 100 });
    assert.deepEqual(await l.spend(k), { dayMicros: 500, monthMicros: 500 }, 'settling below the estimate frees the difference');
    await l.reserve({ keyId: k, requestId: `${k}-c`, estimateMicros: 500, lines: dayMonthLines(k, budgets, clock.now) });
    // The next day: a fresh daily budget, the same month.
    clock.now = T0 + DAY;
    await l.reserve({ keyId: k, requestId: `${k}-d`, estimateMicros: 700, lines: dayMonthLines(k, budgets, clock.now) });
    await assert.rejects(
      l.reserve({ keyId: k, requestId: `${k}-e`, estimateMicros: 200, lines: dayMonthLines(k, budgets, clock.now) }),
      isBudgetError('monthly'),
      'day 900 ≤ 1000, month 1900 > 1800',
    );
    assert.deepEqual(await l.spend(k), { dayMicros: 700, monthMicros: 1_700 }, 'month: 100 + 400 + 500 + 700');
    // A settlement above the estimate may overshoot; the next reservation sees it.
    clock.now = T0 + 2 * DAY;
    await l.reserve({ keyId: k, requestId: `${k}-f`, estimateMicros: 0, lines: dayMonthLines(k, { dayMicros: 10 }, clock.now) });
    await l.settle(`${k}-f`, { costMicros: 50 });
    await assert.rejects(l.reserve({ keyId: k, requestId: `${k}-g`, estimateMicros: 0, lines: dayMonthLines(k, { dayMicros: 10 }, clock.now) }), isBudgetError('daily'));
    clock.now = T0;
  });

  await t.test('a charge counts in the day and month its reservation was made, even if settled later', async () => {
    const l = await ledger();
    const k = key();
    const late = Date.parse('2026-05-31T23:59:59Z');
    await l.reserve({ keyId: k, requestId: `${k}-x`, estimateMicros: 300, lines: dayMonthLines(k, {}, late), atMs: late });
    clock.now = late + 5_000; // 2026-06-01
    await l.settle(`${k}-x`, { costMicros: 250 });
    assert.deepEqual(await l.spend(k, late), { dayMicros: 250, monthMicros: 250 });
    assert.deepEqual(await l.spend(k), { dayMicros: 0, monthMicros: 0 });
    clock.now = T0;
  });

  await t.test('settle without a reservation charges the given key; with nothing to charge it is a no-op', async () => {
    const l = await ledger();
    const k = key();
    assert.deepEqual(await l.settle(`${k}-y`, { costMicros: 40, keyId: k }), { state: 'settled', actualMicros: 40, changed: true });
    assert.deepEqual(await l.settle(`${k}-y`, { costMicros: 40, keyId: k }), { state: 'settled', actualMicros: 40, changed: false });
    assert.deepEqual(await l.settle(`${k}-z`, { costMicros: 0, keyId: k }), { state: 'none', actualMicros: 0, changed: false });
    await assert.rejects(l.settle(`${k}-w`, { costMicros: 1 }), (err: HerdError) => err.code === 'NOT_FOUND');
    assert.deepEqual(await l.spend(k), { dayMicros: 40, monthMicros: 40 });
  });

  await t.test('recover settles, at any age, an open reservation whose request row committed; releases one whose row says nothing answered', async () => {
    const l = await ledger();
    const k = key();
    await l.reserve({ keyId: k, requestId: `${k}-answered`, estimateMicros: 900, lines: dayMonthLines(k, {}, T0 - 1_000), atMs: T0 - 1_000 });
    await l.reserve({ keyId: k, requestId: `${k}-failed`, estimateMicros: 300, lines: dayMonthLines(k, {}, T0 - 1_000), atMs: T0 - 1_000 });
    await l.record(sampleRequest({ requestId: `${k}-answered`, keyId: k, costMicros: 420, startedAt: T0 - 10 * DAY }), []);
    await l.record(
      sampleRequest({
        requestId: `${k}-failed`,
        keyId: k,
        model: undefined,
        provider: undefined,
        upstreamModel: undefined,
        status: 'UPSTREAM_TIMEOUT',
        costMicros: 0,
        startedAt: T0 - 10 * DAY,
      }),
      [],
    );
    const result = await l.recover({ olderThanMs: 60 * 60_000, nowMs: T0 });
    assert.ok(result.settled >= 1 && result.settledMicros >= 420);
    assert.deepEqual(await l.spend(k, T0), { dayMicros: 420, monthMicros: 420 });
    assert.equal((await l.settle(`${k}-answered`, { costMicros: 420 })).changed, false, 'a late settlement from the process itself changes nothing');
    assert.equal((await l.release(`${k}-failed`)).changed, false);
  });

  await t.test('recover releases only reservations open longer than the limit; a late settlement still charges once', async () => {
    const l = await ledger();
    const k = key();
    await l.reserve({ keyId: k, requestId: `${k}-old`, estimateMicros: 800, lines: dayMonthLines(k, {}, T0 - 61 * 60_000), atMs: T0 - 61 * 60_000 });
    await l.reserve({ keyId: k, requestId: `${k}-new`, estimateMicros: 200, lines: dayMonthLines(k, {}, T0 - 60_000), atMs: T0 - 60_000 });
    await l.reserve({ keyId: k, requestId: `${k}-done`, estimateMicros: 100, lines: dayMonthLines(k, {}, T0 - 120 * 60_000), atMs: T0 - 120 * 60_000 });
    await l.settle(`${k}-done`, { costMicros: 90 });
    const result = await l.recover({ olderThanMs: 60 * 60_000 });
    assert.ok(result.released >= 1 && result.releasedMicros >= 800);
    assert.deepEqual(await l.recover({ olderThanMs: 60 * 60_000 }), { released: 0, releasedMicros: 0, settled: 0, settledMicros: 0 });
    assert.deepEqual(await l.spend(k), { dayMicros: 290, monthMicros: 290 }, '90 settled + 200 still open');
    assert.deepEqual(await l.settle(`${k}-old`, { costMicros: 650 }), { state: 'settled', actualMicros: 650, changed: true });
    assert.deepEqual(await l.spend(k), { dayMicros: 940, monthMicros: 940 });
  });

  await t.test('two instances (replicas) reserving concurrently never pass a budget together', async () => {
    const a = await ledger();
    const b = await ledger();
    const k = key();
    const tries = Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? a : b).reserve({ keyId: k, requestId: `${k}-${i}`, estimateMicros: 10, lines: dayMonthLines(k, { dayMicros: 100 }, clock.now) }),
    );
    const results = await Promise.allSettled(tries);
    const granted = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected' && isBudgetError('daily')(r.reason)).length;
    assert.deepEqual([granted, refused], [10, 30]);
    assert.deepEqual(await a.spend(k), { dayMicros: 100, monthMicros: 100 });
    // And the same request id from both at once is held once.
    const k2 = key();
    const twice = await Promise.all(
      [a, b, a, b].map((l) => l.reserve({ keyId: k2, requestId: `${k2}-same`, estimateMicros: 70, lines: dayMonthLines(k2, { dayMicros: 100 }, clock.now) })),
    );
    assert.equal(twice.filter((r) => r.created).length, 1);
    assert.deepEqual(await b.spend(k2), { dayMicros: 70, monthMicros: 70 });
  });

  await t.test('a reservation holds every line at once: the key and its team, checked together, settled and released on each', async () => {
    const l = await ledger();
    const team = testTeam({ id: `tm_${++n}`, budgets: [{ period: 'day', amountMicros: 1_000 }] });
    const keyA = testKey({ id: key(), name: 'a', team, budgets: [{ period: 'day', amountMicros: 800 }] });
    const keyB = testKey({ id: key(), name: 'b', team, budgets: [] });
    const linesA = planBudgets(keyA, clock.now);
    const linesB = planBudgets(keyB, clock.now);
    assert.deepEqual(
      linesA.map((x) => x.subject),
      [keyA.id, `team:${team.id}`],
    );
    await l.reserve({ keyId: keyA.id, requestId: `${keyA.id}-1`, estimateMicros: 700, lines: linesA });
    await assert.rejects(
      l.reserve({ keyId: keyA.id, requestId: `${keyA.id}-2`, estimateMicros: 200, lines: linesA }),
      /this request may cost up to 0\.0002 units and budget 0\.0008 units per day for key a has 0\.0001 units left/,
    );
    await assert.rejects(l.reserve({ keyId: keyB.id, requestId: `${keyB.id}-1`, estimateMicros: 400, lines: linesB, currency: 'CNY' }), (err: HerdError) =>
      /^this request may cost up to ¥0\.0004 and budget ¥0\.001 per day for team research has ¥0\.0003 left; it resets at 00:00 UTC/.test(err.message),
    );
    assert.deepEqual(await l.budgetSpend([...linesA, ...linesB]), [700, 700, 700], 'one query, in the order given (b has no budget of its own: the team line only)');
    await l.settle(`${keyA.id}-1`, { costMicros: 500 });
    assert.deepEqual(await l.budgetSpend(linesA), [500, 500]);
    await l.reserve({ keyId: keyB.id, requestId: `${keyB.id}-2`, estimateMicros: 400, lines: linesB });
    assert.deepEqual(await l.budgetSpend([...linesA, ...linesB]), [500, 900, 900]);
    await l.release(`${keyB.id}-2`);
    assert.deepEqual(await l.budgetSpend(linesB), [500]);
    // A settlement without a reservation charges the lines it is given.
    await l.settle(`${keyB.id}-3`, { costMicros: 50, keyId: keyB.id, lines: linesB });
    assert.deepEqual(await l.budgetSpend([...linesA, ...linesB]), [500, 550, 550]);
  });

  if (raw) {
    await t.test('a reservation written before budget lines (day and month periods, no lines) still settles and releases', async () => {
      const l = await ledger();
      const k = key();
      const at = clock.now;
      const day = `d:${new Date(at).toISOString().slice(0, 10)}`;
      const month = `m:${new Date(at).toISOString().slice(0, 7)}`;
      await raw(
        `INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, day_period, month_period, created_at) VALUES ('${k}-old1', '${k}', 'open', 900, '${day}', '${month}', ${at}), ('${k}-old2', '${k}', 'open', 300, '${day}', '${month}', ${at})`,
      );
      await raw(`INSERT INTO ledger_spend (key_id, period, micros, settled_micros) VALUES ('${k}', '${day}', 1200, 0), ('${k}', '${month}', 1200, 0)`);
      const lines = dayMonthLines(k, { dayMicros: 5_000 }, at);
      assert.deepEqual(await l.budgetSpend(lines), [1_200, 1_200], 'spend recorded by key id and UTC buckets carries over');
      assert.equal((await l.settle(`${k}-old1`, { costMicros: 100 })).changed, true);
      assert.equal((await l.release(`${k}-old2`)).changed, true);
      assert.deepEqual(await l.budgetSpend(lines), [100, 100]);
      assert.deepEqual(await l.spend(k), { dayMicros: 100, monthMicros: 100 });
    });
  }

  await t.test('a settlement crossing thresholds writes one outbox row per threshold; several instances settling at once write each once', async () => {
    const a = await ledger();
    const b = await ledger();
    const k = key();
    const lines = dayMonthLines(k, { dayMicros: 1_000 }, clock.now, [50, 80, 100]);
    // Reservations alone (open estimates) cross nothing: alerts follow settled spend.
    await a.reserve({ keyId: k, requestId: `${k}-big`, estimateMicros: 900, lines });
    const outbox = a.alertOutbox?.();
    assert.ok(outbox, 'the ledger has an alert outbox');
    const mine = async () => (await outbox.list()).filter((r) => r.subject === k);
    assert.deepEqual(await mine(), []);
    await a.release(`${k}-big`);
    // 20 settlements of 45 from two instances at once: 900 in total crosses 50% and 80%, not 100%.
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).reserve({ keyId: k, requestId: `${k}-${i}`, estimateMicros: 45, lines })));
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? b : a).settle(`${k}-${i}`, { costMicros: 45 })));
    const rows = await mine();
    assert.deepEqual(rows.map((r) => [r.bucket, r.threshold, r.state]).sort(), [
      [lines[0]?.bucket, 50, 'pending'],
      [lines[0]?.bucket, 80, 'pending'],
    ]);
    const body = JSON.parse(rows[0]?.payload ?? '{}') as { owner: { id: string }; limitMicros: number; spentMicros: number };
    assert.deepEqual([body.owner.id, body.limitMicros], [k, 1_000]);
    // A settlement past 100% (above the estimate) adds only that one.
    await a.settle(`${k}-late`, { costMicros: 200, keyId: k, lines });
    assert.deepEqual((await mine()).map((r) => r.threshold).sort(), [100, 50, 80]);

    // Claims: one sender at a time per row; a lease that ran out lets another take it.
    const first = (await outbox.claim('w1', clock.now, 30_000, 100)).filter((r) => r.subject === k);
    assert.equal(first.length, 3);
    assert.equal((await b.alertOutbox?.().claim('w2', clock.now, 30_000, 100))?.filter((r) => r.subject === k).length, 0, 'leased rows are skipped');
    const taken = (await b.alertOutbox?.().claim('w2', clock.now + 30_001, 30_000, 100))?.filter((r) => r.subject === k) ?? [];
    assert.deepEqual(
      taken.map((r) => r.attempts),
      [2, 2, 2],
      'after the lease, another sender takes them (second attempt)',
    );
    await outbox.delivered(taken[0]?.id ?? '', clock.now);
    await outbox.retry(taken[1]?.id ?? '', 'w2', undefined, 'the webhook answered 500');
    await outbox.retry(taken[2]?.id ?? '', 'w1', undefined, 'not the holder: ignored');
    const states = new Map((await mine()).map((r) => [r.id, r.state]));
    assert.deepEqual([states.get(taken[0]?.id ?? ''), states.get(taken[1]?.id ?? ''), states.get(taken[2]?.id ?? '')], ['delivered', 'failed', 'pending']);
  });

  await t.test('rows of one turn commit together, record() resolving once they have; duplicates ignored; usage grouped four ways', async () => {
    const l = await ledger({ maxBatchRows: 1_000 });
    const since = T0 - DAY;
    const until = T0 + 2 * DAY;
    const committed = [];
    committed.push(
      l.record(sampleRequest({ requestId: 'u1' }), [
        sampleAttempt({
          requestId: 'u1',
          attempt: 1,
          outcome: 'rate_limited',
          httpStatus: 429,
          costMicros: 0,
          usdMicros: 0,
          listUsdMicros: 0,
          promptTokens: 0,
          cachedPromptTokens: 0,
          completionTokens: 0,
          reasoningTokens: 0,
        }),
        sampleAttempt({ requestId: 'u1', attempt: 2 }),
      ]),
    );
    committed.push(
      l.record(sampleRequest({ requestId: 'u2', keyId: 'key_b', keyName: 'team b', provider: 'holysheep', costMicros: 5_700, usdMicros: 781, startedAt: T0 + DAY }), []),
    );
    committed.push(l.record(sampleRequest({ requestId: 'u3', cacheHit: true, costMicros: 0, usdMicros: 0, listUsdMicros: 0, savedMicros: 41_610 }), []));
    committed.push(
      l.record(
        sampleRequest({
          requestId: 'u4',
          model: undefined,
          provider: undefined,
          upstreamModel: undefined,
          status: 'UPSTREAM_TIMEOUT',
          costMicros: 0,
          usdMicros: 0,
          listUsdMicros: 0,
          promptTokens: 0,
          cachedPromptTokens: 0,
          completionTokens: 0,
          reasoningTokens: 0,
          estimated: true,
        }),
        [],
      ),
    );
    assert.equal(l.stats().queued, 6);
    await Promise.all(committed);
    assert.equal(l.stats().flushes, 1, 'one transaction for the turn');
    await l.flush();
    l.record(sampleRequest({ requestId: 'u1', costMicros: 1 }), []); // a retried write: ignored
    await l.flush();
    assert.deepEqual(l.stats(), { queued: 0, written: 7, flushes: 2, failedFlushes: 0, dropped: 0, behindRows: 0, behindMs: 0 });

    const byModel = await l.usage({ sinceMs: since, untilMs: until, by: 'model' });
    assert.deepEqual(
      byModel.map((r) => [
        r.group,
        r.requests,
        r.failed,
        r.cacheHits,
        r.estimated,
        r.promptTokens,
        r.cachedPromptTokens,
        r.completionTokens,
        r.reasoningTokens,
        r.costMicros,
        r.usdMicros,
        r.savedMicros,
      ]),
      [
        ['-', 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        ['gpt-4.1', 3, 0, 1, 0, 2_000, 400, 1_000, 200, 47_310, 6_481, 41_610],
      ],
    );
    const byDay = await l.usage({ sinceMs: since, untilMs: until, by: 'day' });
    assert.deepEqual(
      byDay.map((r) => [r.group, r.requests, r.costMicros]),
      [
        ['2026-05-20', 3, 41_610],
        ['2026-05-21', 1, 5_700],
      ],
    );
    const byProvider = await l.usage({ sinceMs: since, untilMs: until, by: 'provider' });
    assert.deepEqual(
      byProvider.map((r) => [r.group, r.requests, r.costMicros, r.listUsdMicros]),
      [
        ['-', 1, 0, 0],
        ['holysheep', 1, 5_700, 5_700],
        ['openai', 2, 41_610, 5_700],
      ],
    );
    const byKey = await l.usage({ sinceMs: since, untilMs: until, by: 'key' });
    assert.deepEqual(
      byKey.map((r) => [r.group, r.keyName, r.requests, r.currency]),
      [
        ['key_a', 'team a', 3, 'CNY'],
        ['key_b', 'team b', 1, 'CNY'],
      ],
    );
    assert.deepEqual(
      (await l.usage({ sinceMs: T0 + DAY, untilMs: until, by: 'key' })).map((r) => r.group),
      ['key_b'],
      'since is inclusive, until exclusive',
    );
  });
}

export { DAY, T0 };
