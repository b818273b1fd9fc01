// The console's ledger queries (listRequests, getRequest, usagePage, spendTotals) as every Ledger must
// answer them, run on SQLite and PostgreSQL alike: filters, keyset pages under equal times, ordering, totals.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { HerdError } from '../../../src/core/errors.ts';
import type { AttemptRow, Ledger, RequestFilter, RequestRecord, UsageGroup, UsageRow } from '../../../src/gateway/billing/ledger.ts';
import { type OpenTestLedger, DAY, T0, sampleAttempt, sampleRequest } from './ledger-contract.ts';

const MODELS = ['gpt-4.1', 'claude-sonnet', undefined] as const;
const STATUSES = ['ok', 'ok', 'ok', 'RATE_LIMITED', 'cancelled'] as const;
const DIALECTS = [undefined, 'anthropic-messages', 'openai-chat', 'openai-responses'] as const;

/** Every field set, as a read gives it back (an absent dialect reads as openai-chat). */
function fullRequest(i: number): RequestRecord {
  const model = MODELS[i % 3];
  const status = STATUSES[i % 5] as string;
  return sampleRequest({
    requestId: `req-${String(i).padStart(3, '0')}`,
    keyId: i % 2 === 0 ? 'key_a' : 'key_b',
    keyName: i % 2 === 0 ? 'alpha' : 'beta',
    teamId: i % 4 === 0 ? 'team_x' : undefined,
    teamName: i % 4 === 0 ? 'Team X' : undefined,
    keyTags: i % 4 === 0 ? ['prod', 'eu'] : undefined,
    keyMetadata: i % 4 === 0 ? { owner: 'ops' } : undefined,
    origin: i % 7 === 0 ? 'triton:llm/1' : undefined,
    dialect: DIALECTS[i % 4],
    routeRule: i % 3 === 0 ? 'gpt-*' : undefined,
    requestedModel: i % 6 === 0 ? 'claude-sonnet' : (model ?? 'auto'),
    model,
    provider: model === undefined ? undefined : model.startsWith('gpt') ? 'openai' : 'anthropic',
    upstreamModel: model,
    cacheWrite1hTokens: i % 5 === 0 ? 10 : 0,
    reportedReasoningTokens: i % 2 === 0 ? 100 : undefined,
    currency: i % 8 === 0 ? 'USD' : 'CNY',
    costMicros: 1_000 + i * 10,
    usdMicros: 100 + i,
    listUsdMicros: 150 + i,
    status,
    httpStatus: status === 'ok' ? 200 : status === 'cancelled' ? undefined : 429,
    cacheHit: i % 9 === 0,
    ttftMs: i % 2 === 0 ? 12.5 : undefined,
    priceEffectiveAt: i % 5 === 0 ? T0 - DAY : undefined,
    // Three requests per started_at: pages must split ties without losing or repeating one.
    startedAt: T0 + Math.floor(i / 3) * 60_000,
    finishedAt: T0 + Math.floor(i / 3) * 60_000 + 500,
    attempts: i % 10 === 1 ? 2 : 1,
  });
}

function attemptsOf(r: RequestRecord): AttemptRow[] {
  const base = {
    requestId: r.requestId,
    currency: r.currency,
    startedAt: r.startedAt,
    model: r.model ?? 'gpt-4.1',
    provider: r.provider ?? 'openai',
    upstreamModel: r.upstreamModel ?? 'gpt-4.1',
  };
  const charged = { ...base, costMicros: r.costMicros, usdMicros: r.usdMicros, listUsdMicros: r.listUsdMicros, estimated: r.estimated };
  if (r.attempts === 1) return [sampleAttempt({ ...charged, outcome: r.status === 'ok' ? 'ok' : 'rate_limited' })];
  const free = { promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, costMicros: 0, usdMicros: 0, listUsdMicros: 0 };
  return [sampleAttempt({ ...base, ...free, attempt: 1, outcome: 'timeout', httpStatus: 504 }), sampleAttempt({ ...charged, attempt: 2, startedAt: r.startedAt + 100 })];
}

const expectRead = (r: RequestRecord): RequestRecord => ({
  ...r,
  teamId: r.teamId,
  teamName: r.teamName,
  keyTags: r.keyTags,
  keyMetadata: r.keyMetadata,
  origin: r.origin,
  dialect: r.dialect ?? 'openai-chat',
  routeRule: r.routeRule,
  cacheWrite1hTokens: r.cacheWrite1hTokens ?? 0,
  reportedReasoningTokens: r.reportedReasoningTokens,
});

export const SEEDED = 60;
export const seededRequests = (): RequestRecord[] => Array.from({ length: SEEDED }, (_, i) => fullRequest(i));

export async function seedConsoleRows(ledger: Ledger): Promise<RequestRecord[]> {
  const requests = seededRequests();
  await Promise.all(requests.map((r) => ledger.record(r, attemptsOf(r))));
  await ledger.flush();
  return requests;
}

const newestFirst = (a: RequestRecord, b: RequestRecord) => b.startedAt - a.startedAt || (a.requestId < b.requestId ? 1 : -1);

function matches(r: RequestRecord, f: RequestFilter): boolean {
  if (f.keyId !== undefined && r.keyId !== f.keyId) return false;
  if (f.model !== undefined && r.model !== f.model && r.requestedModel !== f.model) return false;
  if (f.status === 'error' ? r.status === 'ok' : f.status !== undefined && r.status !== f.status) return false;
  if (f.dialect !== undefined && (r.dialect ?? 'openai-chat') !== f.dialect) return false;
  if (f.sinceMs !== undefined && r.startedAt < f.sinceMs) return false;
  return f.untilMs === undefined || r.startedAt < f.untilMs;
}

/** Every page of a filtered list, following the cursors. */
async function readAll(ledger: Ledger, filter: RequestFilter, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await ledger.listRequests({ ...filter, limit, cursor });
    assert.ok(page.rows.length <= limit);
    ids.push(...page.rows.map((r) => r.requestId));
    cursor = page.nextCursor;
    pages++;
    assert.ok(pages <= SEEDED + 1, 'the cursors must end');
  } while (cursor !== undefined);
  return { ids, pages };
}

export const FILTERS: RequestFilter[] = [
  {},
  { keyId: 'key_a' },
  { model: 'gpt-4.1' },
  { model: 'claude-sonnet' },
  { status: 'ok' },
  { status: 'error' },
  { status: 'RATE_LIMITED' },
  { dialect: 'openai-chat' },
  { dialect: 'anthropic-messages' },
  { sinceMs: T0 + 5 * 60_000, untilMs: T0 + 12 * 60_000 },
  { keyId: 'key_b', model: 'claude-sonnet', status: 'error', sinceMs: T0 + 60_000 },
];

export async function runRequestListContract(t: TestContext, open: OpenTestLedger): Promise<void> {
  const ledger = await open();
  t.after(() => ledger.close());
  const requests = await seedConsoleRows(ledger);

  await t.test('every filter, paged 4 at a time across equal started_at: no row lost or repeated, newest first', async () => {
    for (const filter of FILTERS) {
      const expected = requests.filter((r) => matches(r, filter)).sort(newestFirst);
      assert.ok(expected.length > 0, `the fixture has rows for ${JSON.stringify(filter)}`);
      const { ids } = await readAll(ledger, filter, 4);
      assert.deepEqual(
        ids,
        expected.map((r) => r.requestId),
        JSON.stringify(filter),
      );
    }
  });

  await t.test('a page holds whole records; the last page has no cursor', async () => {
    const page = await ledger.listRequests({ limit: 500 });
    assert.equal(page.rows.length, SEEDED);
    assert.equal(page.nextCursor, undefined);
    const byId = new Map(requests.map((r) => [r.requestId, r]));
    for (const row of page.rows) assert.deepEqual(row, expectRead(byId.get(row.requestId) as RequestRecord));
    const exact = await ledger.listRequests({ limit: 3, untilMs: T0 + 60_000 });
    assert.equal(exact.rows.length, 3);
    assert.equal(exact.nextCursor, undefined, 'exactly a page of rows: no empty page after it');
  });

  await t.test('getRequest: the record and its attempts in order, inline or not; unknown id → undefined', async () => {
    for (const r of [requests[0], requests[1], requests[11]] as RequestRecord[]) {
      const detail = await ledger.getRequest(r.requestId);
      assert.ok(detail);
      assert.deepEqual(detail.request, expectRead(r));
      assert.deepEqual(detail.attempts, attemptsOf(r));
    }
    assert.equal(await ledger.getRequest('req-nope'), undefined);
  });

  await t.test('a bad limit or cursor is INVALID_ARG, before any query', async () => {
    const invalid = (pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && pattern.test(err.message);
    await assert.rejects(ledger.listRequests({ limit: 0 }), invalid(/limit must be an integer from 1 to 500/));
    await assert.rejects(ledger.listRequests({ limit: 501 }), invalid(/limit/));
    await assert.rejects(ledger.listRequests({ limit: 2.5 }), invalid(/limit/));
    await assert.rejects(ledger.listRequests({ limit: 5, cursor: 'not a cursor!' }), invalid(/invalid cursor/));
    await assert.rejects(ledger.listRequests({ limit: 5, cursor: Buffer.from('{"t":"x"}').toString('base64url') }), invalid(/invalid cursor/));
    await assert.rejects(ledger.listRequests({ limit: 5, sinceMs: Number.NaN }), invalid(/since/));
  });
}

function expectedUsage(requests: RequestRecord[], by: UsageGroup): Map<string, { cost: number; requests: number }> {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const groups = new Map<string, { cost: number; requests: number }>();
  for (const r of requests) {
    const group = by === 'day' ? day(r.startedAt) : by === 'model' ? (r.model ?? '-') : by === 'provider' ? (r.provider ?? '-') : by === 'key' ? r.keyId : (r.teamId ?? '-');
    const key = `${group}|${r.currency}`;
    const g = groups.get(key) ?? { cost: 0, requests: 0 };
    groups.set(key, { cost: g.cost + r.costMicros, requests: g.requests + 1 });
  }
  return groups;
}

export async function runUsagePageContract(t: TestContext, open: OpenTestLedger): Promise<void> {
  const ledger = await open();
  t.after(() => ledger.close());
  // Spread over three days so `by: day` has several groups.
  const requests = seededRequests().map((r, i) => ({ ...r, startedAt: r.startedAt + (i % 3) * DAY, finishedAt: r.finishedAt + (i % 3) * DAY }));
  await Promise.all(requests.map((r) => ledger.record(r, [])));
  await ledger.flush();
  const range = { sinceMs: T0 - DAY, untilMs: T0 + 10 * DAY };

  await t.test('usagePage: pages 2 groups at a time equal usage(); day oldest first, else dearest first; totalGroups on every page', async () => {
    for (const by of ['day', 'model', 'provider', 'key', 'team'] as const) {
      const rows: UsageRow[] = [];
      let cursor: string | undefined;
      do {
        const page = await ledger.usagePage({ ...range, by, limit: 2, cursor });
        assert.equal(page.totalGroups, expectedUsage(requests, by).size, by);
        rows.push(...page.rows);
        cursor = page.nextCursor;
        assert.ok(rows.length <= SEEDED, 'the cursors must end');
      } while (cursor !== undefined);
      const all = await ledger.usage({ ...range, by });
      const sorted =
        by === 'day' ? all : [...all].sort((a, b) => b.costMicros - a.costMicros || (a.group < b.group ? -1 : a.group > b.group ? 1 : a.currency < b.currency ? -1 : 1));
      assert.deepEqual(rows, sorted, by);
      for (const row of rows) assert.equal(row.costMicros, expectedUsage(requests, by).get(`${row.group}|${row.currency}`)?.cost, `${by} ${row.group}`);
    }
    const byKey = await ledger.usagePage({ ...range, by: 'key', limit: 1000 });
    assert.deepEqual(
      byKey.rows.map((r) => [r.group, r.keyName]),
      byKey.rows.map((r) => [r.group, r.group === 'key_a' ? 'alpha' : 'beta']),
    );
  });

  await t.test('usagePage: an empty range is 0 groups; a cursor of another grouping or a bad limit is INVALID_ARG', async () => {
    assert.deepEqual(await ledger.usagePage({ sinceMs: 0, untilMs: 1, by: 'model', limit: 10 }), { rows: [], nextCursor: undefined, totalGroups: 0 });
    const first = await ledger.usagePage({ ...range, by: 'model', limit: 1 });
    assert.ok(first.nextCursor);
    const invalid = (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG';
    await assert.rejects(ledger.usagePage({ ...range, by: 'key', limit: 1, cursor: first.nextCursor }), invalid);
    await assert.rejects(ledger.usagePage({ ...range, by: 'key', limit: 1001 }), invalid);
    await assert.rejects(ledger.usagePage({ ...range, by: 'key', limit: 1, cursor: '!!' }), invalid);
  });

  await t.test('spendTotals: one entry per currency, only the range', async () => {
    const totals = await ledger.spendTotals(range.sinceMs, range.untilMs);
    for (const currency of ['CNY', 'USD'] as const) {
      const rows = requests.filter((r) => r.currency === currency);
      const sum = (f: (r: RequestRecord) => number) => rows.reduce((s, r) => s + f(r), 0);
      assert.deepEqual(
        totals.find((x) => x.currency === currency),
        { currency, requests: rows.length, costMicros: sum((r) => r.costMicros), usdMicros: sum((r) => r.usdMicros), listUsdMicros: sum((r) => r.listUsdMicros) },
      );
    }
    assert.equal(totals.length, 2);
    const firstDay = await ledger.spendTotals(T0, T0 + DAY);
    assert.equal(
      firstDay.reduce((s, x) => s + x.requests, 0),
      requests.filter((r) => r.startedAt < T0 + DAY).length,
    );
    assert.deepEqual(await ledger.spendTotals(0, 1), []);
  });
}
