// Opaque page cursors of the console's ledger queries (base64url JSON of the last row's sort key), and
// the checks every page query makes on its inputs before building SQL: bad input is INVALID_ARG, never a query.
import { HerdError } from '../../core/errors.ts';

export function encodeCursor(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** The cursor's fields, or INVALID_ARG when it is not one this ledger issued (a hand-made or truncated string). */
export function decodeCursor(cursor: string, fields: Record<string, 'string' | 'number'>): Record<string, string | number> {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor(cursor);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalidCursor(cursor);
  const record = parsed as Record<string, unknown>;
  const out: Record<string, string | number> = {};
  for (const [name, type] of Object.entries(fields)) {
    const value = record[name];
    if (type === 'number' && typeof value === 'number' && Number.isSafeInteger(value)) out[name] = value;
    else if (type === 'string' && typeof value === 'string') out[name] = value;
    else throw invalidCursor(cursor);
  }
  return out;
}

function invalidCursor(cursor: string): HerdError {
  const shown = cursor.length > 40 ? `${cursor.slice(0, 40)}…` : cursor;
  return new HerdError('INVALID_ARG', `invalid cursor "${shown}": pass the next_cursor of the previous page unchanged`);
}

export function checkLimit(limit: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new HerdError('INVALID_ARG', `limit must be an integer from 1 to ${max}, got ${String(limit)}`);
}

export function checkTime(name: string, value: number | undefined): void {
  if (value !== undefined && !Number.isFinite(value)) throw new HerdError('INVALID_ARG', `${name} must be epoch milliseconds, got ${String(value)}`);
}

/** Placeholders in text order: `?` for SQLite (bound by position), `$n` for PostgreSQL. */
export function createBinder(dialect: 'sqlite' | 'postgres'): { params: (string | number)[]; bind: (value: string | number) => string } {
  const params: (string | number)[] = [];
  return {
    params,
    bind: (value) => {
      params.push(value);
      return dialect === 'postgres' ? `$${params.length}` : '?';
    },
  };
}
