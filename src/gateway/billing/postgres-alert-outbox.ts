// The alert outbox on the PostgreSQL ledger: senders on several replicas claim due rows with
// FOR UPDATE SKIP LOCKED under a lease, so each row is with one sender at a time.
import { type AlertOutbox, type AlertOutboxColumns as Row, type AlertRow, toAlertRow } from './alert-outbox.ts';
import type { PostgresRunner } from './postgres-runner.ts';

const CLAIM = `UPDATE ledger_alerts SET claimed_by = $1, lease_until = $2, attempts = attempts + 1
  WHERE id IN (SELECT id FROM ledger_alerts WHERE state = 'pending' AND next_at <= $3 AND (lease_until IS NULL OR lease_until < $3)
    ORDER BY created_at LIMIT $4 FOR UPDATE SKIP LOCKED)
  RETURNING *`;

export class PostgresAlertOutbox implements AlertOutbox {
  constructor(private readonly runner: PostgresRunner) {}

  async claim(workerId: string, nowMs: number, leaseMs: number, limit: number): Promise<AlertRow[]> {
    const now = Math.round(nowMs);
    const { rows } = await this.runner.statement<Row>(CLAIM, [workerId, now + leaseMs, now, limit]);
    return rows.map(toAlertRow);
  }

  async delivered(id: string, atMs: number): Promise<void> {
    await this.runner.statement("UPDATE ledger_alerts SET state = 'delivered', delivered_at = $2, lease_until = NULL, last_error = NULL WHERE id = $1", [id, Math.round(atMs)]);
  }

  async retry(id: string, workerId: string, nextAtMs: number | undefined, error: string): Promise<void> {
    await this.runner.statement("UPDATE ledger_alerts SET state = $2, next_at = $3, lease_until = NULL, last_error = $4 WHERE id = $1 AND state = 'pending' AND claimed_by = $5", [
      id,
      nextAtMs === undefined ? 'failed' : 'pending',
      Math.round(nextAtMs ?? 0),
      error.slice(0, 500),
      workerId,
    ]);
  }

  async list(): Promise<(AlertRow & { lastError: string | null; claimedBy: string | null })[]> {
    const { rows } = await this.runner.statement<Row>('SELECT * FROM ledger_alerts ORDER BY created_at, id', []);
    return rows.map((r) => ({ ...toAlertRow(r), lastError: r.last_error, claimedBy: r.claimed_by }));
  }
}
