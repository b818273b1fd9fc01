// The console's wire shapes of ledger rows: RequestJson (a RequestRecord in snake_case), AttemptJson,
// SpendRowJson, and the spend CSV (same rows, money in decimal units).
import type { AttemptRow, RequestRecord, UsageRow } from '../billing/ledger.ts';

export function convertRequestToJson(r: RequestRecord) {
  return {
    request_id: r.requestId,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    key_id: r.keyId,
    key_name: r.keyName ?? null,
    team_id: r.teamId ?? null,
    team_name: r.teamName ?? null,
    dialect: r.dialect ?? 'openai-chat',
    origin: r.origin ?? null,
    route: r.routeRule ?? null,
    requested_model: r.requestedModel,
    model: r.model ?? null,
    provider: r.provider ?? null,
    upstream_model: r.upstreamModel ?? null,
    status: r.status,
    http_status: r.httpStatus ?? null,
    attempts: r.attempts,
    cache_hit: r.cacheHit,
    priority: r.priority ?? null,
    latency_ms: r.latencyMs,
    ttft_ms: r.ttftMs ?? null,
    prompt_tokens: r.promptTokens,
    cached_prompt_tokens: r.cachedPromptTokens,
    cache_write_tokens: r.cacheWriteTokens,
    completion_tokens: r.completionTokens,
    reasoning_tokens: r.reasoningTokens,
    estimated: r.estimated,
    currency: r.currency,
    cost_micros: r.costMicros,
    usd_micros: r.usdMicros,
    list_usd_micros: r.listUsdMicros,
    saved_micros: r.savedMicros,
    trace_id: r.traceId ?? null,
  };
}

export type RequestJson = ReturnType<typeof convertRequestToJson>;

export function convertAttemptToJson(a: AttemptRow) {
  return {
    attempt: a.attempt,
    model: a.model,
    provider: a.provider,
    upstream_model: a.upstreamModel,
    outcome: a.outcome,
    http_status: a.httpStatus ?? null,
    latency_ms: a.latencyMs,
    ttft_ms: a.ttftMs ?? null,
    started_at: a.startedAt,
    prompt_tokens: a.promptTokens,
    completion_tokens: a.completionTokens,
    cost_micros: a.costMicros,
    currency: a.currency,
  };
}

export type AttemptJson = ReturnType<typeof convertAttemptToJson>;

/** `name`: the key's or team's name when grouped by key or team; null otherwise. */
export function convertSpendRowToJson(row: UsageRow, by: string) {
  return {
    group: row.group,
    name: by === 'key' || by === 'team' ? (row.keyName ?? null) : null,
    currency: row.currency,
    requests: row.requests,
    failed: row.failed,
    cache_hits: row.cacheHits,
    prompt_tokens: row.promptTokens,
    cached_prompt_tokens: row.cachedPromptTokens,
    completion_tokens: row.completionTokens,
    reasoning_tokens: row.reasoningTokens,
    cost_micros: row.costMicros,
    usd_micros: row.usdMicros,
    list_usd_micros: row.listUsdMicros,
    saved_micros: row.savedMicros,
  };
}

export type SpendRowJson = ReturnType<typeof convertSpendRowToJson>;

const CSV_COLUMNS = [
  'group',
  'name',
  'currency',
  'requests',
  'failed',
  'cache_hits',
  'prompt_tokens',
  'cached_prompt_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'cost',
  'usd',
  'list_usd',
  'saved',
] as const;

/** The CSV's header line (`by` names the first column) and one line per row, CRLF as RFC 4180 has it. */
export function formatSpendCsv(by: string, rows: readonly SpendRowJson[]): string {
  const lines = [[by, ...CSV_COLUMNS.slice(1)].join(',')];
  for (const r of rows) {
    lines.push(
      [
        csvCell(r.group),
        csvCell(r.name ?? ''),
        csvCell(r.currency),
        r.requests,
        r.failed,
        r.cache_hits,
        r.prompt_tokens,
        r.cached_prompt_tokens,
        r.completion_tokens,
        r.reasoning_tokens,
        formatMicros(r.cost_micros),
        formatMicros(r.usd_micros),
        formatMicros(r.list_usd_micros),
        formatMicros(r.saved_micros),
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** Integer micros as a decimal with 6 places, exactly (no floating point). */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = BigInt(Math.abs(Math.trunc(micros)));
  const whole = abs / 1_000_000n;
  const frac = (abs % 1_000_000n).toString().padStart(6, '0');
  return `${sign}${whole}.${frac}`;
}

/** Quoted when it holds a comma, quote or line break; a leading =, +, - or @ is prefixed with ' so a spreadsheet does not run it as a formula. */
function csvCell(value: string): string {
  const formula = /^[=+@\t\r]/.test(value) || (value.startsWith('-') && value.length > 1);
  const safe = formula ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
