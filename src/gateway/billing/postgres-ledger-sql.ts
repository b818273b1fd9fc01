// The PostgreSQL ledger's statements for reservations (reserve, settle, release, recover) and the
// row shapes they return; one place to read the lock order every statement keeps.

/** What recover() reads back from the reservations it releases. */
export interface ReleasedRow {
  key_id: string;
  estimate_micros: string;
  day_period: string;
  month_period: string;
}

// Every statement below that changes ledger_spend upserts the (key, day) row before the (key, month)
// row, so they take row locks in one order and two transactions cannot deadlock on them.

/** Creates the key's spend rows if needed, locks them, returns their latest totals, and any reservation of this id. */
export const LOCK_SPEND = `
  WITH locked AS (
    INSERT INTO ledger_spend (key_id, period, micros) VALUES ($1, $2, 0), ($1, $3, 0)
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros
    RETURNING period, micros)
  SELECT l.period, l.micros, r.key_id AS r_key_id, r.state AS r_state, r.estimate_micros AS r_estimate,
    r.actual_micros AS r_actual, r.day_period AS r_day, r.month_period AS r_month
  FROM locked l LEFT JOIN ledger_reservations r ON r.request_id = $4`;

export interface LockedSpendRow {
  period: string;
  micros: string;
  r_key_id: string | null;
  r_state: string | null;
  r_estimate: string | null;
  r_actual: string | null;
  r_day: string | null;
  r_month: string | null;
}

/** The open reservation and its estimate added to the (already locked) spend rows. */
export const HOLD = `
  WITH r AS (
    INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, day_period, month_period, created_at)
    VALUES ($1, $2, 'open', $3::bigint, $4, $5, $6))
  INSERT INTO ledger_spend (key_id, period, micros) VALUES ($2, $4, $3::bigint), ($2, $5, $3::bigint)
  ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros`;

// settle and release are one statement each, hence one transaction and one round trip: the CTE locks
// the reservation (FOR UPDATE sees the latest committed state), changes it only from the states the
// transition allows, and moves the difference into the spend rows; the final SELECT shows the state before.
export const SETTLE = `
  WITH old AS (
    SELECT request_id, key_id, state, estimate_micros, actual_micros, day_period, month_period
    FROM ledger_reservations WHERE request_id = $1 FOR UPDATE),
  upd AS (
    UPDATE ledger_reservations r SET state = 'settled', actual_micros = $2::bigint, resolved_at = $3
    FROM old WHERE r.request_id = old.request_id AND old.state <> 'settled'
    RETURNING old.key_id, old.day_period, old.month_period,
      $2::bigint - CASE WHEN old.state = 'open' THEN old.estimate_micros ELSE 0 END AS delta),
  spend AS (
    INSERT INTO ledger_spend (key_id, period, micros)
    SELECT key_id, day_period, delta FROM upd UNION ALL SELECT key_id, month_period, delta FROM upd
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros)
  SELECT state, actual_micros FROM old`;

/** A settlement with no reservation (the request skipped reserve): recorded as settled, charged once. */
export const SETTLE_UNRESERVED = `
  WITH ins AS (
    INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, actual_micros, day_period, month_period, created_at, resolved_at)
    VALUES ($1, $2, 'settled', 0, $3::bigint, $4, $5, $6, $6) ON CONFLICT (request_id) DO NOTHING RETURNING key_id),
  spend AS (
    INSERT INTO ledger_spend (key_id, period, micros)
    SELECT key_id, $4, $3::bigint FROM ins UNION ALL SELECT key_id, $5, $3::bigint FROM ins
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros)
  SELECT COUNT(*) AS inserted FROM ins`;

export const RELEASE = `
  WITH old AS (
    SELECT request_id, key_id, state, estimate_micros, day_period, month_period
    FROM ledger_reservations WHERE request_id = $1 FOR UPDATE),
  upd AS (
    UPDATE ledger_reservations r SET state = 'released', resolved_at = $2
    FROM old WHERE r.request_id = old.request_id AND old.state = 'open'
    RETURNING old.key_id, old.day_period, old.month_period, old.estimate_micros),
  spend AS (
    INSERT INTO ledger_spend (key_id, period, micros)
    SELECT key_id, day_period, -estimate_micros FROM upd UNION ALL SELECT key_id, month_period, -estimate_micros FROM upd
    ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros)
  SELECT state FROM old`;

/** A reservation read again by its id after the budget check failed (see reserve). */
export const FIND_RESERVATION = `SELECT key_id AS r_key_id, state AS r_state, estimate_micros AS r_estimate, actual_micros AS r_actual,
          day_period AS r_day, month_period AS r_month FROM ledger_reservations WHERE request_id = $1`;

/** recover(): every open reservation older than the cut-off, released in one statement. */
export const RELEASE_STALE = `UPDATE ledger_reservations SET state = 'released', resolved_at = $1 WHERE state = 'open' AND created_at < $2
         RETURNING key_id, estimate_micros, day_period, month_period`;

/** recover(): the released estimates taken off the spend rows, one row per (key, period), in lock order. */
export const SUBTRACT_SPEND = `INSERT INTO ledger_spend (key_id, period, micros) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
          ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros`;

/** recover(): open reservations whose request row committed (the answer went out), oldest first. */
export const ANSWERED_OPEN = `SELECT q.request_id, q.model, q.cost_micros FROM ledger_reservations r JOIN ledger_requests q ON q.request_id = r.request_id
       WHERE r.state = 'open' ORDER BY r.created_at`;

export const READ_SPEND = 'SELECT period, micros FROM ledger_spend WHERE key_id = $1 AND period IN ($2, $3)';
