// Priority classes for admission (HIGH, NORMAL, BATCH) and where a request's class comes from:
// the x-herd-priority header, else its key's default, else NORMAL.
import { HerdError } from '../../core/errors.ts';

export const PRIORITIES = ['HIGH', 'NORMAL', 'BATCH'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const PRIORITY_HEADER = 'x-herd-priority';

/** Class order: lower goes first. Also the number of aging steps a waiter starts behind HIGH. */
export const PRIORITY_RANK: Readonly<Record<Priority, number>> = { HIGH: 0, NORMAL: 1, BATCH: 2 };

/** `high`, `Normal`, `BATCH`…; anything else is an INVALID_ARG naming `param` (never silently NORMAL). */
export function parsePriority(value: string, param: string = PRIORITY_HEADER): Priority {
  const upper = value.trim().toUpperCase();
  if ((PRIORITIES as readonly string[]).includes(upper)) return upper as Priority;
  // Printable ASCII only: the value is the client's, and it ends up in logs.
  const printable = value.slice(0, 40).replace(/[^\x20-\x7e]/g, '?');
  throw new HerdError('INVALID_ARG', `${param} must be one of high, normal, batch; got '${printable}${value.length > 40 ? '…' : ''}'`, { param });
}

export function isPriority(value: unknown): value is Priority {
  return typeof value === 'string' && (PRIORITIES as readonly string[]).includes(value);
}

/**
 * The class a request runs at. A header that is present but blank counts as absent (some proxies
 * send empty headers); a present, unknown value is an error so a typo never quietly runs at NORMAL.
 */
export function resolvePriority(header: string | readonly string[] | undefined, keyDefault?: Priority): Priority {
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value === 'string' && value.trim() !== '') return parsePriority(value);
  return keyDefault ?? 'NORMAL';
}
