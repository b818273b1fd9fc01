// The request path's billing calls end to end on a real SQLite ledger: the reserve estimate (dearest
// deployment of the model the route resolved: aliases, tiers and auto), finish() for a completion, a cut-off stream, a
// failure after retries, and a cache hit — costs, settlements, request and attempt rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { HerdError } from '../../../src/core/errors.ts';
import { BillingService } from '../../../src/gateway/billing/billing-service.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import type { Usage } from '../../../src/gateway/protocol/chat-types.ts';
import { UpstreamError } from '../../../src/gateway/protocol/upstream-error.ts';
import { UpstreamRouteError, type AttemptRecord } from '../../../src/gateway/router/attempt-record.ts';
import { mapErrorToOpenAI } from '../../../src/http/map-openai-error.ts';
import { buildGatewayCatalog } from '../../../src/gateway/router/gateway-catalog.ts';
import { PromptTokenEstimate } from '../../../src/gateway/router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel } from '../../../src/gateway/router/resolve-route.ts';
import { billingTestConfig } from './billing-fixtures.ts';
import type { CompletionMeta } from '../../../src/gateway/router/chat-meta.ts';
import { dayMonthLines } from './budget-fixtures.ts';

const START = Date.parse('2026-05-20T10:00:00Z');

function setup() {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-billing-')), 'herd.db');
  const now = { ms: START + 900 };
  const ledger = SqliteLedger.open(file, { flushIntervalMs: 60_000, now: () => now.ms });
  const billing = new BillingService({ config: billingTestConfig(), ledger, now: () => now.ms });
  return { file, now, ledger, billing };
}

const catalog = buildGatewayCatalog(billingTestConfig(), {});

/** The flow's reserve estimate (admit-flight.ts): the route resolved once, then its model's dearest deployment. */
async function estimate(billing: BillingService, requested: string, promptTokens: number, maxCompletionTokens?: number): Promise<number> {
  // One token per word: the prompt `auto` sees is as long as the count priced.
  const route = await resolveRoute(catalog, requested, new PromptTokenEstimate([' word'.repeat(promptTokens)]));
  return billing.estimateForModel({ model: route.model, upstreamModelOf: (d) => resolveRouteUpstreamModel(route, d), promptTokens, maxCompletionTokens });
}

const usage = (over: Partial<Usage> = {}): Usage => ({
  promptTokens: 1_000,
  cachedPromptTokens: 0,
  cacheWriteTokens: 0,
  completionTokens: 500,
  reasoningTokens: 0,
  estimated: false,
  raw: {},
  ...over,
});

function completionMeta(attempts: AttemptRecord[], u: Usage, provider = 'openai'): CompletionMeta {
  return {
    requestedModel: 'gpt4',
    route: 'alias',
    routeRule: 'alias:gpt4',
    model: 'gpt-4.1',
    provider,
    upstreamModel: 'gpt-4.1',
    attempts,
    upstreamMs: 900,
    waitedMs: 250,
    overheadMs: 0.4,
    warnings: [],
    usage: u,
    rawFinishReason: 'stop',
  };
}

const attempt = (over: Partial<AttemptRecord>): AttemptRecord => ({ model: 'gpt-4.1', provider: 'openai', upstreamModel: 'gpt-4.1', outcome: 'ok', durationMs: 600, ...over });

test('the reserve estimate: prompt + completion limit on the dearest deployment of the resolved model; aliases, tiers and auto', async () => {
  const { billing, ledger } = setup();
  try {
    // gpt-4.1: openai at ¥7.3/$ is dearest: 1 000 × $2 × 7.3 + 500 × $8 × 7.3 = 14 600 + 29 200 µ¥.
    assert.equal(await estimate(billing, 'gpt-4.1', 1_000, 500), 43_800);
    assert.equal(await estimate(billing, 'gpt4', 1_000, 500), 43_800);
    assert.equal(await estimate(billing, 'advanced', 1_000, 500), 43_800);
    assert.equal(await estimate(billing, 'gpt-4.1', 1_000), 73_000, 'no limit: as many completion tokens as prompt tokens');
    // auto: 1 000 prompt tokens are past the fast rule's 500, so quality (claude: 3 000 + 7 500 = 10 500 µ$), × 7.3.
    assert.equal(await estimate(billing, 'auto', 1_000, 500), 76_650);
    // …and a short prompt is fast's (gemini on its official API: 100 × 0.30 + 500 × 2.50 = 1 280 µ$), × 7.3.
    assert.equal(await estimate(billing, 'auto', 100, 500), 9_344);
    await assert.rejects(estimate(billing, 'nope', 1_000), (err: unknown) => err instanceof HerdError && err.code === 'NOT_FOUND');
  } finally {
    await ledger.close();
  }
});

test('a completion after a retry: settled at its real cost, one request row and one row per attempt', async () => {
  const { billing, ledger, file } = setup();
  try {
    const key = { id: 'key_a', name: 'team a' };
    const estimateMicros = await estimate(billing, 'gpt4', 1_000, 500);
    await billing.reserve({ keyId: key.id, requestId: 'r1', estimateMicros, lines: dayMonthLines(key.id, { dayMicros: 100_000 }, START) });
    const meta = completionMeta(
      [attempt({ outcome: 'rate_limited', status: 429, durationMs: 50, next: 'retry', waitMs: 250 }), attempt({ durationMs: 600 })],
      usage({ cachedPromptTokens: 400, reasoningTokens: 120 }),
    );
    const done = await billing.finish({
      requestId: 'r1',
      key,
      requestedModel: 'gpt4',
      priority: 'HIGH',
      startedAt: START,
      latencyMs: 901.5,
      httpStatus: 200,
      outcome: 'completion',
      meta,
    });
    // 600 × $2 + 400 × $0.50 + 500 × $8 = 1 200 + 200 + 4 000 = 5 400 µ$ list; × 7.3 = 39 420 µ¥.
    assert.equal(done.record.costMicros, 39_420);
    assert.equal(done.record.listUsdMicros, 5_400);
    assert.deepEqual(done.settlement, { state: 'settled', actualMicros: 39_420, changed: true });
    assert.deepEqual(await ledger.spend('key_a'), { dayMicros: 39_420, monthMicros: 39_420 });
    await ledger.flush();
    const db = new Database(file, { readonly: true });
    const row = db.prepare('SELECT * FROM ledger_requests').get() as Record<string, unknown>;
    assert.equal(row.status, 'ok');
    assert.equal(row.model_requested, 'gpt4');
    assert.equal(row.attempts, 2);
    assert.equal(row.priority, 'HIGH');
    assert.equal(row.latency_ms, 901.5);
    assert.equal(row.price_source, 'herd.yaml models.gpt-4.1.price');
    const attempts = db.prepare('SELECT attempt, outcome, http_status, cost_micros, completion_tokens, started_at FROM ledger_attempts_all ORDER BY attempt').all();
    assert.deepEqual(attempts, [
      { attempt: 1, outcome: 'rate_limited', http_status: 429, cost_micros: 0, completion_tokens: 0, started_at: START },
      { attempt: 2, outcome: 'ok', http_status: null, cost_micros: 39_420, completion_tokens: 500, started_at: START + 300 },
    ]);
    db.close();
  } finally {
    await ledger.close();
  }
});

test('a stream cut off by the client is billed from the tokens Herd counted, marked estimated; its single attempt rides in its request row', async () => {
  const { billing, ledger, file } = setup();
  try {
    await billing.reserve({ keyId: 'k', requestId: 's1', estimateMicros: 50_000, lines: dayMonthLines('k', {}, START) });
    const { usage: _u, rawFinishReason: _r, ...meta } = completionMeta([attempt({ provider: 'holysheep', durationMs: 180 })], usage(), 'holysheep');
    const done = await billing.finish({
      requestId: 's1',
      key: { id: 'k' },
      requestedModel: 'gpt-4.1',
      startedAt: START,
      outcome: 'stream',
      meta: { ...meta, provider: 'holysheep' },
      ttftMs: 190,
      result: {
        outcome: 'cancelled',
        usage: usage({ completionTokens: 37, estimated: true, raw: undefined }),
        finishReason: null,
        rawFinishReason: null,
        chunks: 12,
        streamMs: 400,
      },
    });
    assert.equal(done.record.status, 'cancelled');
    assert.equal(done.record.estimated, true);
    assert.equal(done.record.ttftMs, 190);
    assert.equal(done.record.costMicros, 2_296, '1 000 × $2 + 37 × $8 = 2 296 µ$ at ¥1/$');
    assert.deepEqual(await ledger.spend('k'), { dayMicros: 2_296, monthMicros: 2_296 });
    await ledger.flush();
    const db = new Database(file, { readonly: true });
    assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM ledger_attempts').get(), { n: 0 });
    assert.deepEqual(db.prepare('SELECT attempt, provider, outcome, completion_tokens, estimated, cost_micros, latency_ms, ttft_ms, started_at FROM ledger_attempts_all').all(), [
      { attempt: 1, provider: 'holysheep', outcome: 'ok', completion_tokens: 37, estimated: 1, cost_micros: 2_296, latency_ms: 180, ttft_ms: 180, started_at: START },
    ]);
    db.close();
  } finally {
    await ledger.close();
  }
});

test('a request that failed everywhere is released and recorded with its attempts; a budget refusal is 429 insufficient_quota', async () => {
  const { billing, ledger } = setup();
  try {
    await billing.reserve({ keyId: 'k', requestId: 'f1', estimateMicros: 9_000, lines: dayMonthLines('k', { dayMicros: 10_000 }, START) });
    await assert.rejects(billing.reserve({ keyId: 'k', requestId: 'f2', estimateMicros: 2_000, lines: dayMonthLines('k', { dayMicros: 10_000 }, START) }), (err: HerdError) => {
      const answer = mapErrorToOpenAI(err);
      return (
        answer.status === 429 &&
        answer.body.error.code === 'insufficient_quota' &&
        !('retry-after' in answer.headers) &&
        /^this request may cost up to ¥0\.002 and budget ¥0\.01 per day for key k has ¥0\.001 left; it resets at 00:00 UTC/.test(err.message)
      );
    });
    const failure = new UpstreamError('upstream timed out', { provider: 'openai', failure: 'timeout' });
    const error = UpstreamRouteError.wrap(failure, [
      attempt({ outcome: 'timeout', durationMs: 30_000, next: 'next-deployment' }),
      attempt({ provider: 'holysheep', outcome: 'timeout', durationMs: 30_000, next: 'answer' }),
    ]);
    const done = await billing.finish({ requestId: 'f1', key: { id: 'k' }, requestedModel: 'gpt-4.1', startedAt: START, httpStatus: 504, outcome: 'error', error });
    assert.deepEqual(done.settlement, { state: 'released', changed: true });
    assert.equal(done.record.status, 'UPSTREAM_TIMEOUT');
    assert.equal(done.record.attempts, 2);
    assert.equal(done.record.model, undefined);
    assert.deepEqual(await ledger.spend('k'), { dayMicros: 0, monthMicros: 0 });
    // Refused before going upstream: recorded, nothing to release.
    const refused = await billing.finish({
      requestId: 'f2',
      key: { id: 'k' },
      requestedModel: 'gpt-4.1',
      startedAt: START,
      reserved: false,
      outcome: 'error',
      error: new HerdError('BUDGET_EXCEEDED', 'over'),
    });
    assert.equal(refused.settlement, undefined);
    assert.equal(refused.record.status, 'BUDGET_EXCEEDED');
  } finally {
    await ledger.close();
  }
});

test('a cache hit costs nothing and records what it saved', async () => {
  const { billing, ledger } = setup();
  try {
    const done = await billing.finish({
      requestId: 'c1',
      key: { id: 'k' },
      requestedModel: 'gpt-4.1',
      startedAt: START,
      reserved: false,
      outcome: 'cache-hit',
      model: 'gpt-4.1',
      provider: 'openai',
      upstreamModel: 'gpt-4.1',
      usage: usage(),
    });
    assert.equal(done.record.costMicros, 0);
    assert.equal(done.record.cacheHit, true);
    assert.equal(done.record.savedMicros, 43_800, '1 000 × $2 + 500 × $8 = 6 000 µ$ × 7.3');
    assert.equal(done.settlement, undefined, 'no reservation, nothing charged: no ledger round trip');
    await ledger.flush();
    const [row] = await ledger.usage({ sinceMs: START - 1, untilMs: START + 1_000, by: 'model' });
    assert.deepEqual([row?.requests, row?.cacheHits, row?.promptTokens, row?.costMicros, row?.savedMicros], [1, 1, 0, 0, 43_800]);
  } finally {
    await ledger.close();
  }
});

// The start-up recovery openLedger runs with billing.stale_reservation_minutes (60 by default).
test('recover() releases reservations older than billing.stale_reservation_minutes', async () => {
  const { billing, ledger, now } = setup();
  try {
    await billing.reserve({ keyId: 'k', requestId: 'old', estimateMicros: 500, lines: dayMonthLines('k', {}, START - 59 * 60_000), atMs: START - 59 * 60_000 });
    const recover = () => ledger.recover({ olderThanMs: 60 * 60_000, nowMs: now.ms });
    assert.deepEqual(await recover(), { released: 0, releasedMicros: 0, settled: 0, settledMicros: 0 });
    now.ms += 2 * 60_000;
    assert.deepEqual(await recover(), { released: 1, releasedMicros: 500, settled: 0, settledMicros: 0 });
  } finally {
    await ledger.close();
  }
});
