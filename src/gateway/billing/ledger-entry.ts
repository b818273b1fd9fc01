// One request row and its attempt rows, the unit the write queue, the spool and recovery pass around:
// its own module so those three need not import each other for it.
import type { AttemptRow, RequestRecord } from './ledger.ts';

export interface LedgerEntry {
  request: RequestRecord;
  attempts: readonly AttemptRow[];
}
