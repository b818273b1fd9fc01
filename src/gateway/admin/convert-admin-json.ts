// Keys, teams, audit rows and budgets as the admin API's JSON (snake_case, integer micro-units, ISO
// times): one shape for GET /admin/v1/…, `herd … --json` and GET /v1/me. Never a secret or a hash.
import { formatBudgetAmount } from '../keys/budget-amount.ts';
import type { AccessPolicy, AuditEvent, BudgetRule, StoredKey, StoredTeam, TeamInfo } from '../keys/key-store.ts';
import type { BudgetStatus, KeyPeriodSpend } from './budget-status.ts';

export type KeyState = 'active' | 'blocked' | 'expired' | 'revoked';

export function keyStateOf(key: StoredKey, nowMs: number): KeyState {
  if (key.revokedAt !== undefined) return 'revoked';
  if (key.blocked) return 'blocked';
  if (key.expiresAt !== undefined && key.expiresAt <= nowMs) return 'expired';
  return 'active';
}

export function convertBudgetRuleToJson(rule: BudgetRule) {
  return { period: rule.period, amount_micros: rule.amountMicros, amount: formatBudgetAmount(rule.amountMicros), model: rule.model ?? null };
}

function convertPolicyToJson(policy: AccessPolicy) {
  return {
    allowed_models: policy.allowedModels === '*' ? '*' : [...policy.allowedModels],
    budgets: policy.budgets.map(convertBudgetRuleToJson),
    timezone: policy.timezone,
    alert_thresholds: [...policy.alertThresholds],
    rpm: policy.rpm ?? null,
    tpm: policy.tpm ?? null,
    max_concurrency: policy.maxConcurrency ?? null,
  };
}

export function convertTeamRefToJson(team: TeamInfo | undefined) {
  return team === undefined ? null : { id: team.id, name: team.name };
}

export function convertPeriodSpendToJson(spend: KeyPeriodSpend) {
  return {
    period: spend.period,
    spent_micros: spend.spentMicros,
    spent: formatBudgetAmount(spend.spentMicros),
    limit_micros: spend.limitMicros,
    limit: formatBudgetAmount(spend.limitMicros),
    resets_at: new Date(spend.resetsAt).toISOString(),
  };
}

/** `spend`: undefined when no ledger is open (billing.ledger: off), null when the key has no budget of its own. */
export function convertKeyToJson(key: StoredKey, nowMs: number, spend?: KeyPeriodSpend | null) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    role: key.role,
    team: convertTeamRefToJson(key.team),
    state: keyStateOf(key, nowMs),
    ...convertPolicyToJson(key),
    priority: key.defaultPriority?.toLowerCase() ?? null,
    allowed_cidrs: [...key.allowedCidrs],
    tags: [...key.tags],
    metadata: { ...key.metadata },
    expires_at: isoOrNull(key.expiresAt),
    cap_max_tokens: key.capMaxTokens,
    blocked: key.blocked,
    created_at: key.createdAt.toISOString(),
    updated_at: key.updatedAt.toISOString(),
    revoked_at: isoOrNull(key.revokedAt),
    rotated_at: isoOrNull(key.rotatedAt),
    last_used_at: isoOrNull(key.lastUsedAt),
    ...(spend === undefined ? {} : { spend: spend === null ? null : convertPeriodSpendToJson(spend) }),
  };
}

export type KeyJson = ReturnType<typeof convertKeyToJson>;

export function convertTeamToJson(team: StoredTeam) {
  return { id: team.id, name: team.name, ...convertPolicyToJson(team), created_at: team.createdAt.toISOString(), updated_at: team.updatedAt.toISOString() };
}

export function convertAuditEventToJson(event: AuditEvent) {
  return {
    seq: event.seq,
    at: event.at.toISOString(),
    actor_id: event.actorId,
    actor_name: event.actorName,
    action: event.action,
    object: event.object,
    before: event.before ?? null,
    after: event.after ?? null,
    count: event.count,
    request_id: event.requestId ?? null,
    source_ip: event.sourceIp ?? null,
    prev_hash: event.prevHash,
    hash: event.hash,
  };
}

export function convertBudgetStatusToJson(status: BudgetStatus) {
  const { line } = status;
  return {
    owner: { kind: line.owner.kind, id: line.owner.id, name: line.owner.name },
    period: line.period,
    model: line.model ?? null,
    timezone: line.timezone,
    limit_micros: line.limitMicros,
    spent_micros: status.spentMicros,
    remaining_micros: status.remainingMicros,
    limit: formatBudgetAmount(line.limitMicros),
    spent: formatBudgetAmount(status.spentMicros),
    remaining: formatBudgetAmount(status.remainingMicros),
    resets_at: new Date(line.resetsAt).toISOString(),
  };
}

function isoOrNull(value: Date | number | undefined): string | null {
  if (value === undefined) return null;
  return (typeof value === 'number' ? new Date(value) : value).toISOString();
}
