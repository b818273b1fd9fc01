// The PostgreSQL ledger's budget side: a reservation locks every spend counter its lines name (creating
// them if needed) in one fixed order (subject, then bucket: spendCounters), checks every line, then adds
// to each; settle, release and recover lock the reservation row first, then the counters in that order,
// so no two transactions, on any replica, deadlock on them or decide on a stale total. READ COMMITTED
// suffices: every decision reads rows this transaction holds locked. Settlements write the alert outbox
// rows they cross in the same transaction (ON CONFLICT DO NOTHING on subject, bucket, threshold).
import type { PoolClient } from 'pg';
import { HerdError } from '../../core/errors.ts';
import { type StoredLine, counterKey, draftAlerts, heldMicros, openReservation, parseStoredLines, serializeLines, spendCounters, splitPart } from './budget-lines.ts';
import { budgetPeriods, checkBudgetLines } from './check-budgets.ts';
import type { BudgetLine, ReleaseResult, Reservation, ReservationState, ReserveInput, SettleInput, SettleResult, SettlePartResult } from './ledger.ts';
import { toSafeMicros, type Micros } from './money.ts';

interface ReservationRow {
  request_id: string;
  key_id: string;
  state: ReservationState;
  estimate_micros: string;
  actual_micros: string | null;
  day_period: string;
  month_period: string;
  lines: string | null;
  created_at: string;
  part_micros: string;
}

const LOCK_COUNTERS = `INSERT INTO ledger_spend (key_id, period, micros) SELECT s, b, 0 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(s, b, n) ORDER BY n
  ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros RETURNING key_id, period, micros`;
const ADD_COUNTERS = `INSERT INTO ledger_spend (key_id, period, micros, settled_micros)
  SELECT s, b, d, x FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) WITH ORDINALITY AS t(s, b, d, x, n) ORDER BY n
  ON CONFLICT (key_id, period) DO UPDATE SET micros = ledger_spend.micros + EXCLUDED.micros, settled_micros = ledger_spend.settled_micros + EXCLUDED.settled_micros
  RETURNING key_id, period, settled_micros`;
const READ_COUNTERS = `SELECT key_id, period, micros FROM ledger_spend WHERE (key_id, period) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;
const SELECT_RESERVATION = 'SELECT * FROM ledger_reservations WHERE request_id = $1';
const INSERT_RESERVATION = `INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, actual_micros, day_period, month_period, lines, created_at, resolved_at, expires_at)
  VALUES ($1, $2, $3, $4::bigint, $5::bigint, $6, $7, $8, $9, $10, $11::bigint)`;
const SELECT_PART = 'SELECT cost_micros, held_micros FROM ledger_reservation_parts WHERE line_request_id = $1';
const INSERT_PART = `INSERT INTO ledger_reservation_parts (line_request_id, reservation_id, cost_micros, held_micros, created_at)
  VALUES ($1, $2, $3::bigint, $4::bigint, $5) ON CONFLICT (line_request_id) DO NOTHING`;
const ADD_PART = 'UPDATE ledger_reservations SET part_micros = part_micros + $2::bigint WHERE request_id = $1';
const RESOLVE = 'UPDATE ledger_reservations SET state = $2, actual_micros = $3::bigint, resolved_at = $4 WHERE request_id = $1';
const INSERT_ALERTS = `INSERT INTO ledger_alerts (id, subject, bucket, threshold, payload, state, attempts, next_at, created_at)
  SELECT i, s, b, t, p, 'pending', 0, $6, $6 FROM unnest($1::text[], $2::text[], $3::text[], $4::smallint[], $5::text[]) AS u(i, s, b, t, p)
  ON CONFLICT DO NOTHING`;

/** recover(): open reservations whose request row committed (the answer went out), oldest first. */
export const ANSWERED_OPEN = `SELECT q.request_id, q.model, q.cost_micros FROM ledger_reservations r JOIN ledger_requests q ON q.request_id = r.request_id
  WHERE r.state = 'open' ORDER BY r.created_at`;

export interface CounterDelta {
  subject: string;
  bucket: string;
  micros: Micros;
  settled: Micros;
}

export async function readCounters(c: Pick<PoolClient, 'query'>, lines: readonly Pick<BudgetLine, 'subject' | 'bucket'>[]): Promise<Micros[]> {
  if (lines.length === 0) return [];
  const { rows } = await c.query<{ key_id: string; period: string; micros: string }>(READ_COUNTERS, [lines.map((l) => l.subject), lines.map((l) => l.bucket)]);
  const found = new Map(rows.map((r) => [counterKey(r.key_id, r.period), toSafeMicros(r.micros)]));
  return lines.map((l) => found.get(counterKey(l.subject, l.bucket)) ?? 0);
}

/** Reserve, inside a transaction. */
export async function reserveLines(c: PoolClient, input: ReserveInput, at: number): Promise<Reservation> {
  const counters = spendCounters(input.lines);
  const { rows } = await c.query<{ key_id: string; period: string; micros: string }>(LOCK_COUNTERS, [counters.map((x) => x.subject), counters.map((x) => x.bucket)]);
  // Read after the locks: a reservation of this id committed while we waited is visible now.
  const existing = (await c.query<ReservationRow>(SELECT_RESERVATION, [input.requestId])).rows[0];
  if (existing) return replay(c, existing, input.keyId);
  const totals = new Map(rows.map((r) => [counterKey(r.key_id, r.period), toSafeMicros(r.micros)]));
  const spent = input.lines.map((l) => totals.get(counterKey(l.subject, l.bucket)) ?? 0);
  const over = checkBudgetLines(input.lines, spent, input.estimateMicros, input.currency);
  if (over) throw over;
  const periods = budgetPeriods(at);
  // A plain INSERT: a reservation of the same id racing this one fails with 23505 and the retry finds it.
  const expiresAt = input.expiresAtMs === undefined ? null : Math.round(input.expiresAtMs);
  await c.query(INSERT_RESERVATION, [
    input.requestId,
    input.keyId,
    'open',
    input.estimateMicros,
    null,
    periods.day,
    periods.month,
    serializeLines(input.lines),
    at,
    null,
    expiresAt,
  ]);
  await applyDeltas(c, input.lines, input.estimateMicros, 0, at);
  return openReservation(input, spent);
}

async function replay(c: PoolClient, row: ReservationRow, keyId: string): Promise<Reservation> {
  if (row.key_id !== keyId) throw new HerdError('INVALID_ARG', `request id ${row.request_id} is already reserved by another key`);
  const lines = parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period);
  const lineSpend = await readCounters(c, lines);
  const [day = 0, month = 0] = await readCounters(c, [
    { subject: row.key_id, bucket: row.day_period },
    { subject: row.key_id, bucket: row.month_period },
  ]);
  return {
    requestId: row.request_id,
    keyId: row.key_id,
    state: row.state,
    estimateMicros: toSafeMicros(row.estimate_micros),
    actualMicros: row.actual_micros === null ? undefined : toSafeMicros(row.actual_micros),
    created: false,
    spent: { dayMicros: day, monthMicros: month },
    lineSpend,
  };
}

/** Settle, inside a transaction. */
export async function settleLines(c: PoolClient, requestId: string, actual: SettleInput, at: number): Promise<SettleResult> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const row = (await c.query<ReservationRow>(`${SELECT_RESERVATION} FOR UPDATE`, [requestId])).rows[0];
    if (row) {
      if (row.state === 'settled') return { state: 'settled', actualMicros: toSafeMicros(row.actual_micros), changed: false };
      await settleRow(c, row, actual.costMicros, at);
      return { state: 'settled', actualMicros: actual.costMicros, changed: true };
    }
    if (actual.keyId === undefined) throw new HerdError('NOT_FOUND', `no reservation for request ${requestId} and no key to charge`);
    if (actual.costMicros === 0) return { state: 'none', actualMicros: 0, changed: false };
    const periods = budgetPeriods(at);
    const stored = actual.lines ? serializeLines(actual.lines) : null;
    const inserted = await c.query(`${INSERT_RESERVATION} ON CONFLICT (request_id) DO NOTHING`, [
      requestId,
      actual.keyId,
      'settled',
      0,
      actual.costMicros,
      periods.day,
      periods.month,
      stored,
      at,
      at,
      null,
    ]);
    if (inserted.rowCount === 1) {
      await applyDeltas(c, parseStoredLines(stored, actual.keyId, periods.day, periods.month), actual.costMicros, actual.costMicros, at);
      return { state: 'settled', actualMicros: actual.costMicros, changed: true };
    }
    // A reservation for this id appeared meanwhile: settle that one.
  }
  throw new HerdError('UNAVAILABLE', `the PostgreSQL ledger could not settle ${requestId}: it kept changing`);
}

/** Open: what it still holds is replaced (parts settled stay charged). Released (recover() gave up on it): the charge still counts. */
async function settleRow(c: PoolClient, row: ReservationRow, costMicros: Micros, at: number): Promise<void> {
  const delta = costMicros - holdOf(row);
  await c.query(RESOLVE, [row.request_id, 'settled', costMicros, at]);
  await applyDeltas(c, parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period), delta, costMicros, at);
}

const holdOf = (row: ReservationRow) => heldMicros(row.state, toSafeMicros(row.estimate_micros), toSafeMicros(row.part_micros));

/**
 * One line of a batch's reservation, inside a transaction: the reservation row locked first (as settle does),
 * so two parts of one batch, or one line replayed on two replicas, take turns; the part's row decides a replay.
 */
export async function settlePartLines(c: PoolClient, reservationId: string, lineRequestId: string, costMicros: Micros, at: number): Promise<SettlePartResult> {
  const row = (await c.query<ReservationRow>(`${SELECT_RESERVATION} FOR UPDATE`, [reservationId])).rows[0];
  if (!row) throw new HerdError('NOT_FOUND', `no reservation ${reservationId} to settle line ${lineRequestId} against`);
  const hold = holdOf(row);
  const part = splitPart(hold, costMicros);
  const inserted = await c.query(INSERT_PART, [lineRequestId, reservationId, costMicros, part.held, at]);
  if (inserted.rowCount !== 1) {
    const done = (await c.query<{ cost_micros: string; held_micros: string }>(SELECT_PART, [lineRequestId])).rows[0];
    const cost = toSafeMicros(done?.cost_micros ?? 0);
    return { state: row.state, costMicros: cost, heldMicros: toSafeMicros(done?.held_micros ?? 0), remainingMicros: hold, changed: false };
  }
  await c.query(ADD_PART, [reservationId, costMicros]);
  await applyDeltas(c, parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period), part.delta, costMicros, at);
  return { state: row.state, costMicros, heldMicros: part.held, remainingMicros: part.remaining, changed: true };
}

/** Release, inside a transaction. */
export async function releaseLines(c: PoolClient, requestId: string, at: number): Promise<ReleaseResult> {
  const row = (await c.query<ReservationRow>(`${SELECT_RESERVATION} FOR UPDATE`, [requestId])).rows[0];
  if (!row) return { state: 'none', changed: false };
  if (row.state !== 'open') return { state: row.state, changed: false };
  await c.query(RESOLVE, [row.request_id, 'released', null, at]);
  await applyDeltas(c, parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period), -holdOf(row), 0, at);
  return { state: 'released', changed: true };
}

/** recover(): every open reservation older than the cut-off released in one transaction; returns how many and how much. */
export async function releaseStale(c: PoolClient, now: number, cutoff: number): Promise<{ released: number; releasedMicros: Micros }> {
  // A batch's reservation (expires_at set) stays open until its window has passed, however old. RETURNING
  // gives the new row (state released): the hold is taken from its estimate and parts, as an open one's.
  const { rows } = await c.query<ReservationRow>(
    "UPDATE ledger_reservations SET state = 'released', resolved_at = $1 WHERE state = 'open' AND created_at < $2 AND (expires_at IS NULL OR expires_at < $1) RETURNING *",
    [now, cutoff],
  );
  const deltas = new Map<string, CounterDelta>();
  let releasedMicros = 0;
  for (const row of rows) {
    const micros = heldMicros('open', toSafeMicros(row.estimate_micros), toSafeMicros(row.part_micros));
    releasedMicros += micros;
    for (const counter of spendCounters(parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period))) {
      const id = counterKey(counter.subject, counter.bucket);
      const entry = deltas.get(id) ?? { ...counter, micros: 0, settled: 0 };
      entry.micros -= micros;
      deltas.set(id, entry);
    }
  }
  await addCounters(
    c,
    spendCounters([...deltas.values()]).map((k) => deltas.get(counterKey(k.subject, k.bucket)) as CounterDelta),
  );
  return { released: rows.length, releasedMicros };
}

/** Adds `delta` to every counter the lines name (once each, in lock order) and `settled` to settled spend; writes the alerts crossed. */
async function applyDeltas(c: PoolClient, lines: readonly StoredLine[], delta: Micros, settled: Micros, at: number): Promise<void> {
  if (delta === 0 && settled === 0) return;
  const after = await addCounters(
    c,
    spendCounters(lines).map((k) => ({ ...k, micros: delta, settled })),
  );
  if (settled <= 0) return;
  const alerts = lines.flatMap((line) => {
    const now = after.get(counterKey(line.subject, line.bucket)) ?? 0;
    return draftAlerts(line, now - settled, now, at);
  });
  if (alerts.length === 0) return;
  await c.query(INSERT_ALERTS, [
    alerts.map((a) => a.id),
    alerts.map((a) => a.subject),
    alerts.map((a) => a.bucket),
    alerts.map((a) => a.threshold),
    alerts.map((a) => a.payload),
    at,
  ]);
}

/** Counters already in lock order; returns each one's settled spend after the change. */
async function addCounters(c: PoolClient, deltas: readonly CounterDelta[]): Promise<Map<string, Micros>> {
  const live = deltas.filter((d) => d.micros !== 0 || d.settled !== 0);
  if (live.length === 0) return new Map();
  const { rows } = await c.query<{ key_id: string; period: string; settled_micros: string }>(ADD_COUNTERS, [
    live.map((d) => d.subject),
    live.map((d) => d.bucket),
    live.map((d) => String(d.micros)),
    live.map((d) => String(d.settled)),
  ]);
  return new Map(rows.map((r) => [counterKey(r.key_id, r.period), toSafeMicros(r.settled_micros)]));
}
