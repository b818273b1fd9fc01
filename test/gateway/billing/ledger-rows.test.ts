// The ledger's rows: values in column order (what SQLite binds by position) name the right fields.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ATTEMPT_COLUMNS,
  REQUEST_COLUMNS,
  convertAttemptToRow,
  convertAttemptToValues,
  convertRequestToRow,
  convertRequestToValues,
} from '../../../src/gateway/billing/ledger-rows.ts';
import type { AttemptRow, RequestRecord } from '../../../src/gateway/billing/ledger.ts';

const request: RequestRecord = {
  requestId: 'req-1',
  keyId: 'key-1',
  keyName: 'team',
  requestedModel: 'fast',
  model: 'gpt-4.1',
  provider: 'holysheep',
  upstreamModel: 'gpt-4.1-2025-04-14',
  promptTokens: 101,
  cachedPromptTokens: 102,
  cacheWriteTokens: 103,
  completionTokens: 104,
  reasoningTokens: 105,
  estimated: true,
  currency: 'CNY',
  costMicros: 201,
  usdMicros: 202,
  listUsdMicros: 203,
  cacheHit: false,
  savedMicros: 204,
  status: 'ok',
  httpStatus: 200,
  priority: 'high',
  attempts: 2,
  latencyMs: 12.5,
  ttftMs: 3.25,
  priceSource: 'herd.yaml',
  priceEffectiveAt: 1_764_460_800_000.4,
  startedAt: 1_764_460_801_000.6,
  finishedAt: 1_764_460_802_000,
};

const attempt: AttemptRow = {
  requestId: 'req-1',
  attempt: 2,
  model: 'gpt-4.1',
  provider: 'openai',
  upstreamModel: 'gpt-4.1',
  outcome: 'rate_limited',
  httpStatus: 429,
  promptTokens: 11,
  cachedPromptTokens: 12,
  cacheWriteTokens: 13,
  completionTokens: 14,
  reasoningTokens: 15,
  estimated: false,
  currency: 'USD',
  costMicros: 21,
  usdMicros: 22,
  listUsdMicros: 23,
  latencyMs: 4.5,
  ttftMs: undefined,
  startedAt: 1_764_460_801_500,
};

describe('ledger rows', () => {
  it('a request row names every field by its column', () => {
    assert.equal(convertRequestToValues(request).length, REQUEST_COLUMNS.length);
    assert.deepEqual(convertRequestToRow(request), {
      request_id: 'req-1',
      key_id: 'key-1',
      key_name: 'team',
      model_requested: 'fast',
      model: 'gpt-4.1',
      provider: 'holysheep',
      upstream_model: 'gpt-4.1-2025-04-14',
      prompt_tokens: 101,
      cached_prompt_tokens: 102,
      cache_write_tokens: 103,
      completion_tokens: 104,
      reasoning_tokens: 105,
      estimated: 1,
      currency: 'CNY',
      cost_micros: 201,
      usd_micros: 202,
      list_usd_micros: 203,
      cache_hit: 0,
      saved_micros: 204,
      status: 'ok',
      http_status: 200,
      priority: 'high',
      attempts: 2,
      latency_ms: 12.5,
      ttft_ms: 3.25,
      price_source: 'herd.yaml',
      price_effective_at: 1_764_460_800_000,
      started_at: 1_764_460_801_001,
      finished_at: 1_764_460_802_000,
      origin: null,
      dialect: 'openai-chat',
      attempt_model: null,
      attempt_provider: null,
      attempt_upstream_model: null,
      attempt_outcome: null,
      attempt_http_status: null,
      attempt_latency_ms: null,
      attempt_ttft_ms: null,
      attempt_charged: null,
      route_rule: null,
      cache_write_1h_tokens: 0,
      reported_reasoning_tokens: null,
      team_id: null,
      team_name: null,
      key_tags: null,
      key_metadata: null,
      trace_id: null,
      batch_id: null,
      realtime_list_usd_micros: null,
    });
    const tagged = convertRequestToRow({ ...request, teamId: 'tm_1', teamName: 'research', keyTags: ['prod'], keyMetadata: { cost_center: '42' } });
    assert.deepEqual([tagged.team_id, tagged.team_name, tagged.key_tags, tagged.key_metadata], ['tm_1', 'research', '["prod"]', '{"cost_center":"42"}']);
    const line = convertRequestToRow({ ...request, batchId: 'batch_1', realtimeListUsdMicros: 900 });
    assert.deepEqual([line.batch_id, line.realtime_list_usd_micros], ['batch_1', 900]);
  });

  it('a single attempt inline: its own columns in the request row, and the flag for its tokens', () => {
    const row = convertRequestToRow(request, { attempt, charged: false });
    assert.equal(convertRequestToValues(request, { attempt, charged: true }).length, REQUEST_COLUMNS.length);
    assert.deepEqual(Object.fromEntries(Object.entries(row).filter(([k]) => k.startsWith('attempt_'))), {
      attempt_model: attempt.model,
      attempt_provider: attempt.provider,
      attempt_upstream_model: attempt.upstreamModel,
      attempt_outcome: attempt.outcome,
      attempt_http_status: attempt.httpStatus ?? null,
      attempt_latency_ms: 4.5,
      attempt_ttft_ms: null,
      attempt_charged: 0,
    });
  });

  it('an attempt row names every field by its column; absent values are NULL', () => {
    assert.equal(convertAttemptToValues(attempt).length, ATTEMPT_COLUMNS.length);
    assert.deepEqual(convertAttemptToRow(attempt), {
      request_id: 'req-1',
      attempt: 2,
      model: 'gpt-4.1',
      provider: 'openai',
      upstream_model: 'gpt-4.1',
      outcome: 'rate_limited',
      http_status: 429,
      prompt_tokens: 11,
      cached_prompt_tokens: 12,
      cache_write_tokens: 13,
      completion_tokens: 14,
      reasoning_tokens: 15,
      estimated: 0,
      currency: 'USD',
      cost_micros: 21,
      usd_micros: 22,
      list_usd_micros: 23,
      latency_ms: 4.5,
      ttft_ms: null,
      started_at: 1_764_460_801_500,
    });
  });
});
