// finish() for lines of a client batch on a real SQLite ledger: a line answered through the upstream's batch
// API is billed at the batch price with the realtime list price beside it, a line run realtime at the realtime
// price; both name the batch and settle its one reservation line by line, once, even when finished twice.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BillingService, type FinishInput } from '../../../src/gateway/billing/billing-service.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import type { CompletionMeta } from '../../../src/gateway/router/chat-meta.ts';
import { billingTestConfig } from './billing-fixtures.ts';
import { dayMonthLines } from './budget-fixtures.ts';

const START = Date.parse('2026-05-20T10:00:00Z');

function meta(provider: string): CompletionMeta {
  const usage = { promptTokens: 1_000, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 500, reasoningTokens: 0, estimated: false, raw: {} };
  return {
    requestedModel: 'gpt-4.1',
    route: 'model',
    routeRule: 'gpt-4.1',
    model: 'gpt-4.1',
    provider,
    upstreamModel: 'gpt-4.1',
    attempts: [{ model: 'gpt-4.1', provider, upstreamModel: 'gpt-4.1', outcome: 'ok', durationMs: 600 }],
    upstreamMs: 600,
    waitedMs: 0,
    overheadMs: 0,
    warnings: [],
    usage,
    rawFinishReason: 'stop',
  };
}

test('batch lines: priced at the batch or realtime price, named by the batch, settled against its reservation once', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-billing-batch-')), 'herd.db');
  const now = { ms: START + 900 };
  const ledger = SqliteLedger.open(file, { flushIntervalMs: 60_000, now: () => now.ms });
  const billing = new BillingService({ config: billingTestConfig(), ledger, now: () => now.ms });
  try {
    const lines = dayMonthLines('key_1', { dayMicros: 1_000_000 }, START);
    await ledger.reserve({ keyId: 'key_1', requestId: 'batch_1', estimateMicros: 100_000, lines, expiresAtMs: START + 86_400_000 });
    const line = (requestId: string, provider: string, upstreamBatch: boolean): FinishInput => ({
      requestId,
      key: { id: 'key_1', name: 'a' },
      lines,
      requestedModel: 'gpt-4.1',
      startedAt: START,
      httpStatus: 200,
      outcome: 'completion',
      meta: meta(provider),
      batch: { id: 'batch_1', upstreamBatch },
    });
    // Realtime on openai: 1 000 × $2 + 500 × $8 = $0.006 list, × 7.3 = 43 800 µ¥; half of it through the batch API.
    const viaBatch = await billing.finish(line('line_1', 'openai', true));
    assert.deepEqual(
      [viaBatch.record.batchId, viaBatch.record.costMicros, viaBatch.record.listUsdMicros, viaBatch.record.realtimeListUsdMicros],
      ['batch_1', 21_900, 3_000, 6_000],
    );
    const realtime = await billing.finish(line('line_2', 'openai', false));
    assert.deepEqual([realtime.record.costMicros, realtime.record.listUsdMicros, realtime.record.realtimeListUsdMicros], [43_800, 6_000, 6_000]);
    await billing.finish(line('line_1', 'openai', true));
    assert.deepEqual(await ledger.budgetSpend(lines), [100_000, 100_000], 'both lines within the hold: moved to settled, the total stays');
    await ledger.release('batch_1');
    assert.deepEqual(await ledger.spend('key_1', START), { dayMicros: 65_700, monthMicros: 65_700 }, 'the replayed line charged once');
    const report = await ledger.usage({ sinceMs: START - 1, untilMs: START + 1, by: 'provider' });
    assert.deepEqual([report[0]?.requests, report[0]?.batchRequests, report[0]?.batchSavedUsdMicros], [2, 2, 3_000]);
  } finally {
    await ledger.close();
  }
});
