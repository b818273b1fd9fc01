// The console's spend queries for both dialects: one page of the usage report with the count of all its
// rows (a window count, same statement), and the totals of a range per settlement currency.
import { HerdError } from '../../core/errors.ts';
import type { UsagePage, UsagePageQuery, UsageRow } from './ledger.ts';
import { convertUsageRow } from './ledger-rows.ts';
import { toSafeMicros } from './money.ts';
import { checkLimit, checkTime, createBinder, decodeCursor, encodeCursor } from './page-cursor.ts';
import type { BuiltQuery } from './request-list-query.ts';
import { buildSpendTotalsSelect, buildUsageSelect, type SqlDialect } from './usage-query.ts';

export const MAX_USAGE_PAGE = 1000;

interface UsageCursor {
  costMicros: number;
  group: string;
  currency: string;
}

/** The last row's sort key; `by` travels along so a cursor is not replayed on another grouping. */
export function encodeUsageCursor(by: string, last: UsageRow): string {
  return encodeCursor({ by, cost: last.costMicros, g: last.group, c: last.currency });
}

function decodeUsageCursor(cursor: string, by: string): UsageCursor {
  const fields = decodeCursor(cursor, { by: 'string', cost: 'number', g: 'string', c: 'string' });
  if (fields.by !== by) throw new HerdError('INVALID_ARG', `this cursor pages the report by ${String(fields.by)}, not by ${by}: start again without it`);
  return { costMicros: fields.cost as number, group: fields.g as string, currency: fields.c as string };
}

/**
 * A page of `usage()` rows (a row is one group in one currency; totalGroups counts those rows). `by: 'day'`
 * runs oldest day first, every other grouping dearest first, then by group and currency: the keyset.
 * Rows past the cursor sort first (`after_cursor`), so the window count survives a page past the end:
 * that page reads the count from rows it then drops. PostgreSQL compares text by bytes here (COLLATE "C"), as SQLite does.
 */
export function buildUsagePageQuery(dialect: SqlDialect, query: UsagePageQuery, untilMs: number): BuiltQuery {
  checkLimit(query.limit, MAX_USAGE_PAGE);
  checkTime('since', query.sinceMs);
  checkTime('until', untilMs);
  const cursor = query.cursor === undefined ? undefined : decodeUsageCursor(query.cursor, query.by);
  const { params, bind } = createBinder(dialect);
  // The grouped rows come first in the text: SQLite binds `?` in text order, so the range is bound first.
  const select = buildUsageSelect(dialect, query.by, bind, query.sinceMs, untilMs);
  const text = dialect === 'postgres' ? ' COLLATE "C"' : '';
  const grp = `grp${text}`;
  const currency = `currency${text}`;
  const byDay = query.by === 'day';
  const order = byDay ? `${grp}, ${currency}` : `cost_micros DESC, ${grp}, ${currency}`;
  let after = '1';
  if (cursor !== undefined) {
    // Bound in text order (SQLite's `?`): the cost terms precede the group terms.
    const cost = byDay ? '' : `cost_micros < ${bind(cursor.costMicros)} OR cost_micros = ${bind(cursor.costMicros)} AND `;
    const tail = `(${grp} > ${bind(cursor.group)} OR (grp = ${bind(cursor.group)} AND ${currency} > ${bind(cursor.currency)}))`;
    after = `CASE WHEN ${cost}${tail} THEN 1 ELSE 0 END`;
  }
  const sql = `
    WITH u AS (${select})
    SELECT w.* FROM (SELECT u.*, COUNT(*) OVER () AS total_groups, ${after} AS after_cursor FROM u) AS w
    ORDER BY after_cursor DESC, ${order}
    LIMIT ${query.limit + 1}`;
  return { sql, params };
}

/** Totals per currency of [since, until): the rollup's whole days and the edges' raw rows (usage-query.ts). */
export function buildSpendTotalsQuery(dialect: SqlDialect, sinceMs: number, untilMs: number): BuiltQuery {
  const { params, bind } = createBinder(dialect);
  return { sql: buildSpendTotalsSelect(bind, sinceMs, untilMs), params };
}

/** The statement's rows as a UsagePage: rows before the cursor only carried the count; the extra row says a next page exists. */
export function assembleUsagePage(rows: readonly Record<string, unknown>[], query: UsagePageQuery): UsagePage {
  const totalGroups = rows.length === 0 ? 0 : toSafeMicros(rows[0]?.total_groups as string | number);
  const after = rows.filter((row) => toSafeMicros(row.after_cursor as string | number) === 1).map(convertUsageRow);
  const page = after.slice(0, query.limit);
  const last = page.at(-1);
  return { rows: page, totalGroups, nextCursor: after.length > query.limit && last ? encodeUsageCursor(query.by, last) : undefined };
}
