// Request and attempt rows read back from either driver into the Ledger's records (pg returns BIGINT as
// strings, SQLite as numbers): the console's list and detail. The write side is ledger-rows.ts.
import type { AttemptRow, RequestRecord, SpendTotal } from './ledger.ts';
import { toSafeMicros, type CurrencyCode } from './money.ts';

type Row = Record<string, unknown>;

const int = (value: unknown) => toSafeMicros(value as string | number | bigint | null);
const optionalInt = (value: unknown) => (value === null || value === undefined ? undefined : toSafeMicros(value as string | number | bigint));
const optionalNumber = (value: unknown) => (value === null || value === undefined ? undefined : Number(value));
const optionalText = (value: unknown) => (value === null || value === undefined ? undefined : String(value));

/** JSON a row stored itself; a value that does not parse (hand-edited) reads as absent rather than failing the page. */
function parseJson<T>(value: unknown, accept: (parsed: unknown) => parsed is T): T | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return accept(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isStringRecord = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/** A row of REQUEST_READ_COLUMNS (request-list-query.ts). */
export function convertRowToRequest(row: Row): RequestRecord {
  return {
    requestId: String(row.request_id),
    keyId: String(row.key_id),
    keyName: optionalText(row.key_name),
    teamId: optionalText(row.team_id),
    teamName: optionalText(row.team_name),
    keyTags: parseJson(row.key_tags, isStringArray),
    keyMetadata: parseJson(row.key_metadata, isStringRecord),
    origin: optionalText(row.origin),
    dialect: optionalText(row.dialect),
    routeRule: optionalText(row.route_rule),
    requestedModel: String(row.model_requested),
    model: optionalText(row.model),
    provider: optionalText(row.provider),
    upstreamModel: optionalText(row.upstream_model),
    promptTokens: int(row.prompt_tokens),
    cachedPromptTokens: int(row.cached_prompt_tokens),
    cacheWriteTokens: int(row.cache_write_tokens),
    cacheWrite1hTokens: int(row.cache_write_1h_tokens),
    completionTokens: int(row.completion_tokens),
    reasoningTokens: int(row.reasoning_tokens),
    reportedReasoningTokens: optionalInt(row.reported_reasoning_tokens),
    estimated: int(row.estimated) === 1,
    currency: String(row.currency) as CurrencyCode,
    costMicros: int(row.cost_micros),
    usdMicros: int(row.usd_micros),
    listUsdMicros: int(row.list_usd_micros),
    cacheHit: int(row.cache_hit) === 1,
    savedMicros: int(row.saved_micros),
    status: String(row.status),
    httpStatus: optionalNumber(row.http_status),
    priority: optionalText(row.priority),
    attempts: int(row.attempts),
    latencyMs: Number(row.latency_ms),
    ttftMs: optionalNumber(row.ttft_ms),
    priceSource: optionalText(row.price_source),
    priceEffectiveAt: optionalInt(row.price_effective_at),
    startedAt: int(row.started_at),
    finishedAt: int(row.finished_at),
    // Only when traced: a record read back equals the one written, which names no trace when tracing was off.
    ...(typeof row.trace_id === 'string' ? { traceId: row.trace_id } : {}),
    // Only on batch lines, for the same reason.
    ...(typeof row.batch_id === 'string' ? { batchId: row.batch_id } : {}),
    ...(row.realtime_list_usd_micros === null || row.realtime_list_usd_micros === undefined ? {} : { realtimeListUsdMicros: int(row.realtime_list_usd_micros) }),
  };
}

/** A row of ledger_attempts_all (both the attempts table and a request's inline attempt). */
export function convertRowToAttempt(row: Row): AttemptRow {
  return {
    requestId: String(row.request_id),
    attempt: int(row.attempt),
    model: String(row.model),
    provider: String(row.provider),
    upstreamModel: String(row.upstream_model),
    outcome: String(row.outcome),
    httpStatus: optionalNumber(row.http_status),
    promptTokens: int(row.prompt_tokens),
    cachedPromptTokens: int(row.cached_prompt_tokens),
    cacheWriteTokens: int(row.cache_write_tokens),
    completionTokens: int(row.completion_tokens),
    reasoningTokens: int(row.reasoning_tokens),
    estimated: int(row.estimated) === 1,
    currency: String(row.currency) as CurrencyCode,
    costMicros: int(row.cost_micros),
    usdMicros: int(row.usd_micros),
    listUsdMicros: int(row.list_usd_micros),
    latencyMs: Number(row.latency_ms),
    ttftMs: optionalNumber(row.ttft_ms),
    startedAt: int(row.started_at),
  };
}

export function convertRowToSpendTotal(row: Row): SpendTotal {
  return {
    currency: String(row.currency) as CurrencyCode,
    requests: int(row.requests),
    costMicros: int(row.cost_micros),
    usdMicros: int(row.usd_micros),
    listUsdMicros: int(row.list_usd_micros),
  };
}
