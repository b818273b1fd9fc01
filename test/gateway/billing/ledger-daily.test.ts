// The daily rollup (ledger_daily) on a SQLite file and on PostgreSQL (DATABASE_URL): usage(), usagePage and
// spendTotals equal a computation over every raw row for ranges with and without partial days, in every
// grouping and currency; a replayed batch adds nothing; the migration backfills an existing ledger.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Ledger, RequestRecord, SpendTotal, UsageGroup, UsageRow } from '../../../src/gateway/billing/ledger.ts';
import { ledgerMigrations } from '../../../src/gateway/billing/ledger-migrations.ts';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { type OpenTestLedger, sampleRequest } from './ledger-contract.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const D0 = Date.UTC(2026, 4, 18);
const GROUPINGS: readonly UsageGroup[] = ['day', 'model', 'provider', 'key', 'team'];
// The rollup's migrations: the table with its backfill, and the batch sums added later with theirs. Run again on
// a ledger whose rollup was dropped, their text rebuilds it from the rows as an upgrade would.
const ROLLUP_SQL = ledgerMigrations.filter((m) => m.name.startsWith('ledger_daily')).map((m) => m.sql);

/** A deterministic spread over five days: edges at midnight, renamed keys, no team, nothing answered, two currencies. */
function seedRequests(count: number): RequestRecord[] {
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  return Array.from({ length: count }, (_, i) => {
    const model = [undefined, 'gpt-4.1', 'claude-sonnet', 'qwen'][next(4)];
    const keyIndex = next(3);
    const cacheHit = next(7) === 0;
    const edge = [0, -1, 1][i % 3] as number;
    const startedAt = i % 10 === 0 ? D0 + (1 + next(4)) * DAY + edge : D0 + next(5 * DAY);
    const listUsdMicros = next(15_000);
    // Every fifth row a line of a client batch, priced below its realtime list price.
    const batch = i % 5 === 1 ? { batchId: `batch_${next(3)}`, realtimeListUsdMicros: listUsdMicros + next(15_000) } : {};
    return sampleRequest({
      ...batch,
      requestId: `roll-${i}`,
      keyId: `key_${keyIndex}`,
      keyName: `name ${keyIndex}${startedAt > D0 + 2 * DAY + 5 * HOUR ? ' (renamed)' : ''}`,
      teamId: keyIndex === 2 ? undefined : `team_${keyIndex}`,
      teamName: keyIndex === 2 ? undefined : `Team ${keyIndex}${next(2) ? ' new' : ''}`,
      model,
      provider: model === undefined ? undefined : model.startsWith('gpt') ? 'openai' : 'other',
      currency: (['USD', 'CNY'] as const)[next(2)],
      status: next(6) === 0 ? 'RATE_LIMITED' : 'ok',
      estimated: next(4) === 0,
      cacheHit,
      savedMicros: next(3) * 1_000,
      promptTokens: next(5_000),
      cachedPromptTokens: next(500),
      cacheWriteTokens: next(300),
      cacheWrite1hTokens: next(100),
      completionTokens: next(2_000),
      reasoningTokens: next(400),
      reportedReasoningTokens: next(2) ? next(400) : undefined,
      costMicros: next(90_000),
      usdMicros: next(12_000),
      listUsdMicros,
      startedAt,
      finishedAt: startedAt + 500,
    });
  });
}

/** The report as a computation over every raw row (the pre-rollup semantics), sorted by group and currency. */
function expectedUsage(requests: readonly RequestRecord[], by: UsageGroup, since: number, until: number): UsageRow[] {
  const groups = new Map<string, UsageRow>();
  for (const r of requests) {
    if (r.startedAt < since || r.startedAt >= until) continue;
    const group = { day: new Date(r.startedAt).toISOString().slice(0, 10), model: r.model ?? '-', provider: r.provider ?? '-', key: r.keyId, team: r.teamId ?? '-' }[by];
    const name = by === 'key' ? r.keyName : by === 'team' ? r.teamName : undefined;
    const g = groups.get(`${group}|${r.currency}`) ?? { ...emptyRow(group, r), keyName: undefined };
    const up = (n: number) => (r.cacheHit ? 0 : n);
    groups.set(`${group}|${r.currency}`, {
      ...g,
      keyName: name !== undefined && (g.keyName === undefined || name > g.keyName) ? name : g.keyName,
      requests: g.requests + 1,
      failed: g.failed + (r.status === 'ok' ? 0 : 1),
      cacheHits: g.cacheHits + (r.cacheHit ? 1 : 0),
      estimated: g.estimated + (r.estimated ? 1 : 0),
      promptTokens: g.promptTokens + up(r.promptTokens),
      cachedPromptTokens: g.cachedPromptTokens + up(r.cachedPromptTokens),
      cacheWriteTokens: g.cacheWriteTokens + up(r.cacheWriteTokens),
      cacheWrite1hTokens: g.cacheWrite1hTokens + up(r.cacheWrite1hTokens ?? 0),
      completionTokens: g.completionTokens + up(r.completionTokens),
      reasoningTokens: g.reasoningTokens + up(r.reasoningTokens),
      reportedReasoningTokens: g.reportedReasoningTokens + up(r.reportedReasoningTokens ?? 0),
      costMicros: g.costMicros + r.costMicros,
      usdMicros: g.usdMicros + r.usdMicros,
      listUsdMicros: g.listUsdMicros + r.listUsdMicros,
      savedMicros: g.savedMicros + (r.cacheHit ? r.savedMicros : 0),
      cacheReadSavedMicros: g.cacheReadSavedMicros + (r.cacheHit ? 0 : r.savedMicros),
      batchRequests: g.batchRequests + (r.batchId === undefined ? 0 : 1),
      batchSavedUsdMicros: g.batchSavedUsdMicros + (r.realtimeListUsdMicros === undefined ? 0 : r.realtimeListUsdMicros - r.listUsdMicros),
    });
  }
  return sortRows([...groups.values()]);
}

function emptyRow(group: string, r: RequestRecord): UsageRow {
  const zero = { requests: 0, failed: 0, cacheHits: 0, estimated: 0, promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0 };
  const money = { reasoningTokens: 0, reportedReasoningTokens: 0, costMicros: 0, usdMicros: 0, listUsdMicros: 0, savedMicros: 0, cacheWrite1hTokens: 0, cacheReadSavedMicros: 0 };
  const batch = { batchRequests: 0, batchSavedUsdMicros: 0 };
  return { group, keyName: undefined, currency: r.currency, ...zero, ...money, ...batch };
}

const sortRows = (rows: UsageRow[]) => [...rows].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : a.currency < b.currency ? -1 : 1));

function expectedTotals(requests: readonly RequestRecord[], since: number, until: number): SpendTotal[] {
  const totals = new Map<string, SpendTotal>();
  for (const r of requests) {
    if (r.startedAt < since || r.startedAt >= until) continue;
    const t = totals.get(r.currency) ?? { currency: r.currency, requests: 0, costMicros: 0, usdMicros: 0, listUsdMicros: 0 };
    totals.set(r.currency, {
      ...t,
      requests: t.requests + 1,
      costMicros: t.costMicros + r.costMicros,
      usdMicros: t.usdMicros + r.usdMicros,
      listUsdMicros: t.listUsdMicros + r.listUsdMicros,
    });
  }
  return [...totals.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1));
}

/** Whole days only; partial days at both edges; an aligned start with a 1 ms tail; across one midnight; inside a day; empty. */
const RANGES: readonly [number, number][] = [
  [D0 - DAY, D0 + 6 * DAY],
  [D0 + 3 * HOUR, D0 + 4 * DAY + 5 * HOUR],
  [D0 + DAY, D0 + 3 * DAY + 1],
  [D0 + DAY - 1, D0 + 4 * DAY],
  [D0 + 2 * DAY - 1, D0 + 2 * DAY + 1],
  [D0 + HOUR, D0 + 20 * HOUR],
  [D0 + DAY, D0 + DAY],
];

async function assertReportsMatch(ledger: Ledger, requests: readonly RequestRecord[]): Promise<void> {
  for (const [since, until] of RANGES) {
    const label = `[${new Date(since).toISOString()}, ${new Date(until).toISOString()})`;
    for (const by of GROUPINGS) {
      const expected = expectedUsage(requests, by, since, until);
      assert.deepEqual(sortRows(await ledger.usage({ sinceMs: since, untilMs: until, by })), expected, `usage by ${by} ${label}`);
      const page = await ledger.usagePage({ sinceMs: since, untilMs: until, by, limit: 1000 });
      assert.deepEqual(sortRows(page.rows), expected, `usagePage by ${by} ${label}`);
      assert.equal(page.totalGroups, expected.length);
    }
    assert.deepEqual(await ledger.spendTotals(since, until), expectedTotals(requests, since, until), `spendTotals ${label}`);
  }
}

async function recordAll(ledger: Ledger, requests: readonly RequestRecord[]): Promise<void> {
  await Promise.all(requests.map((r) => ledger.record(r, [])));
  await ledger.flush();
}

/** Runs the rollup's checks; `resetRollup` drops ledger_daily and forgets its migration (an older ledger), so the next open backfills it. */
async function runRollupContract(t: TestContext, open: OpenTestLedger, resetRollup: () => Promise<void>): Promise<void> {
  const requests = seedRequests(600);
  let ledger = await open();
  t.after(() => ledger.close());

  await t.test('batches added to existing rollup rows: every range and grouping equals the raw rows', async () => {
    for (let i = 0; i < requests.length; i += 150) await recordAll(ledger, requests.slice(i, i + 150));
    await assertReportsMatch(ledger, requests);
  });

  await t.test('a replayed batch (rows already written, mixed with new ones) rolls up only the new rows', async () => {
    const extra = seedRequests(650).slice(600);
    await recordAll(ledger, [...requests.slice(0, 200), ...extra]);
    await recordAll(ledger, requests.slice(100, 300));
    await assertReportsMatch(ledger, [...requests, ...extra]);
    requests.push(...extra);
  });

  await t.test('the migrations backfill the rollup of an existing ledger from its rows, batch sums included', async () => {
    await ledger.close();
    await resetRollup();
    ledger = await open();
    await assertReportsMatch(ledger, requests);
  });
}

test('SQLite: the daily rollup', async (t) => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-ledger-daily-')), 'herd.db');
  await runRollupContract(
    t,
    async (options) => SqliteLedger.open(file, options),
    async () => {
      const db = new Database(file);
      try {
        db.exec('DROP TABLE ledger_daily');
        for (const sql of ROLLUP_SQL) db.exec(sql);
      } finally {
        db.close();
      }
    },
  );
});

test('PostgreSQL: the daily rollup', { skip: skipWithoutPostgres('ledger-daily.test.ts (PostgreSQL)') }, async (t) => {
  const schema = uniqueSchema('h_ledger_daily');
  t.after(() => dropSchema(schema));
  await runRollupContract(
    t,
    (options) => PostgresLedger.open({ ...options, url: DATABASE_URL as string, schema, poolSize: 2 }),
    async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        await client.query(`SET search_path TO "${schema}"`);
        await client.query('DROP TABLE ledger_daily');
        for (const sql of ROLLUP_SQL) await client.query(sql);
      } finally {
        await client.end();
      }
    },
  );
});
