// KeyInfo and BudgetLine fixtures for budget tests: a key (and team) with budget rules, without a key store.
import { planBudgets } from '../../../src/gateway/billing/plan-budgets.ts';
import type { BudgetLine } from '../../../src/gateway/billing/ledger.ts';
import type { BudgetRule, KeyInfo, TeamInfo } from '../../../src/gateway/keys/key-store.ts';
import { createSyntheticKey } from '../../../src/gateway/keys/synthetic-key.ts';

export function testTeam(overrides: Partial<TeamInfo> = {}): TeamInfo {
  return { id: 'tm_research', name: 'research', allowedModels: '*', budgets: [], timezone: 'UTC', alertThresholds: [], ...overrides };
}

export function testKey(overrides: Partial<KeyInfo> = {}): KeyInfo {
  return createSyntheticKey({ id: 'hk_test', name: 'team-a', prefix: 'sk-herd-hk_t', ...overrides });
}

/** Far above anything a test spends: lines that only count. */
export const UNLIMITED = 1_000_000_000_000;

/** The key's UTC day and month lines (a budget left out is UNLIMITED), as the ledger contract uses them. */
export function dayMonthLines(keyId: string, budgets: { dayMicros?: number; monthMicros?: number }, atMs: number, thresholds: readonly number[] = []): BudgetLine[] {
  const rules: BudgetRule[] = [
    { period: 'day', amountMicros: budgets.dayMicros ?? UNLIMITED },
    { period: 'month', amountMicros: budgets.monthMicros ?? UNLIMITED },
  ];
  return planBudgets(testKey({ id: keyId, name: keyId, budgets: rules, alertThresholds: thresholds }), atMs);
}
