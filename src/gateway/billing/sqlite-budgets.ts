// The SQLite ledger's budget side: reservations held on every budget line at once, settled, released and
// recovered, with the alert outbox rows a settlement crosses written in the same transaction. Callers run
// each method inside BEGIN IMMEDIATE (SqliteLedger.immediate): one writer at a time across processes.
import type Database from 'better-sqlite3';
import { HerdError } from '../../core/errors.ts';
import { type StoredLine, counterKey, draftAlerts, heldMicros, openReservation, parseStoredLines, serializeLines, spendCounters, splitPart } from './budget-lines.ts';
import { budgetPeriods, checkBudgetLines } from './check-budgets.ts';
import type { BudgetLine, RecoverResult, ReleaseResult, Reservation, ReservationState, ReserveInput, SettleInput, SettleResult, SettlePartResult, Spend } from './ledger.ts';
import type { Micros } from './money.ts';

interface ReservationRow {
  request_id: string;
  key_id: string;
  state: ReservationState;
  estimate_micros: number;
  actual_micros: number | null;
  day_period: string;
  month_period: string;
  lines: string | null;
  created_at: number;
  part_micros: number;
  expires_at: number | null;
}

export class SqliteBudgets {
  private readonly sql;
  private readonly spendOf = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.sql = {
      reservation: db.prepare('SELECT * FROM ledger_reservations WHERE request_id = ?'),
      insertReservation:
        db.prepare(`INSERT INTO ledger_reservations (request_id, key_id, state, estimate_micros, actual_micros, day_period, month_period, lines, created_at, resolved_at, expires_at)
        VALUES (@request_id, @key_id, @state, @estimate_micros, @actual_micros, @day_period, @month_period, @lines, @created_at, @resolved_at, @expires_at)`),
      resolve: db.prepare('UPDATE ledger_reservations SET state = ?, actual_micros = ?, resolved_at = ? WHERE request_id = ?'),
      addSpend: db.prepare(`INSERT INTO ledger_spend (key_id, period, micros, settled_micros) VALUES (?, ?, ?, ?)
        ON CONFLICT (key_id, period) DO UPDATE SET micros = micros + excluded.micros, settled_micros = settled_micros + excluded.settled_micros
        RETURNING settled_micros`),
      stale: db.prepare("SELECT * FROM ledger_reservations WHERE state = 'open' AND created_at < ? AND (expires_at IS NULL OR expires_at < ?) ORDER BY created_at"),
      part: db.prepare('SELECT cost_micros, held_micros FROM ledger_reservation_parts WHERE line_request_id = ?'),
      insertPart: db.prepare('INSERT INTO ledger_reservation_parts (line_request_id, reservation_id, cost_micros, held_micros, created_at) VALUES (?, ?, ?, ?, ?)'),
      addPart: db.prepare('UPDATE ledger_reservations SET part_micros = part_micros + ? WHERE request_id = ?'),
      answered: db.prepare(`SELECT r.*, q.model AS answered_model, q.cost_micros AS answered_cost FROM ledger_reservations r
        JOIN ledger_requests q ON q.request_id = r.request_id WHERE r.state = 'open' ORDER BY r.created_at`),
      insertAlert: db.prepare(`INSERT INTO ledger_alerts (id, subject, bucket, threshold, payload, state, attempts, next_at, created_at)
        VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT DO NOTHING`),
    };
  }

  reserve(input: ReserveInput, at: number): Reservation {
    const existing = this.sql.reservation.get(input.requestId) as ReservationRow | undefined;
    if (existing) return this.replay(existing, input.keyId);
    const spent = this.budgetSpend(input.lines);
    const over = checkBudgetLines(input.lines, spent, input.estimateMicros, input.currency);
    if (over) throw over;
    const periods = budgetPeriods(at);
    this.sql.insertReservation.run({
      request_id: input.requestId,
      key_id: input.keyId,
      state: 'open',
      estimate_micros: input.estimateMicros,
      actual_micros: null,
      day_period: periods.day,
      month_period: periods.month,
      lines: serializeLines(input.lines),
      created_at: Math.round(at),
      resolved_at: null,
      expires_at: input.expiresAtMs === undefined ? null : Math.round(input.expiresAtMs),
    });
    this.apply(input.lines, input.estimateMicros, 0, at);
    return openReservation(input, spent);
  }

  settle(requestId: string, actual: SettleInput, at: number): SettleResult {
    const row = this.sql.reservation.get(requestId) as ReservationRow | undefined;
    if (!row) {
      if (actual.keyId === undefined) throw new HerdError('NOT_FOUND', `no reservation for request ${requestId} and no key to charge`);
      if (actual.costMicros === 0) return { state: 'none', actualMicros: 0, changed: false };
      const periods = budgetPeriods(at);
      const lines = actual.lines ?? parseStoredLines(null, actual.keyId, periods.day, periods.month);
      this.sql.insertReservation.run({
        request_id: requestId,
        key_id: actual.keyId,
        state: 'settled',
        estimate_micros: 0,
        actual_micros: actual.costMicros,
        day_period: periods.day,
        month_period: periods.month,
        lines: actual.lines ? serializeLines(actual.lines) : null,
        created_at: Math.round(at),
        resolved_at: Math.round(at),
        expires_at: null,
      });
      this.apply(lines, actual.costMicros, actual.costMicros, at);
      return { state: 'settled', actualMicros: actual.costMicros, changed: true };
    }
    if (row.state === 'settled') return { state: 'settled', actualMicros: row.actual_micros ?? 0, changed: false };
    this.settleRow(row, actual.costMicros, at);
    return { state: 'settled', actualMicros: actual.costMicros, changed: true };
  }

  /** Open: what it still holds is replaced (parts settled stay charged). Released (recover() gave up on it): the charge still counts. */
  private settleRow(row: ReservationRow, costMicros: Micros, at: number): void {
    const delta = costMicros - heldMicros(row.state, row.estimate_micros, row.part_micros);
    this.sql.resolve.run('settled', costMicros, Math.round(at), row.request_id);
    this.apply(parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period), delta, costMicros, at);
  }

  settlePart(reservationId: string, lineRequestId: string, costMicros: Micros, at: number): SettlePartResult {
    const row = this.sql.reservation.get(reservationId) as ReservationRow | undefined;
    if (!row) throw new HerdError('NOT_FOUND', `no reservation ${reservationId} to settle line ${lineRequestId} against`);
    const hold = heldMicros(row.state, row.estimate_micros, row.part_micros);
    const done = this.sql.part.get(lineRequestId) as { cost_micros: number; held_micros: number } | undefined;
    if (done) return { state: row.state, costMicros: done.cost_micros, heldMicros: done.held_micros, remainingMicros: hold, changed: false };
    const part = splitPart(hold, costMicros);
    this.sql.insertPart.run(lineRequestId, reservationId, costMicros, part.held, Math.round(at));
    this.sql.addPart.run(costMicros, reservationId);
    this.apply(parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period), part.delta, costMicros, at);
    return { state: row.state, costMicros, heldMicros: part.held, remainingMicros: part.remaining, changed: true };
  }

  release(requestId: string, at: number): ReleaseResult {
    const row = this.sql.reservation.get(requestId) as ReservationRow | undefined;
    if (!row) return { state: 'none', changed: false };
    if (row.state !== 'open') return { state: row.state, changed: false };
    this.releaseRow(row, at);
    return { state: 'released', changed: true };
  }

  /** Refunds what the row still holds; its settled parts stay charged. */
  private releaseRow(row: ReservationRow, at: number): Micros {
    const hold = heldMicros(row.state, row.estimate_micros, row.part_micros);
    this.sql.resolve.run('released', null, Math.round(at), row.request_id);
    this.apply(parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period), -hold, 0, at);
    return hold;
  }

  recover(now: number, olderThanMs: number): RecoverResult {
    // First the reservations whose request row committed: the answer went out, so the charge is the row's.
    let settled = 0,
      settledMicros = 0;
    for (const row of this.sql.answered.all() as (ReservationRow & { answered_model: string | null; answered_cost: number })[]) {
      if (row.answered_model === null) {
        this.releaseRow(row, now);
        continue;
      }
      this.settleRow(row, row.answered_cost, now);
      settled++;
      settledMicros += row.answered_cost;
    }
    // A batch's reservation (expires_at set) stays open until its window has passed, however old.
    const rows = this.sql.stale.all(now - olderThanMs, now) as ReservationRow[];
    let releasedMicros = 0;
    for (const row of rows) releasedMicros += this.releaseRow(row, now);
    return { released: rows.length, releasedMicros, settled, settledMicros };
  }

  /** One statement for every line (prepared once per line count). */
  budgetSpend(lines: readonly Pick<BudgetLine, 'subject' | 'bucket'>[]): Micros[] {
    if (lines.length === 0) return [];
    let statement = this.spendOf.get(lines.length);
    if (!statement) {
      statement = this.db.prepare(`SELECT key_id, period, micros FROM ledger_spend WHERE (key_id, period) IN (VALUES ${lines.map(() => '(?, ?)').join(', ')})`);
      this.spendOf.set(lines.length, statement);
    }
    const rows = statement.all(lines.flatMap((l) => [l.subject, l.bucket])) as { key_id: string; period: string; micros: number }[];
    const found = new Map(rows.map((r) => [counterKey(r.key_id, r.period), r.micros]));
    return lines.map((l) => found.get(counterKey(l.subject, l.bucket)) ?? 0);
  }

  spend(keyId: string, atMs: number): Spend {
    const periods = budgetPeriods(atMs);
    const [day = 0, month = 0] = this.budgetSpend([
      { subject: keyId, bucket: periods.day },
      { subject: keyId, bucket: periods.month },
    ]);
    return { dayMicros: day, monthMicros: month };
  }

  /** Adds `delta` to every counter the lines name (once each) and `settled` to their settled spend; writes the alerts that crosses. */
  private apply(lines: readonly StoredLine[], delta: Micros, settled: Micros, at: number): void {
    if (delta === 0 && settled === 0) return;
    const after = new Map<string, number>();
    for (const c of spendCounters(lines)) {
      const row = this.sql.addSpend.get(c.subject, c.bucket, delta, settled) as { settled_micros: number };
      after.set(counterKey(c.subject, c.bucket), row.settled_micros);
    }
    if (settled <= 0) return;
    for (const line of lines) {
      const now = after.get(counterKey(line.subject, line.bucket)) ?? 0;
      for (const a of draftAlerts(line, now - settled, now, at)) this.sql.insertAlert.run(a.id, a.subject, a.bucket, a.threshold, a.payload, Math.round(at), Math.round(at));
    }
  }

  private replay(row: ReservationRow, keyId: string): Reservation {
    if (row.key_id !== keyId) throw new HerdError('INVALID_ARG', `request id ${row.request_id} is already reserved by another key`);
    const lines = parseStoredLines(row.lines, row.key_id, row.day_period, row.month_period);
    const lineSpend = this.budgetSpend(lines);
    return {
      requestId: row.request_id,
      keyId: row.key_id,
      state: row.state,
      estimateMicros: row.estimate_micros,
      actualMicros: row.actual_micros ?? undefined,
      created: false,
      spent: this.spend(row.key_id, row.created_at),
      lineSpend,
    };
  }
}
