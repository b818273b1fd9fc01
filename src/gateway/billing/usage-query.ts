// The usage report's one SQL statement, for both dialects: the rollup (ledger_daily) for the whole UTC days
// of the range, the raw rows for the partial days at its edges, one UNION ALL grouped again (ledger-daily.ts).
import type { UsageGroup } from './ledger.ts';
import { DAILY_SUMS, RAW_SUMS, bindRange } from './ledger-daily.ts';

export type SqlDialect = 'sqlite' | 'postgres';

// Rows group on the whole UTC day number (integer division of epoch ms); only each group's day is formatted,
// not every row's (bench/results/console-ledger-2026-12-07.md: formatting each row cost most of a 30-day report).
const DAY_NUMBER = 'started_at / 86400000';
const FORMAT_DAY: Record<SqlDialect, (day: string) => string> = {
  sqlite: (day) => `strftime('%Y-%m-%d', (${day}) * 86400, 'unixepoch')`,
  postgres: (day) => `to_char(to_timestamp((${day}) * 86400) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
};

/** The group's column in the raw rows and in the rollup (which stores NULLs as '-' already). */
function groupColumns(by: UsageGroup): { raw: string; daily: string } {
  switch (by) {
    case 'day':
      return { raw: DAY_NUMBER, daily: 'day' };
    case 'model':
      return { raw: "COALESCE(model, '-')", daily: 'model' };
    case 'provider':
      return { raw: "COALESCE(provider, '-')", daily: 'provider' };
    case 'key':
      return { raw: 'key_id', daily: 'key_id' };
    case 'team':
      return { raw: "COALESCE(team_id, '-')", daily: 'team_id' };
  }
}

const nameOf = (by: UsageGroup) => (by === 'key' ? 'MAX(key_name)' : by === 'team' ? 'MAX(team_name)' : 'NULL');
const bigint = (sql: string) => `CAST(${sql} AS BIGINT)`;

export function buildUsageQuery(dialect: SqlDialect, by: UsageGroup, bind: (value: number) => string, sinceMs: number, untilMs: number): string {
  return `${buildUsageSelect(dialect, by, bind, sinceMs, untilMs)}
    ORDER BY 1, currency`;
}

/**
 * The grouped rows unsorted, the range bound first through `bind` (usage-page-query.ts wraps it). Each part
 * is grouped on its own (the raw rows of two partial days; at most one rollup row per day and group), then
 * the two are summed per group: the same figures as grouping every raw row of the range.
 */
export function buildUsageSelect(dialect: SqlDialect, by: UsageGroup, bind: (value: number) => string, sinceMs: number, untilMs: number): string {
  const where = bindRange(bind, sinceMs, untilMs);
  const group = groupColumns(by);
  const raw = DAILY_SUMS.map((c) => `${bigint(RAW_SUMS[c])} AS ${c}`).join(', ');
  const daily = DAILY_SUMS.map((c) => `${bigint(`SUM(${c})`)} AS ${c}`).join(', ');
  const sums = DAILY_SUMS.map((c) => `${bigint(`SUM(${c})`)} AS ${c}`).join(', ');
  const grp = by === 'day' ? FORMAT_DAY[dialect]('g') : 'g';
  return `
    SELECT ${grp} AS grp, MAX(key_name) AS key_name, currency, ${sums}
    FROM (
      SELECT ${group.raw} AS g, ${nameOf(by)} AS key_name, currency, ${raw}
      FROM ledger_requests WHERE ${where.raw}
      GROUP BY ${group.raw}, currency
      UNION ALL
      SELECT ${group.daily} AS g, ${nameOf(by)} AS key_name, currency, ${daily}
      FROM ledger_daily WHERE ${where.daily}
      GROUP BY ${group.daily}, currency
    ) AS parts
    GROUP BY g, currency`;
}

/** Totals per settlement currency over the same two parts. */
export function buildSpendTotalsSelect(bind: (value: number) => string, sinceMs: number, untilMs: number): string {
  const where = bindRange(bind, sinceMs, untilMs);
  const money = ['cost_micros', 'usd_micros', 'list_usd_micros'];
  const part = (count: string, from: string, cond: string) =>
    `SELECT currency, ${count} AS requests, ${money.map((c) => `${bigint(`SUM(${c})`)} AS ${c}`).join(', ')} FROM ${from} WHERE ${cond} GROUP BY currency`;
  return `
    SELECT currency, ${bigint('SUM(requests)')} AS requests, ${money.map((c) => `${bigint(`SUM(${c})`)} AS ${c}`).join(', ')}
    FROM (${part('COUNT(*)', 'ledger_requests', where.raw)} UNION ALL ${part(bigint('SUM(requests)'), 'ledger_daily', where.daily)}) AS parts
    GROUP BY currency
    ORDER BY currency`;
}
