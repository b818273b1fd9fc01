// Request and attempt records as database rows (snake_case columns of ledger-migrations.ts), and
// usage-report rows back from either driver (pg returns BIGINT sums as strings; SQLite as numbers).
import type { AttemptRow, RequestRecord, UsageRow } from './ledger.ts';
import { toSafeMicros, type CurrencyCode } from './money.ts';

export type DbValue = string | number | null;
export type DbRow = Record<string, DbValue>;

export const REQUEST_COLUMNS = [
  'request_id', 'key_id', 'key_name', 'model_requested', 'model', 'provider', 'upstream_model',
  'prompt_tokens', 'cached_prompt_tokens', 'cache_write_tokens', 'completion_tokens', 'reasoning_tokens', 'estimated',
  'currency', 'cost_micros', 'usd_micros', 'list_usd_micros', 'cache_hit', 'saved_micros', 'status', 'http_status',
  'priority', 'attempts', 'latency_ms', 'ttft_ms', 'price_source', 'price_effective_at', 'started_at', 'finished_at',
] as const;

export const ATTEMPT_COLUMNS = [
  'request_id', 'attempt', 'model', 'provider', 'upstream_model', 'outcome', 'http_status',
  'prompt_tokens', 'cached_prompt_tokens', 'cache_write_tokens', 'completion_tokens', 'reasoning_tokens', 'estimated',
  'currency', 'cost_micros', 'usd_micros', 'list_usd_micros', 'latency_ms', 'ttft_ms', 'started_at',
] as const;

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
const flag = (value: boolean) => (value ? 1 : 0);
// Epoch milliseconds go into BIGINT columns: whole numbers only.
const ms = (value: number) => Math.round(value);

export function convertRequestToRow(r: RequestRecord): DbRow {
  return {
    request_id: r.requestId, key_id: r.keyId, key_name: orNull(r.keyName), model_requested: r.requestedModel,
    model: orNull(r.model), provider: orNull(r.provider), upstream_model: orNull(r.upstreamModel),
    prompt_tokens: r.promptTokens, cached_prompt_tokens: r.cachedPromptTokens, cache_write_tokens: r.cacheWriteTokens,
    completion_tokens: r.completionTokens, reasoning_tokens: r.reasoningTokens, estimated: flag(r.estimated),
    currency: r.currency, cost_micros: r.costMicros, usd_micros: r.usdMicros, list_usd_micros: r.listUsdMicros,
    cache_hit: flag(r.cacheHit), saved_micros: r.savedMicros, status: r.status, http_status: orNull(r.httpStatus),
    priority: orNull(r.priority), attempts: r.attempts, latency_ms: r.latencyMs, ttft_ms: orNull(r.ttftMs),
    price_source: orNull(r.priceSource), price_effective_at: r.priceEffectiveAt === undefined ? null : ms(r.priceEffectiveAt),
    started_at: ms(r.startedAt), finished_at: ms(r.finishedAt),
  };
}

export function convertAttemptToRow(a: AttemptRow): DbRow {
  return {
    request_id: a.requestId, attempt: a.attempt, model: a.model, provider: a.provider, upstream_model: a.upstreamModel,
    outcome: a.outcome, http_status: orNull(a.httpStatus),
    prompt_tokens: a.promptTokens, cached_prompt_tokens: a.cachedPromptTokens, cache_write_tokens: a.cacheWriteTokens,
    completion_tokens: a.completionTokens, reasoning_tokens: a.reasoningTokens, estimated: flag(a.estimated),
    currency: a.currency, cost_micros: a.costMicros, usd_micros: a.usdMicros, list_usd_micros: a.listUsdMicros,
    latency_ms: a.latencyMs, ttft_ms: orNull(a.ttftMs), started_at: ms(a.startedAt),
  };
}

/** A usage row as either driver returns it. */
export function convertUsageRow(row: Record<string, unknown>): UsageRow {
  const int = (name: string) => toSafeMicros(row[name] as string | number | bigint | null);
  return {
    group: String(row.grp ?? '-'),
    keyName: row.key_name === null || row.key_name === undefined ? undefined : String(row.key_name),
    currency: String(row.currency) as CurrencyCode,
    requests: int('requests'), failed: int('failed'), cacheHits: int('cache_hits'), estimated: int('estimated'),
    promptTokens: int('prompt_tokens'), cachedPromptTokens: int('cached_prompt_tokens'), cacheWriteTokens: int('cache_write_tokens'),
    completionTokens: int('completion_tokens'), reasoningTokens: int('reasoning_tokens'),
    costMicros: int('cost_micros'), usdMicros: int('usd_micros'), listUsdMicros: int('list_usd_micros'), savedMicros: int('saved_micros'),
  };
}
