// Spend against budgets, read in one ledger query however many keys: a page of `herd keys list` or
// GET /admin/v1/keys (spend this period per key), and GET /v1/me (every budget of one key).
import type { BudgetLine, Ledger } from '../billing/ledger.ts';
import type { Micros } from '../billing/money.ts';
import type { KeyInfo } from '../keys/key-store.ts';

/** planBudgets(key, atMs, model?) of src/gateway/billing/plan-budgets.ts: the budgets a request would count against. */
export type BudgetPlanner = (key: KeyInfo, atMs: number, model?: string) => readonly BudgetLine[];

export type BudgetSpendReader = Pick<Ledger, 'budgetSpend'>;

/** One budget with what is spent of it now. */
export interface BudgetStatus {
  line: BudgetLine;
  spentMicros: Micros;
  /** limit − spent, never below 0. */
  remainingMicros: Micros;
}

/** A key's spend in its current period: that of its shortest budget of its own (not per model). */
export interface KeyPeriodSpend {
  period: BudgetLine['period'];
  bucket: string;
  spentMicros: Micros;
  limitMicros: Micros;
  resetsAt: number;
}

const PERIOD_ORDER: Record<BudgetLine['period'], number> = { day: 0, week: 1, month: 2 };

/** Every budget `key` counts against now (its own, its team's, per-model rules), with spend: one ledger query. */
export async function readBudgetStatus(key: KeyInfo, atMs: number, plan: BudgetPlanner, ledger: BudgetSpendReader): Promise<BudgetStatus[]> {
  const lines = plan(key, atMs);
  if (lines.length === 0) return [];
  const spent = await ledger.budgetSpend(lines);
  return lines.map((line, i) => {
    const spentMicros = spent[i] ?? 0;
    return { line, spentMicros, remainingMicros: Math.max(0, line.limitMicros - spentMicros) };
  });
}

/**
 * Each key's spend this period, for a list page: the lines of all keys go to the ledger in ONE query
 * (never one per row). Only a key with a budget of its own has one: the ledger keeps per-period spend
 * only for requests that count against a budget (`herd usage --by key` has everyone's).
 */
export async function readPeriodSpend(keys: readonly KeyInfo[], atMs: number, plan: BudgetPlanner, ledger: BudgetSpendReader): Promise<Map<string, KeyPeriodSpend>> {
  const chosen: { keyId: string; line: BudgetLine }[] = [];
  for (const key of keys) {
    const own = key.budgets.filter((b) => b.model === undefined);
    if (own.length === 0) continue;
    const lines = plan({ ...key, team: undefined, budgets: own }, atMs).filter((l) => l.owner.kind === 'key' && l.model === undefined);
    const line = lines.sort((a, b) => PERIOD_ORDER[a.period] - PERIOD_ORDER[b.period])[0];
    if (line) chosen.push({ keyId: key.id, line });
  }
  const result = new Map<string, KeyPeriodSpend>();
  if (chosen.length === 0) return result;
  const spent = await ledger.budgetSpend(chosen.map((c) => c.line));
  chosen.forEach((c, i) => {
    result.set(c.keyId, { period: c.line.period, bucket: c.line.bucket, spentMicros: spent[i] ?? 0, limitMicros: c.line.limitMicros, resetsAt: c.line.resetsAt });
  });
  return result;
}
