// How both ledgers store a reservation's budget lines (JSON on its row), read back rows written before
// lines existed (the key's UTC day and month), and find the alert thresholds a settlement crosses.
import { createHash } from 'node:crypto';
import { HerdError } from '../../core/errors.ts';
import type { BudgetLine, Reservation, ReserveInput, Spend } from './ledger.ts';
import type { Micros } from './money.ts';

/** Lines as a reservation row keeps them: enough to settle and to describe an alert. */
export type StoredLine = Pick<BudgetLine, 'subject' | 'bucket' | 'limitMicros' | 'thresholds'> & Partial<Omit<BudgetLine, 'subject' | 'bucket' | 'limitMicros' | 'thresholds'>>;

export function serializeLines(lines: readonly BudgetLine[]): string {
  return JSON.stringify(lines.map((l) => ({ ...l, thresholds: [...l.thresholds] })));
}

/** A row's lines; NULL (a reservation from before budget lines): the key's UTC day and month, no alerts. */
export function parseStoredLines(json: string | null, keyId: string, dayPeriod: string, monthPeriod: string): StoredLine[] {
  if (json !== null && json !== '') return JSON.parse(json) as StoredLine[];
  return [
    { subject: keyId, bucket: dayPeriod, limitMicros: 0, thresholds: [] },
    { subject: keyId, bucket: monthPeriod, limitMicros: 0, thresholds: [] },
  ];
}

/**
 * One counter per (subject, bucket), sorted: the order every transaction locks spend rows in, so two
 * cannot deadlock; two rules on one counter (a key's day budget twice) share it.
 */
export function spendCounters<L extends Pick<BudgetLine, 'subject' | 'bucket'>>(lines: readonly L[]): { subject: string; bucket: string }[] {
  const seen = new Map<string, { subject: string; bucket: string }>();
  for (const l of lines) seen.set(`${l.subject}\u0000${l.bucket}`, { subject: l.subject, bucket: l.bucket });
  return [...seen.values()].sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
}

export function counterKey(subject: string, bucket: string): string {
  return `${subject}\u0000${bucket}`;
}

/** What an outbox row carries: the line, the threshold it crossed, and settled spend after the crossing. */
export interface AlertDraft {
  id: string;
  subject: string;
  bucket: string;
  threshold: number;
  payload: string;
}

/** The thresholds (percent of limitMicros) that settled spend moving from `before` to `after` crosses upwards. */
export function crossedThresholds(line: StoredLine, before: Micros, after: Micros): number[] {
  if (line.limitMicros <= 0 || after <= before) return [];
  return line.thresholds.filter((t) => {
    const at = Math.ceil((line.limitMicros * t) / 100);
    return before < at && after >= at;
  });
}

/** The outbox rows for a settlement that moved a line's settled spend from `before` to `after`. */
export function draftAlerts(line: StoredLine, before: Micros, after: Micros, atMs: number): AlertDraft[] {
  return crossedThresholds(line, before, after).map((threshold) => ({
    id: alertId(line.subject, line.bucket, threshold),
    subject: line.subject,
    bucket: line.bucket,
    threshold,
    payload: JSON.stringify({
      owner: line.owner,
      period: line.period,
      model: line.model,
      timezone: line.timezone,
      resetsAt: line.resetsAt,
      limitMicros: line.limitMicros,
      spentMicros: after,
      crossedAt: atMs,
    }),
  }));
}

/** Stable across replicas and retries (the webhook-id): one per (subject, bucket, threshold). */
export function alertId(subject: string, bucket: string, threshold: number): string {
  return `alrt_${createHash('sha256').update(`${subject}\u0000${bucket}\u0000${threshold}`).digest('hex').slice(0, 24)}`;
}

/** The key's own day and month lines' spend, for Reservation.spent (0 where the key has none). */
export function keySpend(keyId: string, lines: readonly BudgetLine[], lineSpend: readonly Micros[]): Spend {
  const find = (period: BudgetLine['period']) => {
    const i = lines.findIndex((l) => l.subject === keyId && l.period === period);
    return i < 0 ? 0 : (lineSpend[i] ?? 0);
  };
  return { dayMicros: find('day'), monthMicros: find('month') };
}

/** What a reservation just made answers: `spent` is the lines' spend before it, in the lines' order. */
export function openReservation(input: Pick<ReserveInput, 'requestId' | 'keyId' | 'estimateMicros' | 'lines'>, spent: readonly Micros[]): Reservation {
  const lineSpend = spent.map((s) => s + input.estimateMicros);
  return {
    requestId: input.requestId,
    keyId: input.keyId,
    state: 'open',
    estimateMicros: input.estimateMicros,
    actualMicros: undefined,
    created: true,
    spent: keySpend(input.keyId, input.lines, lineSpend),
    lineSpend,
  };
}

/** What an open reservation still holds once `partMicros` of it were settled line by line (settlePart): never below zero. */
export function heldMicros(state: string, estimateMicros: Micros, partMicros: Micros): Micros {
  return state === 'open' ? Math.max(0, estimateMicros - partMicros) : 0;
}

/**
 * One line settled against a hold: the part of its cost the hold covers, and the counter changes. Spend
 * counters (open holds + settled) grow by what the hold did not cover; settled spend by the whole cost.
 */
export function splitPart(hold: Micros, costMicros: Micros): { held: Micros; delta: Micros; remaining: Micros } {
  if (!Number.isSafeInteger(costMicros) || costMicros < 0) throw new HerdError('INVALID_ARG', `a line's cost must be whole micros, at least 0, got ${costMicros}`);
  const held = Math.min(hold, Math.max(0, costMicros));
  return { held, delta: costMicros - held, remaining: hold - held };
}
