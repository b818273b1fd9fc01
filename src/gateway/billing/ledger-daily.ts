// The daily rollup of ledger_requests (ledger_daily): one row per UTC day, key, team, model, provider and
// currency with the sums the usage report needs, written in the transaction of the rows it sums.

export const DAY_MS = 86_400_000;

/** The rollup's grouping columns (its primary key); NULL team, model and provider are stored as '-', as the report shows them. */
export const DAILY_KEY = ['day', 'key_id', 'team_id', 'model', 'provider', 'currency'] as const;

/** The summed columns of migration 9, frozen: its text must not change when later migrations add sums. */
export const DAILY_SUMS_V9 = [
  'requests',
  'failed',
  'cache_hits',
  'estimated',
  'prompt_tokens',
  'cached_prompt_tokens',
  'cache_write_tokens',
  'cache_write_1h_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'reported_reasoning_tokens',
  'cost_micros',
  'usd_micros',
  'list_usd_micros',
  'saved_micros',
  'cache_read_saved_micros',
] as const;

/** The summed columns, in the report's names: a rollup row and a raw group carry the same ones. Migration 10 added the batch ones. */
export const DAILY_SUMS = [...DAILY_SUMS_V9, 'batch_requests', 'batch_saved_usd_micros'] as const;

type DailySum = (typeof DAILY_SUMS)[number];

// Cache hits consumed no upstream tokens: they count as requests and savings, not as usage. saved_micros
// holds a hit's whole cost, and an upstream answer's prompt-cache read discount: reported apart.
const upstream = (column: string) => `SUM(CASE WHEN cache_hit = 0 THEN ${column} ELSE 0 END)`;

/** The sums of request rows (columns as in ledger_requests), in DAILY_SUMS order; not CAST (callers do). */
export const RAW_SUMS: Record<DailySum, string> = {
  requests: 'COUNT(*)',
  failed: "SUM(CASE WHEN status <> 'ok' THEN 1 ELSE 0 END)",
  cache_hits: 'SUM(cache_hit)',
  estimated: 'SUM(estimated)',
  prompt_tokens: upstream('prompt_tokens'),
  cached_prompt_tokens: upstream('cached_prompt_tokens'),
  cache_write_tokens: upstream('cache_write_tokens'),
  cache_write_1h_tokens: upstream('cache_write_1h_tokens'),
  completion_tokens: upstream('completion_tokens'),
  reasoning_tokens: upstream('reasoning_tokens'),
  reported_reasoning_tokens: upstream('COALESCE(reported_reasoning_tokens, 0)'),
  cost_micros: 'SUM(cost_micros)',
  usd_micros: 'SUM(usd_micros)',
  list_usd_micros: 'SUM(list_usd_micros)',
  saved_micros: 'SUM(CASE WHEN cache_hit = 1 THEN saved_micros ELSE 0 END)',
  cache_read_saved_micros: 'SUM(CASE WHEN cache_hit = 0 THEN saved_micros ELSE 0 END)',
  // Lines of a client batch, and what their batch price saved against the realtime list price (NULL: not a batch line).
  batch_requests: 'SUM(CASE WHEN batch_id IS NULL THEN 0 ELSE 1 END)',
  batch_saved_usd_micros: 'SUM(COALESCE(realtime_list_usd_micros - list_usd_micros, 0))',
};

/**
 * An INSERT of the rollup rows of the request rows in `from` matching `where`, added to any rollup row
 * already there. The migration's backfill, SQLite's batch and PostgreSQL's batch all run this one text,
 * so the three cannot sum differently. Names keep the greatest value, as MAX(key_name) does in a raw report.
 */
export function buildDailyUpsert(from: string, where: string, sums: readonly DailySum[] = DAILY_SUMS): string {
  const grouped = ['started_at / 86400000', 'key_id', "COALESCE(team_id, '-')", "COALESCE(model, '-')", "COALESCE(provider, '-')", 'currency'];
  const [day, keyId, teamId, model, provider, currency] = grouped;
  const summed = sums.map((c) => `CAST(${RAW_SUMS[c]} AS BIGINT)`).join(', ');
  const columns = ['day', 'key_id', 'key_name', 'team_id', 'team_name', 'model', 'provider', 'currency', ...sums];
  const greater = (c: string) => `${c} = CASE WHEN ledger_daily.${c} IS NULL OR excluded.${c} > ledger_daily.${c} THEN excluded.${c} ELSE ledger_daily.${c} END`;
  return `
    INSERT INTO ledger_daily (${columns.join(', ')})
    SELECT ${day}, ${keyId}, MAX(key_name), ${teamId}, MAX(team_name), ${model}, ${provider}, ${currency}, ${summed}
    FROM ${from} WHERE ${where}
    GROUP BY ${grouped.join(', ')}
    ORDER BY ${grouped.join(', ')}
    ON CONFLICT (${DAILY_KEY.join(', ')}) DO UPDATE SET ${greater('key_name')}, ${greater('team_name')},
      ${sums.map((c) => `${c} = ledger_daily.${c} + excluded.${c}`).join(', ')}`;
}

/** The rollup table as migration 9 created it (portable to both databases); migration 10 adds the batch sums. */
export const CREATE_LEDGER_DAILY = `
  CREATE TABLE ledger_daily (
    day        BIGINT NOT NULL,       -- UTC day number: started_at / 86400000
    key_id     TEXT   NOT NULL,
    key_name   TEXT,
    team_id    TEXT   NOT NULL,       -- '-': none
    team_name  TEXT,
    model      TEXT   NOT NULL,       -- '-': none answered
    provider   TEXT   NOT NULL,       -- '-': none
    currency   TEXT   NOT NULL,
    ${DAILY_SUMS_V9.map((c) => `${c} BIGINT NOT NULL`).join(',\n    ')},
    PRIMARY KEY (${DAILY_KEY.join(', ')})
  );`;

/**
 * [since, until) split into the whole UTC days the rollup answers and the raw rows of the partial days at
 * either edge: the six parameters, in order, of every report statement (raw head, raw tail, rollup days).
 * Without a whole day inside, the head is the whole range and the tail and the days are empty.
 */
export function splitRange(sinceMs: number, untilMs: number): number[] {
  const since = Math.round(sinceMs);
  const until = Math.round(untilMs);
  const firstDay = Math.ceil(since / DAY_MS);
  const endDay = Math.floor(until / DAY_MS);
  if (firstDay >= endDay) return [since, until, until, until, 0, 0];
  return [since, firstDay * DAY_MS, endDay * DAY_MS, until, firstDay, endDay];
}

/** The raw rows' and the rollup's conditions with the six placeholders bound in text order (SQLite's `?`). */
export function bindRange(bind: (value: number) => string, sinceMs: number, untilMs: number): { raw: string; daily: string } {
  const [a, b, c, d, e, f] = splitRange(sinceMs, untilMs).map(bind);
  return {
    raw: `(started_at >= ${a} AND started_at < ${b} OR started_at >= ${c} AND started_at < ${d})`,
    daily: `day >= ${e} AND day < ${f}`,
  };
}
