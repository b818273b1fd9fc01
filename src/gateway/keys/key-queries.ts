// The list pages: keys (their team by JOIN, never a query per key) and teams, in creation order, keyset
// pagination on (created_at, id) behind an opaque cursor, so a page costs one indexed query however deep.
import type { SqlRunner, SqlValue } from '../storage/sql-driver.ts';
import type { KeyListQuery, Page, StoredKey, StoredTeam, TeamInfo, TeamListQuery } from './key-store.ts';
import { convertKeyRow, convertTeamRow, KEY_SELECT, type KeyRow, TEAM_SELECT, type TeamRow } from './key-rows.ts';
import { decodeCursor, encodeCursor, pageLimit } from './page-cursor.ts';

export async function listKeyPage(db: SqlRunner, query: KeyListQuery): Promise<Page<StoredKey>> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (!query.includeRevoked) where.push('k.revoked_at IS NULL');
  if (query.team !== undefined) {
    where.push('(t.id = ? OR t.name = ?)');
    params.push(query.team, query.team);
  }
  if (query.search !== undefined && query.search !== '') {
    where.push("LOWER(k.name) LIKE ? ESCAPE '\\'");
    params.push(likePattern(query.search));
  }
  const rows = await readPage<KeyRow>(db, KEY_SELECT, 'k.', 'keys', where, params, query);
  const teams = new Map<string, TeamInfo>();
  return finishPage(
    rows.map((r) => convertKeyRow(r, teams)),
    pageLimit(query.limit),
    'keys',
  );
}

export async function listTeamPage(db: SqlRunner, query: TeamListQuery): Promise<Page<StoredTeam>> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (query.search !== undefined && query.search !== '') {
    where.push("LOWER(name) LIKE ? ESCAPE '\\'");
    params.push(likePattern(query.search));
  }
  const rows = await readPage<TeamRow>(db, TEAM_SELECT, '', 'teams', where, params, query);
  return finishPage(rows.map(convertTeamRow), pageLimit(query.limit), 'teams');
}

async function readPage<R extends KeyRow | TeamRow>(
  db: SqlRunner,
  select: string,
  alias: string,
  list: string,
  where: string[],
  params: SqlValue[],
  query: { limit?: number | undefined; cursor?: string | undefined },
): Promise<R[]> {
  const limit = pageLimit(query.limit);
  if (query.cursor !== undefined) {
    const [createdAt, id] = decodeCursor(query.cursor, list);
    where.push(`(${alias}created_at > ? OR (${alias}created_at = ? AND ${alias}id > ?))`);
    params.push(Number(createdAt), Number(createdAt), String(id));
  }
  const sql = `${select} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${alias}created_at, ${alias}id LIMIT ?`;
  return db.query<R>(sql, [...params, limit + 1]);
}

function finishPage<T extends { createdAt: Date; id: string }>(items: T[], limit: number, list: string): Page<T> {
  const page = items.slice(0, limit);
  const last = page.at(-1);
  return { items: page, next: items.length > limit && last ? encodeCursor(list, [last.createdAt.getTime(), last.id]) : undefined };
}

/** A case-insensitive substring, with LIKE's own characters taken literally. */
function likePattern(search: string): string {
  return `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
