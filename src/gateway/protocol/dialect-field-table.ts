// A client dialect's field table: for each member of its request, what a bridged attempt (another dialect's
// upstream) does with it — mapped onto the canonical request, dropped (named in x-herd-dropped) or refused.
// Decoders take their reasons from it; docs/fields/*.md are checked against it.
import type { UnmodeledField } from './chat-types.ts';

export type FieldFate = { bridged: 'mapped'; note: string } | { bridged: 'drop' | 'refuse'; reason: string };

/**
 * Keys are the dialect's own paths: `client_metadata`, `reasoning.context`, `tools[type=web_search]`,
 * `input[type=reasoning].encrypted_content`; a value after `: ` (`store: true`) qualifies an entry that holds
 * for that value only. `(unknown member)` is the fate of anything not listed.
 */
export type FieldTable = Readonly<Record<string, FieldFate>>;

/** What a fate says: what a mapped member becomes, or why a member is dropped or refused. */
export function describeFate(fate: FieldFate): string {
  return fate.bridged === 'mapped' ? fate.note : fate.reason;
}

/** How docs/fields/*.md write each fate. */
export const FATE_WORDS = { mapped: 'mapped', drop: 'dropped', refuse: 'refused' } as const;

export const UNKNOWN_MEMBER = '(unknown member)';
export const NOT_MODELLED = 'not modelled by Herd';

/** The record a decoder keeps for a member it does not map, its fate read from `table` (unlisted: dropped). */
export function createUnmodeled(table: FieldTable, key: string, param: string, value: unknown): UnmodeledField {
  const fate = Object.hasOwn(table, key) ? table[key] : undefined;
  if (fate === undefined || fate.bridged === 'mapped') return { param, bridged: 'drop', reason: NOT_MODELLED, value };
  return { param, bridged: fate.bridged, reason: fate.reason, value };
}

/** A validator's bracketed path (`messages[2].content[0]`) as unmodeled params spell it (`messages.2.content.0`). */
export function toDottedPath(path: string): string {
  return path.replace(/\[(\d+)\]/g, '.$1');
}

/**
 * Records each member of `object` outside `known` in `out` (its fate: the table's `<tablePath>.<key>` entry, else
 * `(unknown member)`'s). Null members are skipped: SDKs echo back null-valued extras, and a null asks for nothing.
 */
export function collectUnknownKeys(
  object: Readonly<Record<string, unknown>>,
  known: ReadonlySet<string>,
  path: string,
  table: FieldTable,
  out: UnmodeledField[],
  tablePath = '',
): void {
  for (const key of Object.keys(object)) {
    if (known.has(key) || object[key] === null) continue;
    const entry = tablePath === '' ? key : `${tablePath}.${key}`;
    out.push(createUnmodeled(table, Object.hasOwn(table, entry) ? entry : UNKNOWN_MEMBER, toDottedPath(path === '' ? key : `${path}.${key}`), object[key]));
  }
}
