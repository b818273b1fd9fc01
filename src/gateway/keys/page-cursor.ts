// Opaque list cursors: the sort key of a page's last item, base64url JSON tagged with the list it belongs to,
// so a cursor from one list (or a hand-made one) is refused with a clear message instead of paging wrongly.
import { HerdError } from '../../core/errors.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new HerdError('INVALID_ARG', `limit must be a whole number from 1 to ${MAX_LIMIT}, got ${limit}`, { param: 'limit' });
  return limit;
}

export function encodeCursor(list: string, position: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([list, ...position])).toString('base64url');
}

export function decodeCursor(cursor: string, list: string): (string | number)[] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value[0] === list && value.slice(1).every((v) => typeof v === 'string' || typeof v === 'number')) return value.slice(1);
  } catch {
    /* fall through */
  }
  throw new HerdError('INVALID_ARG', `cursor is not one this ${list} list gave out: pass the 'next' value of the previous page unchanged`, { param: 'cursor' });
}
