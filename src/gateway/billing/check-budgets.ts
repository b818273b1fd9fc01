// Budget arithmetic shared by both ledgers: which line a reservation would take past its limit, and the
// BUDGET_EXCEEDED error that names the owner, the budget, the spend and when the period resets.
import { HerdError } from '../../core/errors.ts';
import type { BudgetLine } from './ledger.ts';
import { currencySymbol, type CurrencyCode, type Micros } from './money.ts';

export interface BudgetPeriods {
  /** 'd:2026-05-01' */
  day: string;
  /** 'm:2026-05' */
  month: string;
}

/** UTC calendar day and month of `atMs`: the buckets of reservations written before budget lines existed. */
export function budgetPeriods(atMs: number): BudgetPeriods {
  const iso = new Date(atMs).toISOString();
  return { day: `d:${iso.slice(0, 10)}`, month: `m:${iso.slice(0, 7)}` };
}

export class BudgetExceededError extends HerdError {
  readonly line: BudgetLine;
  readonly spentMicros: Micros;
  readonly budgetMicros: Micros;
  readonly estimateMicros: Micros;

  constructor(options: { line: BudgetLine; spentMicros: Micros; estimateMicros: Micros; currency?: CurrencyCode | undefined }) {
    const { line, spentMicros, estimateMicros } = options;
    const money = (m: Micros) => formatExactAmount(m, options.currency);
    const budget = `budget ${money(line.limitMicros)} per ${line.period}${line.model === undefined ? '' : ` for model ${line.model}`} for ${line.owner.kind} ${line.owner.name}`;
    const resets = `it resets at ${formatResetTime(line.resetsAt, line.timezone, line.period !== 'day')}`;
    const message =
      spentMicros >= line.limitMicros
        ? `${budget} is spent (${money(spentMicros)}); ${resets}`
        : `this request may cost up to ${money(estimateMicros)} and ${budget} has ${money(line.limitMicros - spentMicros)} left; ${resets}. Send a smaller max_tokens to fit it`;
    super('BUDGET_EXCEEDED', message);
    this.name = 'BudgetExceededError';
    this.line = line;
    this.spentMicros = spentMicros;
    this.budgetMicros = line.limitMicros;
    this.estimateMicros = estimateMicros;
  }
}

/**
 * The error to throw when spend + estimate would pass any line's limit (exactly reaching one is allowed),
 * naming the line with the least left; else undefined. `spent[i]` is line i's spend, reservations included.
 */
export function checkBudgetLines(lines: readonly BudgetLine[], spent: readonly Micros[], estimateMicros: Micros, currency?: CurrencyCode): BudgetExceededError | undefined {
  const leftOf = (i: number) => (lines[i]?.limitMicros ?? 0) - (spent[i] ?? 0);
  let worst: number | undefined;
  lines.forEach((_line, i) => {
    if (estimateMicros <= leftOf(i)) return;
    if (worst === undefined || leftOf(i) < leftOf(worst)) worst = i;
  });
  if (worst === undefined) return undefined;
  return new BudgetExceededError({ line: lines[worst] as BudgetLine, spentMicros: spent[worst] ?? 0, estimateMicros, currency });
}

/** What is left on the tightest line (never below 0); Infinity without lines. */
export function remainingBudget(lines: readonly BudgetLine[], spent: readonly Micros[]): Micros {
  let left = Number.POSITIVE_INFINITY;
  lines.forEach((line, i) => {
    left = Math.min(left, Math.max(0, line.limitMicros - (spent[i] ?? 0)));
  });
  return left;
}

/**
 * An amount with at least two decimals and as many more as it needs to be exact (`¥100.02`, `¥0.005`,
 * `¥0.0042`): a refusal about a sub-cent budget must show the figures it compared.
 */
export function formatExactAmount(micros: Micros, currency?: CurrencyCode): string {
  const negative = micros < 0;
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / 1_000_000);
  let fraction = String(abs % 1_000_000).padStart(6, '0');
  while (fraction.length > 2 && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  const grouped = String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const symbol = currency ? currencySymbol(currency) : '';
  return `${negative ? '-' : ''}${symbol}${grouped}.${fraction}${currency ? '' : ' units'}`;
}

/** `00:00 Asia/Shanghai`; with the date for a week or month (`Mon 2026-12-07 00:00 UTC`). */
export function formatResetTime(atMs: number, zone: string, withDate: boolean): string {
  const parts: Record<string, string> = {};
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
  for (const p of format.formatToParts(new Date(atMs))) parts[p.type] = p.value;
  const time = `${parts.hour}:${parts.minute}`;
  if (!withDate) return `${time} ${zone}`;
  return `${parts.weekday} ${parts.year}-${parts.month}-${parts.day} ${time} ${zone}`;
}
