// Budget arithmetic shared by both ledgers: which day and month (UTC) a charge counts in, and the
// BUDGET_EXCEEDED error when a reservation would take a key past one of its budgets.
import { HerdError } from '../../core/errors.ts';
import type { Budgets, Spend } from './ledger.ts';
import { formatMoney, type CurrencyCode, type Micros } from './money.ts';

export interface BudgetPeriods {
  /** 'd:2026-05-01' */
  day: string;
  /** 'm:2026-05' */
  month: string;
}

/** UTC calendar day and month of `atMs`. Day sorts before month ('d' < 'm'): the lock order both ledgers use. */
export function budgetPeriods(atMs: number): BudgetPeriods {
  const iso = new Date(atMs).toISOString();
  return { day: `d:${iso.slice(0, 10)}`, month: `m:${iso.slice(0, 7)}` };
}

export class BudgetExceededError extends HerdError {
  readonly period: 'day' | 'month';
  readonly spentMicros: Micros;
  readonly budgetMicros: Micros;
  readonly estimateMicros: Micros;

  constructor(options: { keyId: string; period: 'day' | 'month'; spentMicros: Micros; budgetMicros: Micros; estimateMicros: Micros; currency?: CurrencyCode | undefined }) {
    const money = (m: Micros) => (options.currency ? formatBudgetAmount(m, options.currency) : `${m} micro-units`);
    const span = options.period === 'day' ? 'daily' : 'monthly';
    super(
      'BUDGET_EXCEEDED',
      `You exceeded your current quota: this request (up to ${money(options.estimateMicros)}) would take key '${options.keyId}' past its ${span} budget of ${money(options.budgetMicros)} (spent and reserved so far: ${money(options.spentMicros)}).`,
    );
    this.name = 'BudgetExceededError';
    this.period = options.period;
    this.spentMicros = options.spentMicros;
    this.budgetMicros = options.budgetMicros;
    this.estimateMicros = options.estimateMicros;
  }
}

/**
 * The error to throw when spend + estimate would exceed a budget (day checked first), else
 * undefined. Exactly reaching a budget is allowed. A settlement above its estimate may still
 * overshoot: budgets bound what is reserved, and the next reservation sees the overshoot.
 */
export function checkBudgets(keyId: string, spent: Spend, estimateMicros: Micros, budgets: Budgets, currency?: CurrencyCode): BudgetExceededError | undefined {
  const over = (period: 'day' | 'month', spentMicros: Micros, budget: number | undefined) =>
    budget !== undefined && spentMicros + estimateMicros > budget
      ? new BudgetExceededError({ keyId, period, spentMicros, budgetMicros: budget, estimateMicros, currency })
      : undefined;
  return over('day', spent.dayMicros, budgets.dayMicros) ?? over('month', spent.monthMicros, budgets.monthMicros);
}

/** Cents, except that a non-zero amount below one cent says so rather than showing 0.00. */
function formatBudgetAmount(micros: Micros, currency: CurrencyCode): string {
  return micros > 0 && micros < 10_000 ? `less than ${formatMoney(10_000, currency)}` : formatMoney(micros, currency);
}
