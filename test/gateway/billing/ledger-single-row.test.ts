// A request with a single attempt carries it in its own row (ledger migration 4): what every reader sees
// through ledger_attempts_all is what ledger_attempts held before, reports read the same, databases
// upgrade in place, and spool replay and intent recovery stay exactly once. SQLite and PostgreSQL.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runUsage } from '../../../src/cli/usage-command.ts';
import { findInlineAttempt } from '../../../src/gateway/billing/inline-attempt.ts';
import type { AttemptRow, Ledger, RequestRecord, UsageGroup } from '../../../src/gateway/billing/ledger.ts';
import { type AttemptIntent, intentLine } from '../../../src/gateway/billing/ledger-intents.ts';
import { convertAttemptToRow } from '../../../src/gateway/billing/ledger-rows.ts';
import { ledgerMigrations } from '../../../src/gateway/billing/ledger-migrations.ts';
import type { LedgerEntry } from '../../../src/gateway/billing/ledger-write-queue.ts';
import { buildUsageReport, convertUsageReportToJson, formatUsageReport } from '../../../src/gateway/billing/usage-report.ts';
import { DAY, T0, sampleAttempt, sampleRequest } from './ledger-contract.ts';
import { type LedgerHarness, type Row, createPostgresHarness, createSqliteHarness } from './ledger-harness.ts';
import { skipWithoutPostgres } from './pg-test-schema.ts';

const skipPg = skipWithoutPostgres('ledger-single-row.test.ts (PostgreSQL half)');

const entry = (request: RequestRecord, attempts: AttemptRow[]): LedgerEntry => ({ request: { ...request, attempts: attempts.length }, attempts });
const free = { promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, costMicros: 0, usdMicros: 0, listUsdMicros: 0 };

/** A mix of traffic: every shape of request the gateway records. */
function traffic(): LedgerEntry[] {
  const at = (i: number) => T0 + i * 1000;
  const r = (id: string, i: number, overrides: Partial<RequestRecord> = {}) => sampleRequest({ requestId: id, startedAt: at(i), finishedAt: at(i) + 800, ...overrides });
  const a = (id: string, i: number, overrides: Partial<AttemptRow> = {}) => sampleAttempt({ requestId: id, startedAt: at(i), ...overrides });
  return [
    entry(r('ok-1', 0), [a('ok-1', 0, { httpStatus: 200 })]),
    entry(r('stream-1', 1, { ttftMs: 40.25, estimated: true, status: 'failed', dialect: 'anthropic-messages' }), [
      a('stream-1', 1, { ttftMs: 38, estimated: true, latencyMs: 38 }),
    ]),
    entry(r('retry-1', 2, { provider: 'relay' }), [
      a('retry-1', 2, { ...free, attempt: 1, outcome: 'rate_limited', httpStatus: 429, latencyMs: 12 }),
      a('retry-1', 2, { attempt: 2, provider: 'relay', startedAt: at(2) + 12, httpStatus: 200 }),
    ]),
    entry(r('failed-1', 3, { ...free, model: undefined, status: 'upstream_error', httpStatus: 502 }), [a('failed-1', 3, { ...free, outcome: 'server_error', httpStatus: 500 })]),
    entry(r('hit-1', 4, { cacheHit: true, ...free, savedMicros: 41_610, promptTokens: 1000 }), []),
    // Tokens neither the request's nor zero: cannot ride inline, goes to ledger_attempts.
    entry(r('odd-1', 5), [a('odd-1', 5, { completionTokens: 7 })]),
    entry(r('other-day', 6, { startedAt: T0 + DAY, finishedAt: T0 + DAY + 5, keyId: 'key_b', keyName: 'team b', currency: 'CNY' }), [a('other-day', 6, { startedAt: T0 + DAY })]),
  ];
}

const attemptsSql = 'SELECT * FROM ledger_attempts_all ORDER BY request_id, attempt';

async function recordAll(ledger: Ledger, entries: readonly LedgerEntry[]): Promise<void> {
  await Promise.all(entries.map((e) => ledger.record(e.request, e.attempts)));
  await ledger.flush();
}

async function reports(ledger: Ledger): Promise<string[]> {
  const out: string[] = [];
  for (const by of ['day', 'model', 'provider', 'key'] as UsageGroup[]) {
    const report = await buildUsageReport(ledger, { sinceMs: T0 - DAY, untilMs: T0 + 3 * DAY, by });
    out.push(formatUsageReport(report), JSON.stringify(convertUsageReportToJson(report)));
  }
  return out;
}

const expectedAttempts = (entries: readonly LedgerEntry[]): Row[] =>
  entries
    .flatMap((e) => e.attempts.map(convertAttemptToRow))
    .map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : String(v)])))
    .sort((x, y) => ((x.request_id as string) + x.attempt < (y.request_id as string) + y.attempt ? -1 : 1));

const count = async (h: LedgerHarness, sql: string) => Number((await h.query(sql))[0]?.n);

for (const kind of ['sqlite', 'postgres'] as const) {
  const skip = kind === 'postgres' ? skipPg : false;
  const harness = (t: TestContext, prefix: string): LedgerHarness => {
    const h = kind === 'sqlite' ? createSqliteHarness() : createPostgresHarness(prefix);
    t.after(() => h.close());
    return h;
  };

  test(`${kind}: one row for a single attempt, the attempt table only for two or more; the view gives back every attempt`, { skip }, async (t) => {
    const h = harness(t, 'herd_single_row');
    const entries = traffic();
    const ledger = await h.open();
    await recordAll(ledger, entries);
    await ledger.close();
    assert.deepEqual(await h.query(attemptsSql), expectedAttempts(entries));
    assert.equal(await count(h, 'SELECT COUNT(*) AS n FROM ledger_requests'), entries.length);
    // retry-1's two and odd-1's one: everything else rode in its request row (hit-1 had none).
    assert.deepEqual(
      (await h.query('SELECT request_id, attempt FROM ledger_attempts ORDER BY request_id, attempt')).map((r) => `${r.request_id}/${r.attempt}`),
      ['odd-1/1', 'retry-1/1', 'retry-1/2'],
    );
    assert.deepEqual(
      (await h.query('SELECT request_id FROM ledger_requests WHERE attempt_outcome IS NOT NULL ORDER BY request_id')).map((r) => r.request_id),
      ['failed-1', 'ok-1', 'other-day', 'stream-1'],
    );
  });

  test(`${kind}: a database at schema 3 upgrades in place; reports and attempts read the same as rows the new version wrote`, { skip }, async (t) => {
    const before = harness(t, 'herd_single_row_v3');
    const after = harness(t, 'herd_single_row_v4');
    const [old, fresh] = [traffic().slice(0, 4), traffic().slice(4)];
    await before.writeAsVersion(3, old);
    const upgraded = await before.open();
    await recordAll(upgraded, fresh);
    const written = await after.open();
    await recordAll(written, [...old, ...fresh]);
    assert.deepEqual(await reports(upgraded), await reports(written));
    await upgraded.close();
    await written.close();
    assert.deepEqual(await before.query(attemptsSql), await after.query(attemptsSql));
    assert.deepEqual(await before.query(attemptsSql), expectedAttempts([...old, ...fresh]));
    assert.equal(await count(before, "SELECT COUNT(*) AS n FROM schema_migrations WHERE scope = 'ledger'"), ledgerMigrations.length);
    // The old rows stay where they were: their attempts in ledger_attempts, their request rows without one inline.
    assert.equal(await count(before, "SELECT COUNT(*) AS n FROM ledger_requests WHERE attempt_outcome IS NOT NULL AND request_id IN ('ok-1', 'stream-1', 'failed-1')"), 0);
    if (kind === 'sqlite') {
      const printed = async (location: string) => {
        let out = '';
        for (const by of ['day', 'model', 'provider', 'key']) {
          for (const json of [false, true]) {
            await runUsage({ ledger: location, since: '2026-05-19', until: '2026-05-23', by, json }, { stdout: (s) => (out += s), stderr: () => undefined, env: {} });
          }
        }
        return out;
      };
      assert.equal(await printed(before.location), await printed(after.location));
    }
  });

  test(`${kind}: spool replay is exactly once, twice over, for inline and table attempts alike`, { skip }, async (t) => {
    const h = harness(t, 'herd_single_row_spool');
    const entries = traffic();
    const spoolDir = mkdtempSync(join(tmpdir(), 'herd-single-row-spool-'));
    // What a killed process left: each entry as the spool has always written it, one of them twice.
    const text = `${[...entries, entries[0] as LedgerEntry].map((e) => JSON.stringify([e.request, e.attempts])).join('\n')}\n`;
    for (let life = 0; life < 2; life++) {
      writeFileSync(join(spoolDir, '000000000000001-1-000000000.jsonl'), text);
      writeFileSync(join(spoolDir, 'owner.pid'), '999999999\n');
      const ledger = await h.open({ spoolDir });
      await ledger.close();
      assert.equal(await count(h, 'SELECT COUNT(*) AS n FROM ledger_requests'), entries.length);
      assert.deepEqual(await h.query(attemptsSql), expectedAttempts(entries));
    }
  });

  test(`${kind}: an intent matches its attempt whether it rides inline or sits in ledger_attempts`, { skip }, async (t) => {
    const h = harness(t, 'herd_single_row_intents');
    const entries = traffic();
    const first = await h.open();
    await recordAll(first, entries);
    await first.close();
    const intent = (requestId: string, attempt: number): AttemptIntent => ({
      requestId,
      attempt,
      keyId: 'key_a',
      requestedModel: 'gpt4',
      model: 'gpt-4.1',
      provider: 'openai',
      upstreamModel: 'gpt-4.1',
      startedAt: T0 + 9000 + attempt,
    });
    // A file a killed process left holding intents of requests whose rows are already in the database
    // (their own files went), and of two calls that never finished.
    const lines = [intent('ok-1', 1), intent('retry-1', 1), intent('retry-1', 2), intent('lost-1', 1), intent('lost-2', 1), intent('lost-2', 2)].map(intentLine).join('');
    const spoolDir = mkdtempSync(join(tmpdir(), 'herd-single-row-intents-'));
    for (let life = 0; life < 2; life++) {
      writeFileSync(join(spoolDir, '000000000000001-1-000000000.jsonl'), lines);
      writeFileSync(join(spoolDir, 'owner.pid'), '999999999\n');
      const ledger = await h.open({ spoolDir });
      await ledger.close();
      const attempts = await h.query('SELECT request_id, attempt, outcome FROM ledger_attempts_all ORDER BY request_id, attempt');
      const of = (id: string) => attempts.filter((a) => a.request_id === id).map((a) => `${a.attempt}:${a.outcome}`);
      assert.deepEqual(of('ok-1'), ['1:ok']);
      assert.deepEqual(of('retry-1'), ['1:rate_limited', '2:ok']);
      assert.deepEqual(of('lost-1'), ['1:interrupted']);
      assert.deepEqual(of('lost-2'), ['1:interrupted', '2:interrupted']);
      assert.equal(attempts.length, expectedAttempts(entries).length + 3);
      assert.equal(await count(h, "SELECT COUNT(*) AS n FROM ledger_requests WHERE status = 'interrupted'"), 2);
    }
  });
}

test('findInlineAttempt: only what the view rebuilds exactly rides inline', () => {
  const request = sampleRequest();
  assert.deepEqual(findInlineAttempt(request, [sampleAttempt()]), { attempt: sampleAttempt(), charged: true });
  const failed = sampleAttempt({ ...free, outcome: 'timeout' });
  assert.deepEqual(findInlineAttempt(request, [failed]), { attempt: failed, charged: false });
  assert.equal(findInlineAttempt(request, []), undefined);
  assert.equal(findInlineAttempt({ ...request, attempts: 2 }, [sampleAttempt(), sampleAttempt({ attempt: 2 })]), undefined);
  assert.equal(findInlineAttempt(request, [sampleAttempt({ attempt: 2 })]), undefined);
  assert.equal(findInlineAttempt(request, [sampleAttempt({ startedAt: T0 + 1 })]), undefined);
  assert.equal(findInlineAttempt(request, [sampleAttempt({ currency: 'USD' })]), undefined);
  assert.equal(findInlineAttempt(request, [sampleAttempt({ completionTokens: 1 })]), undefined);
  assert.equal(findInlineAttempt(request, [sampleAttempt({ ...free, estimated: true })]), undefined);
});
