// The usage report's one SQL statement, for both dialects: the only differences are the UTC-day
// expression and the parameter placeholders. Sums are CAST to BIGINT so pg does not return NUMERIC.
import type { UsageGroup } from './ledger.ts';

export type SqlDialect = 'sqlite' | 'postgres';

// Rows group on the whole UTC day number (integer division of epoch ms); only each group's day is formatted,
// not every row's (bench/results/console-ledger-2026-12-07.md: formatting each row cost most of a 30-day report).
const DAY_NUMBER = 'started_at / 86400000';
const DAY: Record<SqlDialect, string> = {
  sqlite: `strftime('%Y-%m-%d', (${DAY_NUMBER}) * 86400, 'unixepoch')`,
  postgres: `to_char(to_timestamp((${DAY_NUMBER}) * 86400) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
};

function groupExpression(dialect: SqlDialect, by: UsageGroup): string {
  switch (by) {
    case 'day':
      return DAY[dialect];
    case 'model':
      return "COALESCE(model, '-')";
    case 'provider':
      return "COALESCE(provider, '-')";
    case 'key':
      return 'key_id';
    case 'team':
      return "COALESCE(team_id, '-')";
  }
}

// Cache hits consumed no upstream tokens: they count as requests and savings, not as usage. saved_micros
// holds a hit's whole cost, and an upstream answer's prompt-cache read discount: reported apart.
const upstream = (column: string) => `CAST(SUM(CASE WHEN cache_hit = 0 THEN ${column} ELSE 0 END) AS BIGINT) AS ${column}`;
const total = (column: string) => `CAST(SUM(${column}) AS BIGINT) AS ${column}`;

export function buildUsageQuery(dialect: SqlDialect, by: UsageGroup): string {
  return `${buildUsageSelect(dialect, by)}
    ORDER BY 1, currency`;
}

/** The grouped rows unsorted, bound to (since, until) as the first two parameters: usage-page-query.ts wraps it. */
export function buildUsageSelect(dialect: SqlDialect, by: UsageGroup): string {
  const p = dialect === 'postgres' ? ['$1', '$2'] : ['?', '?'];
  return `
    SELECT ${groupExpression(dialect, by)} AS grp, ${by === 'key' ? 'MAX(key_name)' : by === 'team' ? 'MAX(team_name)' : 'NULL'} AS key_name, currency,
      COUNT(*) AS requests,
      CAST(SUM(CASE WHEN status <> 'ok' THEN 1 ELSE 0 END) AS BIGINT) AS failed,
      CAST(SUM(cache_hit) AS BIGINT) AS cache_hits,
      ${total('estimated')},
      ${upstream('prompt_tokens')}, ${upstream('cached_prompt_tokens')}, ${upstream('cache_write_tokens')},
      ${upstream('cache_write_1h_tokens')}, ${upstream('completion_tokens')}, ${upstream('reasoning_tokens')},
      CAST(SUM(CASE WHEN cache_hit = 0 THEN COALESCE(reported_reasoning_tokens, 0) ELSE 0 END) AS BIGINT) AS reported_reasoning_tokens,
      ${total('cost_micros')}, ${total('usd_micros')}, ${total('list_usd_micros')},
      CAST(SUM(CASE WHEN cache_hit = 1 THEN saved_micros ELSE 0 END) AS BIGINT) AS saved_micros,
      CAST(SUM(CASE WHEN cache_hit = 0 THEN saved_micros ELSE 0 END) AS BIGINT) AS cache_read_saved_micros
    FROM ledger_requests
    WHERE started_at >= ${p[0]} AND started_at < ${p[1]}
    GROUP BY ${by === 'day' ? DAY_NUMBER : '1'}, currency`;
}
