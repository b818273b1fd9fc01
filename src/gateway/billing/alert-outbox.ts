// The budget-alert outbox as the sender sees it: rows written by settlements (one per subject, bucket
// and threshold), claimed under a lease by one sender at a time, then delivered, retried or failed.

export type AlertState = 'pending' | 'delivered' | 'failed';

export interface AlertRow {
  /** Stable (alertId): the webhook-id of every delivery attempt. */
  id: string;
  subject: string;
  bucket: string;
  threshold: number;
  /** JSON written by the settlement: owner, period, model, timezone, resetsAt, limitMicros, spentMicros, crossedAt. */
  payload: string;
  state: AlertState;
  /** Deliveries started so far, this one included once claimed. */
  attempts: number;
  createdAt: number;
}

export interface AlertOutbox {
  /**
   * Up to `limit` pending rows due at `nowMs` whose lease (if any) has run out, claimed for `workerId`
   * until `nowMs + leaseMs` (their attempts counted); other senders skip them meanwhile.
   */
  claim(workerId: string, nowMs: number, leaseMs: number, limit: number): Promise<AlertRow[]>;
  /** Delivered (the receiver answered 2xx). */
  delivered(id: string, atMs: number): Promise<void>;
  /** Not delivered: try again at `nextAtMs`, or give up (`failed`) when `nextAtMs` is undefined. */
  retry(id: string, workerId: string, nextAtMs: number | undefined, error: string): Promise<void>;
  /** Rows by state (tests, health). */
  list(): Promise<(AlertRow & { lastError: string | null; claimedBy: string | null })[]>;
}

/** The outbox table's columns as both databases return them. */
export interface AlertOutboxColumns {
  id: string;
  subject: string;
  bucket: string;
  threshold: number;
  payload: string;
  state: AlertState;
  attempts: number;
  created_at: number;
  last_error: string | null;
  claimed_by: string | null;
}

export function toAlertRow(r: Pick<AlertOutboxColumns, 'id' | 'subject' | 'bucket' | 'threshold' | 'payload' | 'state' | 'attempts' | 'created_at'>): AlertRow {
  return {
    id: r.id,
    subject: r.subject,
    bucket: r.bucket,
    threshold: Number(r.threshold),
    payload: r.payload,
    state: r.state,
    attempts: Number(r.attempts),
    createdAt: Number(r.created_at),
  };
}
