// What a tolerant Messages decoder met and did not map: each member is recorded under its dotted path with
// its row of the field table (dropped or refused on bridged routes), instead of being refused at the edge.
import type { UnmodeledField } from '../../protocol/chat-types.ts';
import type { JsonObject } from '../../protocol/check-json-value.ts';
import { describeFate } from '../../protocol/dialect-field-table.ts';
import { type FieldRow, REQUEST_FIELDS } from './messages-field-table.ts';

export class UnmodeledFields {
  readonly fields: UnmodeledField[] = [];

  /** Records `value` at `param` unless the row maps it (then the decoder carried it). */
  add(param: string, row: FieldRow, value: unknown): void {
    if (row.bridged === 'mapped') return;
    this.fields.push({ param, bridged: row.bridged, reason: row.reason, value });
  }

  /**
   * Records each member of `object` the decoder does not read. JSON null is the same as absent, so a null
   * member loses nothing; `rows` gives members with a fate of their own, the rest fall to `fallback`.
   */
  others(object: JsonObject, param: string, known: ReadonlySet<string>, rows: Readonly<Record<string, FieldRow>> = {}, fallback: FieldRow = REQUEST_FIELDS['*']): void {
    for (const [key, value] of Object.entries(object)) {
      if (known.has(key) || value === null) continue;
      // Own rows only (a member named `constructor` is no row), and never a mapped one: unread means not carried.
      const row = Object.hasOwn(rows, key) ? rows[key] : undefined;
      this.add(`${param === '' ? '' : `${param}.`}${key}`, row !== undefined && row.bridged !== 'mapped' ? row : fallback, value);
    }
  }

  /** Flips recorded drops to refusals, for members whose absence would now change the answer unseen. */
  refuse(params: ReadonlySet<string>, row: FieldRow): void {
    for (const field of this.fields) {
      if (!params.has(field.param)) continue;
      field.bridged = 'refuse';
      field.reason = describeFate(row);
    }
  }
}
