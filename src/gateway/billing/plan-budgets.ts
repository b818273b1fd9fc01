// Which budgets a request counts against: the key's and its team's rules (per-model ones only for a
// matching model), each as a BudgetLine in its calendar bucket, aligned in the owner's IANA time zone.
import type { AccessPolicy, BudgetRule, KeyInfo } from '../keys/key-store.ts';
import type { BudgetLine } from './ledger.ts';

export interface PlanBudgetOptions {
  /** Alert thresholds (percent) for an owner that sets none: the server's `billing.alerts.thresholds`. */
  defaultThresholds?: readonly number[];
}

/**
 * The lines for `key` at `atMs`. With `model` set, a per-model rule applies only when its pattern matches
 * it (a rule without a model always does); with `model` undefined, every rule is returned (/v1/me lists them).
 */
export function planBudgets(key: KeyInfo, atMs: number, model?: string, options: PlanBudgetOptions = {}): BudgetLine[] {
  const lines: BudgetLine[] = [];
  const add = (policy: AccessPolicy, owner: BudgetLine['owner'], subject: string) => {
    for (const rule of policy.budgets) {
      if (model !== undefined && rule.model !== undefined && !matchesModelPattern(rule.model, model)) continue;
      lines.push(planLine(rule, policy, owner, subject, atMs, options.defaultThresholds ?? []));
    }
  };
  add(key, { kind: 'key', id: key.id, name: key.name }, key.id);
  if (key.team) add(key.team, { kind: 'team', id: key.team.id, name: key.team.name }, `team:${key.team.id}`);
  return lines;
}

/** True when the key or its team has any budget rule: only those requests hold a reservation. */
export function hasBudgets(key: KeyInfo): boolean {
  return key.budgets.length > 0 || (key.team?.budgets.length ?? 0) > 0;
}

function planLine(rule: BudgetRule, policy: AccessPolicy, owner: BudgetLine['owner'], subject: string, atMs: number, defaults: readonly number[]): BudgetLine {
  const timezone = policy.timezone || 'UTC';
  const { bucket, resetsAt } = calendarBucket(rule.period, atMs, timezone);
  return {
    subject: rule.model === undefined ? subject : `${subject}#${rule.model}`,
    bucket,
    limitMicros: rule.amountMicros,
    owner,
    period: rule.period,
    model: rule.model,
    timezone,
    resetsAt,
    thresholds: policy.alertThresholds.length > 0 ? policy.alertThresholds : defaults,
  };
}

/** `*` matches any run of characters; everything else literally (the same patterns allowed models use). */
export function matchesModelPattern(pattern: string, model: string): boolean {
  if (!pattern.includes('*')) return pattern === model;
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 'u').test(model);
}

interface LocalDate {
  year: number;
  month: number;
  day: number;
}

/**
 * The bucket holding `atMs` and the epoch ms of the next boundary, in `zone`. UTC buckets keep the format
 * spend was recorded under before zones existed (`d:2026-12-06`, `m:2026-12`), so that spend carries over.
 */
export function calendarBucket(period: BudgetRule['period'], atMs: number, zone: string): { bucket: string; resetsAt: number } {
  const today = localDate(atMs, zone);
  const suffix = zone === 'UTC' ? '' : `@${zone}`;
  const pad = (n: number) => String(n).padStart(2, '0');
  switch (period) {
    case 'day':
      return { bucket: `d:${today.year}-${pad(today.month)}-${pad(today.day)}${suffix}`, resetsAt: startOfLocalDay(addDays(today, 1), zone) };
    case 'week': {
      // ISO 8601: weeks start on Monday; the week belongs to the year of its Thursday.
      const weekday = (new Date(Date.UTC(today.year, today.month - 1, today.day)).getUTCDay() + 6) % 7;
      const thursday = addDays(today, 3 - weekday);
      const yearStart = Date.UTC(thursday.year, 0, 1);
      const week = Math.floor((Date.UTC(thursday.year, thursday.month - 1, thursday.day) - yearStart) / 86_400_000 / 7) + 1;
      return { bucket: `w:${thursday.year}-W${pad(week)}${suffix}`, resetsAt: startOfLocalDay(addDays(today, 7 - weekday), zone) };
    }
    case 'month': {
      const next = today.month === 12 ? { year: today.year + 1, month: 1, day: 1 } : { year: today.year, month: today.month + 1, day: 1 };
      return { bucket: `m:${today.year}-${pad(today.month)}${suffix}`, resetsAt: startOfLocalDay(next, zone) };
    }
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall-clock fields of `atMs` in `zone`. */
function wallClock(atMs: number, zone: string): LocalDate & { hour: number; minute: number; second: number } {
  // Most budgets are in UTC: no Intl call on the request path for them.
  if (zone === 'UTC') {
    const d = new Date(atMs);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  }
  const parts: Record<string, number> = {};
  for (const p of formatterFor(zone).formatToParts(new Date(atMs))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1, hour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0 };
}

function localDate(atMs: number, zone: string): LocalDate {
  const { year, month, day } = wallClock(atMs, zone);
  return { year, month, day };
}

/** Milliseconds the zone's clock is ahead of UTC at `atMs`. */
function offsetAt(atMs: number, zone: string): number {
  const w = wallClock(atMs, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(atMs / 1000) * 1000;
}

function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function compareDates(a: LocalDate, b: LocalDate): number {
  return a.year - b.year || a.month - b.month || a.day - b.day;
}

/**
 * The first instant whose local date is `date`. Local midnight converted with the offset before and the
 * offset after it; where a DST jump skips midnight (the day starts at 01:00), only the later candidate
 * falls on the date, and it is the jump itself.
 */
function startOfLocalDay(date: LocalDate, zone: string): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day);
  const first = wall - offsetAt(wall, zone);
  const candidates = [first, wall - offsetAt(first, zone)].sort((a, b) => a - b);
  for (const t of candidates) if (compareDates(localDate(t, zone), date) >= 0) return t;
  return candidates[1] as number;
}
