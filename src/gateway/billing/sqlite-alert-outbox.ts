// The alert outbox on the SQLite ledger file: a claim is one IMMEDIATE transaction, so processes
// sharing the file never claim the same row while its lease runs.
import type Database from 'better-sqlite3';
import { type AlertOutbox, type AlertOutboxColumns as Row, type AlertRow, toAlertRow } from './alert-outbox.ts';

export class SqliteAlertOutbox implements AlertOutbox {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly immediate: <T>(body: () => T) => T,
  ) {
    this.sql = {
      claim: db.prepare(`UPDATE ledger_alerts SET claimed_by = ?, lease_until = ?, attempts = attempts + 1
        WHERE id IN (SELECT id FROM ledger_alerts WHERE state = 'pending' AND next_at <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY created_at LIMIT ?)
        RETURNING *`),
      delivered: db.prepare("UPDATE ledger_alerts SET state = 'delivered', delivered_at = ?, lease_until = NULL, last_error = NULL WHERE id = ?"),
      retry: db.prepare(`UPDATE ledger_alerts SET state = ?, next_at = ?, lease_until = NULL, last_error = ?
        WHERE id = ? AND state = 'pending' AND claimed_by = ?`),
      list: db.prepare('SELECT * FROM ledger_alerts ORDER BY created_at, id'),
    };
  }

  async claim(workerId: string, nowMs: number, leaseMs: number, limit: number): Promise<AlertRow[]> {
    const now = Math.round(nowMs);
    return this.immediate(() => (this.sql.claim.all(workerId, now + leaseMs, now, now, limit) as Row[]).map(toAlertRow));
  }

  async delivered(id: string, atMs: number): Promise<void> {
    this.immediate(() => this.sql.delivered.run(Math.round(atMs), id));
  }

  async retry(id: string, workerId: string, nextAtMs: number | undefined, error: string): Promise<void> {
    this.immediate(() => this.sql.retry.run(nextAtMs === undefined ? 'failed' : 'pending', Math.round(nextAtMs ?? 0), error.slice(0, 500), id, workerId));
  }

  async list(): Promise<(AlertRow & { lastError: string | null; claimedBy: string | null })[]> {
    return (this.sql.list.all() as Row[]).map((r) => ({ ...toAlertRow(r), lastError: r.last_error, claimedBy: r.claimed_by }));
  }
}
