// The console's request list as one SQL statement for both dialects: the filters of RequestFilter, keyset
// pagination newest first (started_at DESC, request_id DESC), each filter served by an index of migration 7.
import type { RequestFilter, RequestListQuery, RequestPage } from './ledger.ts';
import { convertRowToRequest } from './ledger-read-rows.ts';
import { checkLimit, checkTime, createBinder, decodeCursor, encodeCursor } from './page-cursor.ts';
import type { SqlDialect } from './usage-query.ts';

export const MAX_REQUEST_PAGE = 500;

/** What a RequestRecord is read from (the inline attempt's columns are read by getRequest, through ledger_attempts_all). */
export const REQUEST_READ_COLUMNS = [
  'request_id',
  'key_id',
  'key_name',
  'team_id',
  'team_name',
  'trace_id',
  'key_tags',
  'key_metadata',
  'origin',
  'dialect',
  'route_rule',
  'model_requested',
  'model',
  'provider',
  'upstream_model',
  'prompt_tokens',
  'cached_prompt_tokens',
  'cache_write_tokens',
  'cache_write_1h_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'reported_reasoning_tokens',
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
  'batch_id',
  'realtime_list_usd_micros',
] as const;

const ORDER = 'ORDER BY started_at DESC, request_id DESC';

export interface BuiltQuery {
  sql: string;
  params: (string | number)[];
}

interface ListCursor {
  startedAt: number;
  requestId: string;
}

export function encodeRequestCursor(last: { startedAt: number; requestId: string }): string {
  return encodeCursor({ t: Math.round(last.startedAt), id: last.requestId });
}

function decodeRequestCursor(cursor: string): ListCursor {
  const { t, id } = decodeCursor(cursor, { t: 'number', id: 'string' });
  return { startedAt: t as number, requestId: id as string };
}

/**
 * Reads `limit + 1` rows: the extra one says whether a next page exists. The model filter matches either
 * model column; an OR over two columns would leave both indexes unused, so each column gets its own branch
 * (its newest `limit + 1` rows, read through its index) and the union is sorted again.
 */
export function buildRequestListQuery(dialect: SqlDialect, query: RequestListQuery): BuiltQuery {
  checkLimit(query.limit, MAX_REQUEST_PAGE);
  checkTime('since', query.sinceMs);
  checkTime('until', query.untilMs);
  const cursor = query.cursor === undefined ? undefined : decodeRequestCursor(query.cursor);
  const take = query.limit + 1;
  const { params, bind } = createBinder(dialect);
  const where = (extra?: string) => {
    const conditions = filterConditions(query, cursor, bind);
    if (extra !== undefined) conditions.unshift(extra);
    return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
  };
  const columns = REQUEST_READ_COLUMNS.join(', ');
  if (query.model === undefined) return { sql: `SELECT ${columns} FROM ledger_requests ${where()} ${ORDER} LIMIT ${take}`, params };
  if (query.keyId !== undefined) {
    // A key's own rows are few next to a model's: read them through (key_id, started_at), both model columns tested on each.
    const model = `(model = ${bind(query.model)} OR model_requested = ${bind(query.model)})`;
    return { sql: `SELECT ${columns} FROM ledger_requests ${where(model)} ${ORDER} LIMIT ${take}`, params };
  }
  const branch = (column: string, alias: string) =>
    `SELECT request_id FROM (SELECT request_id FROM ledger_requests ${where(`${column} = ${bind(query.model as string)}`)} ${ORDER} LIMIT ${take}) AS ${alias}`;
  const ids = `${branch('model', 'answered')} UNION ${branch('model_requested', 'requested')}`;
  return { sql: `SELECT ${columns} FROM ledger_requests WHERE request_id IN (${ids}) ${ORDER} LIMIT ${take}`, params };
}

function filterConditions(filter: RequestFilter, cursor: ListCursor | undefined, bind: (value: string | number) => string): string[] {
  const conditions: string[] = [];
  if (filter.keyId !== undefined) conditions.push(`key_id = ${bind(filter.keyId)}`);
  conditions.push(...statusConditions(filter.status, bind));
  // The column is NOT NULL DEFAULT 'openai-chat' (migration 3): rows written before it already read as openai-chat.
  if (filter.dialect !== undefined) conditions.push(`dialect = ${bind(filter.dialect)}`);
  if (filter.sinceMs !== undefined) conditions.push(`started_at >= ${bind(Math.round(filter.sinceMs))}`);
  if (filter.untilMs !== undefined) conditions.push(`started_at < ${bind(Math.round(filter.untilMs))}`);
  if (cursor !== undefined) {
    // Written so the started_at bound is a plain range an index can seek to; the request id orders equal times.
    conditions.push(`started_at <= ${bind(cursor.startedAt)}`, `(started_at < ${bind(cursor.startedAt)} OR request_id < ${bind(cursor.requestId)})`);
  }
  return conditions;
}

/** `status <> 'ok'` is the partial index's own condition: an exact error status repeats it so the index applies. */
function statusConditions(status: string | undefined, bind: (value: string | number) => string): string[] {
  if (status === undefined) return [];
  if (status === 'ok') return ["status = 'ok'"];
  if (status === 'error') return ["status <> 'ok'"];
  return ["status <> 'ok'", `status = ${bind(status)}`];
}

/** The statement's rows as a RequestPage: the extra row says a next page exists. */
export function assembleRequestPage(rows: readonly Record<string, unknown>[], limit: number): RequestPage {
  const page = rows.slice(0, limit).map(convertRowToRequest);
  const last = page.at(-1);
  return { rows: page, nextCursor: rows.length > limit && last ? encodeRequestCursor(last) : undefined };
}

/** getRequest: the row, then its attempts (whichever table holds them), each one indexed lookup. */
export function buildRequestDetailQueries(dialect: SqlDialect): { request: string; attempts: string } {
  const p = dialect === 'postgres' ? '$1' : '?';
  return {
    request: `SELECT ${REQUEST_READ_COLUMNS.join(', ')} FROM ledger_requests WHERE request_id = ${p}`,
    attempts: `SELECT * FROM ledger_attempts_all WHERE request_id = ${p} ORDER BY attempt`,
  };
}
