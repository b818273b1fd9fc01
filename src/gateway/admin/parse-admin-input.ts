// The admin API's JSON (and the CLI's flags, once parsed) into the KeyStore's fields: snake_case to
// camelCase, priorities, expiry and grace durations. Values the store validates (zones, CIDRs) pass as given.
import { HerdError } from '../../core/errors.ts';
import { parsePriority } from '../limits/priority.ts';
import type { AllowedModels, BudgetRule, KeyFields, KeyPatch, KeyRole, TeamFields, TeamPatch } from '../keys/key-store.ts';

interface BudgetRuleJson {
  period: BudgetRule['period'];
  amount_micros: number;
  model?: string | undefined;
}

/** A policy as the API's JSON carries it; in a PATCH each field may also be null (cleared). */
export interface PolicyInputJson {
  name?: string | null | undefined;
  allowed_models?: AllowedModels | null | undefined;
  budgets?: readonly BudgetRuleJson[] | null | undefined;
  timezone?: string | null | undefined;
  alert_thresholds?: readonly number[] | null | undefined;
  rpm?: number | null | undefined;
  tpm?: number | null | undefined;
  max_concurrency?: number | null | undefined;
}

export interface KeyInputJson extends PolicyInputJson {
  team?: string | null | undefined;
  role?: KeyRole | null | undefined;
  priority?: string | null | undefined;
  allowed_cidrs?: readonly string[] | null | undefined;
  tags?: readonly string[] | null | undefined;
  metadata?: Readonly<Record<string, string>> | null | undefined;
  expires_at?: string | null | undefined;
  cap_max_tokens?: boolean | null | undefined;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d`, `12h`, `90m`, `45s`, `2w` in ms. */
export function parseDurationMs(text: string, param: string): number {
  const match = /^\s*(\d+)\s*([smhdw])\s*$/i.exec(text);
  if (!match) throw new HerdError('INVALID_ARG', `${param} must be a duration such as 30m, 24h, 7d or 2w, got '${text}'`, { param });
  return Number(match[1]) * (UNIT_MS[(match[2] as string).toLowerCase()] as number);
}

/** An expiry as typed: a duration from now (`30d`), a date (`2027-01-01`, 00:00 UTC) or an ISO time with offset. Epoch ms. */
export function parseExpiry(text: string, nowMs: number, param = 'expires_at'): number {
  const value = text.trim();
  if (/^\d+\s*[smhdw]$/i.test(value)) return nowMs + parseDurationMs(value, param);
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}T.+(?:Z|[+-]\d{2}:\d{2})$/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new HerdError('INVALID_ARG', `${param} must be a duration from now (30d, 12h) or a date such as 2027-01-01 or 2027-01-01T00:00:00Z, got '${text}'`, { param });
  }
  if (ms <= nowMs) throw new HerdError('INVALID_ARG', `${param} ${new Date(ms).toISOString()} is in the past: a key would be expired at once`, { param });
  return ms;
}

/** A rotation's grace: seconds, or a duration (`24h`). */
export function parseGraceMs(grace: number | string | undefined): number | undefined {
  if (grace === undefined) return undefined;
  return typeof grace === 'number' ? grace * 1000 : parseDurationMs(grace, 'grace');
}

function convertBudgets(budgets: readonly BudgetRuleJson[]): BudgetRule[] {
  return budgets.map((b) => ({ period: b.period, amountMicros: b.amount_micros, ...(b.model !== undefined ? { model: b.model } : {}) }));
}

/** Only the fields present: a create leaves the rest to the store's defaults, a patch leaves them alone. */
function convertPolicy(input: PolicyInputJson): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (input.name !== undefined) out.name = input.name;
  if (input.allowed_models !== undefined) out.allowedModels = input.allowed_models;
  if (input.budgets !== undefined) out.budgets = input.budgets === null ? null : convertBudgets(input.budgets);
  if (input.timezone !== undefined) out.timezone = input.timezone;
  if (input.alert_thresholds !== undefined) out.alertThresholds = input.alert_thresholds;
  if (input.rpm !== undefined) out.rpm = input.rpm;
  if (input.tpm !== undefined) out.tpm = input.tpm;
  if (input.max_concurrency !== undefined) out.maxConcurrency = input.max_concurrency;
  return out;
}

function convertKeyInput(input: KeyInputJson, nowMs: number): Record<string, unknown> {
  const out = convertPolicy(input);
  if (input.team !== undefined) out.team = input.team;
  if (input.role !== undefined) out.role = input.role;
  if (input.priority !== undefined) out.defaultPriority = input.priority === null ? null : parsePriority(input.priority, 'priority');
  if (input.allowed_cidrs !== undefined) out.allowedCidrs = input.allowed_cidrs;
  if (input.tags !== undefined) out.tags = input.tags;
  if (input.metadata !== undefined) out.metadata = input.metadata;
  if (input.expires_at !== undefined) out.expiresAt = input.expires_at === null ? null : parseExpiry(input.expires_at, nowMs);
  if (input.cap_max_tokens !== undefined) out.capMaxTokens = input.cap_max_tokens;
  return out;
}

export function parseKeyFields(input: KeyInputJson & { name: string }, nowMs: number): KeyFields {
  return convertKeyInput(input, nowMs) as unknown as KeyFields;
}

export function parseKeyPatch(input: KeyInputJson, nowMs: number): KeyPatch {
  return convertKeyInput(input, nowMs) as KeyPatch;
}

export function parseTeamFields(input: PolicyInputJson & { name: string }): TeamFields {
  return convertPolicy(input) as unknown as TeamFields;
}

export function parseTeamPatch(input: PolicyInputJson): TeamPatch {
  return convertPolicy(input) as TeamPatch;
}
