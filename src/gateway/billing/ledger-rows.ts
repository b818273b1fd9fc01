// Request and attempt records as database rows (snake_case columns of ledger-migrations.ts), and
// usage-report rows back from either driver (pg returns BIGINT sums as strings; SQLite as numbers).
import type { InlineAttempt } from './inline-attempt.ts';
import type { AttemptRow, RequestRecord, UsageRow } from './ledger.ts';
import { toSafeMicros, type CurrencyCode } from './money.ts';

/** The dialect of a record that names none (and of every row written before the column existed). */
const DEFAULT_DIALECT = 'openai-chat';

export type DbValue = string | number | null;
export type DbRow = Record<string, DbValue>;

export const REQUEST_COLUMNS = [
  'request_id',
  'key_id',
  'key_name',
  'model_requested',
  'model',
  'provider',
  'upstream_model',
  'prompt_tokens',
  'cached_prompt_tokens',
  'cache_write_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'estimated',
  'currency',
  'cost_micros',
  'usd_micros',
  'list_usd_micros',
  'cache_hit',
  'saved_micros',
  'status',
  'http_status',
  'priority',
  'attempts',
  'latency_ms',
  'ttft_ms',
  'price_source',
  'price_effective_at',
  'started_at',
  'finished_at',
  'origin',
  'dialect',
  // A single attempt carried in the request row (findInlineAttempt); all NULL otherwise.
  'attempt_model',
  'attempt_provider',
  'attempt_upstream_model',
  'attempt_outcome',
  'attempt_http_status',
  'attempt_latency_ms',
  'attempt_ttft_ms',
  'attempt_charged',
  // Migration 5.
  'route_rule',
  'cache_write_1h_tokens',
  'reported_reasoning_tokens',
  // Migration 6.
  'team_id',
  'team_name',
  'key_tags',
  'key_metadata',
  // Migration 8.
  'trace_id',
  // Migration 10.
  'batch_id',
  'realtime_list_usd_micros',
] as const;

export const ATTEMPT_COLUMNS = [
  'request_id',
  'attempt',
  'model',
  'provider',
  'upstream_model',
  'outcome',
  'http_status',
  'prompt_tokens',
  'cached_prompt_tokens',
  'cache_write_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'estimated',
  'currency',
  'cost_micros',
  'usd_micros',
  'list_usd_micros',
  'latency_ms',
  'ttft_ms',
  'started_at',
] as const;

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
const flag = (value: boolean) => (value ? 1 : 0);
// Epoch milliseconds go into BIGINT columns: whole numbers only.
const ms = (value: number) => Math.round(value);

const NO_INLINE_ATTEMPT: readonly DbValue[] = [null, null, null, null, null, null, null, null];

/**
 * A request's values in REQUEST_COLUMNS order, with its single attempt when `inline` is given. SQLite binds
 * them by position, cheaper per row than binding an object by name (docs/decisions/ledger-positional-binds.md).
 */
export function convertRequestToValues(r: RequestRecord, inline?: InlineAttempt): DbValue[] {
  return [
    r.requestId,
    r.keyId,
    orNull(r.keyName),
    r.requestedModel,
    orNull(r.model),
    orNull(r.provider),
    orNull(r.upstreamModel),
    r.promptTokens,
    r.cachedPromptTokens,
    r.cacheWriteTokens,
    r.completionTokens,
    r.reasoningTokens,
    flag(r.estimated),
    r.currency,
    r.costMicros,
    r.usdMicros,
    r.listUsdMicros,
    flag(r.cacheHit),
    r.savedMicros,
    r.status,
    orNull(r.httpStatus),
    orNull(r.priority),
    r.attempts,
    r.latencyMs,
    orNull(r.ttftMs),
    orNull(r.priceSource),
    r.priceEffectiveAt === undefined ? null : ms(r.priceEffectiveAt),
    ms(r.startedAt),
    ms(r.finishedAt),
    orNull(r.origin),
    r.dialect ?? DEFAULT_DIALECT,
    ...(inline === undefined ? NO_INLINE_ATTEMPT : convertInlineAttempt(inline)),
    orNull(r.routeRule),
    r.cacheWrite1hTokens ?? 0,
    orNull(r.reportedReasoningTokens),
    orNull(r.teamId),
    orNull(r.teamName),
    r.keyTags === undefined || r.keyTags.length === 0 ? null : JSON.stringify(r.keyTags),
    r.keyMetadata === undefined || Object.keys(r.keyMetadata).length === 0 ? null : JSON.stringify(r.keyMetadata),
    orNull(r.traceId),
    orNull(r.batchId),
    orNull(r.realtimeListUsdMicros),
  ];
}

function convertInlineAttempt({ attempt: a, charged }: InlineAttempt): DbValue[] {
  return [a.model, a.provider, a.upstreamModel, a.outcome, orNull(a.httpStatus), a.latencyMs, orNull(a.ttftMs), flag(charged)];
}

/** An attempt's values in ATTEMPT_COLUMNS order. */
export function convertAttemptToValues(a: AttemptRow): DbValue[] {
  return [
    a.requestId,
    a.attempt,
    a.model,
    a.provider,
    a.upstreamModel,
    a.outcome,
    orNull(a.httpStatus),
    a.promptTokens,
    a.cachedPromptTokens,
    a.cacheWriteTokens,
    a.completionTokens,
    a.reasoningTokens,
    flag(a.estimated),
    a.currency,
    a.costMicros,
    a.usdMicros,
    a.listUsdMicros,
    a.latencyMs,
    orNull(a.ttftMs),
    ms(a.startedAt),
  ];
}

const zip = (columns: readonly string[], values: DbValue[]): DbRow => {
  const row: DbRow = {};
  for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i] as DbValue;
  return row;
};

/** The request row by column name (Postgres sends a batch as JSON records). */
export function convertRequestToRow(r: RequestRecord, inline?: InlineAttempt): DbRow {
  return zip(REQUEST_COLUMNS, convertRequestToValues(r, inline));
}

export function convertAttemptToRow(a: AttemptRow): DbRow {
  return zip(ATTEMPT_COLUMNS, convertAttemptToValues(a));
}

/** A usage row as either driver returns it. */
export function convertUsageRow(row: Record<string, unknown>): UsageRow {
  const int = (name: string) => toSafeMicros(row[name] as string | number | bigint | null);
  return {
    group: String(row.grp ?? '-'),
    keyName: row.key_name === null || row.key_name === undefined ? undefined : String(row.key_name),
    currency: String(row.currency) as CurrencyCode,
    requests: int('requests'),
    failed: int('failed'),
    cacheHits: int('cache_hits'),
    estimated: int('estimated'),
    promptTokens: int('prompt_tokens'),
    cachedPromptTokens: int('cached_prompt_tokens'),
    cacheWriteTokens: int('cache_write_tokens'),
    completionTokens: int('completion_tokens'),
    reasoningTokens: int('reasoning_tokens'),
    reportedReasoningTokens: int('reported_reasoning_tokens'),
    costMicros: int('cost_micros'),
    usdMicros: int('usd_micros'),
    listUsdMicros: int('list_usd_micros'),
    savedMicros: int('saved_micros'),
    cacheWrite1hTokens: int('cache_write_1h_tokens'),
    cacheReadSavedMicros: int('cache_read_saved_micros'),
    batchRequests: int('batch_requests'),
    batchSavedUsdMicros: int('batch_saved_usd_micros'),
  };
}
