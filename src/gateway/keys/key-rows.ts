// Rows of the key store's tables and their conversion to the contract's frozen objects. A policy column
// edited by hand into something unreadable limits the most (no models, zero budgets), never the least.
import { isPriority, type Priority } from '../limits/priority.ts';
import type { AccessPolicy, AllowedModels, BudgetRule, KeyRole, StoredKey, StoredTeam, TeamInfo } from './key-store.ts';
import { KEY_ROLES } from './key-store.ts';

/** A key's policy column: the team-shared policy plus what only a key has. */
export interface KeyPolicy extends AccessPolicy {
  defaultPriority?: Priority | undefined;
  allowedCidrs: readonly string[];
  tags: readonly string[];
  metadata: Readonly<Record<string, string>>;
  capMaxTokens: boolean;
}

/** Integers come back as numbers from SQLite and as strings (BIGINT) from pg. */
type Int = number | string;

export interface KeyRow {
  id: string;
  name: string;
  team_id: string | null;
  prefix: string;
  role: string;
  policy: string;
  expires_at: Int | null;
  blocked: Int;
  created_at: Int;
  updated_at: Int;
  rotated_at: Int | null;
  revoked_at: Int | null;
  last_used_at: Int | null;
  team_name: string | null;
  team_policy: string | null;
}

export interface TeamRow {
  id: string;
  name: string;
  policy: string;
  created_at: Int;
  updated_at: Int;
}

/** One query per page or lookup: the key, its team (JOIN) and its last use. */
export const KEY_SELECT = `SELECT k.id, k.name, k.team_id, k.prefix, k.role, k.policy, k.expires_at, k.blocked, k.created_at, k.updated_at,
  k.rotated_at, k.revoked_at, u.last_used_at, t.name AS team_name, t.policy AS team_policy
  FROM gateway_keys k LEFT JOIN gateway_teams t ON t.id = k.team_id LEFT JOIN key_last_used u ON u.key_id = k.id`;

export const TEAM_SELECT = 'SELECT id, name, policy, created_at, updated_at FROM gateway_teams';

export const toMs = (value: Int): number => Number(value);
export const toOptionalMs = (value: Int | null): number | undefined => (value === null ? undefined : Number(value));
const toDate = (value: Int | null): Date | undefined => (value === null ? undefined : new Date(Number(value)));

/** `teams` shares one frozen TeamInfo per team across a whole reload. */
export function convertKeyRow(row: KeyRow, teams?: Map<string, TeamInfo>): StoredKey {
  const policy = parseKeyPolicy(row.policy);
  let team: TeamInfo | undefined;
  if (row.team_id !== null && row.team_name !== null && row.team_policy !== null) {
    team = teams?.get(row.team_id) ?? makeTeamInfo(row.team_id, row.team_name, row.team_policy);
    teams?.set(row.team_id, team);
  }
  const role: KeyRole = (KEY_ROLES as readonly string[]).includes(row.role) ? (row.role as KeyRole) : 'client';
  return Object.freeze({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    role,
    team,
    ...policy,
    expiresAt: toOptionalMs(row.expires_at),
    createdAt: new Date(toMs(row.created_at)),
    updatedAt: new Date(toMs(row.updated_at)),
    blocked: Number(row.blocked) !== 0,
    revokedAt: toDate(row.revoked_at),
    rotatedAt: toDate(row.rotated_at),
    lastUsedAt: toDate(row.last_used_at),
  });
}

export function convertTeamRow(row: TeamRow): StoredTeam {
  return Object.freeze({ ...makeTeamInfo(row.id, row.name, row.policy), createdAt: new Date(toMs(row.created_at)), updatedAt: new Date(toMs(row.updated_at)) });
}

function makeTeamInfo(id: string, name: string, policy: string): TeamInfo {
  return Object.freeze({ id, name, ...parseAccessPolicy(readObject(policy)) });
}

export function parseKeyPolicy(text: string): KeyPolicy {
  const raw = readObject(text);
  const metadata = isRecord(raw.metadata) ? Object.fromEntries(Object.entries(raw.metadata).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};
  return {
    ...parseAccessPolicy(raw),
    ...(isPriority(raw.defaultPriority) ? { defaultPriority: raw.defaultPriority } : raw.defaultPriority == null ? {} : { defaultPriority: 'BATCH' as const }),
    allowedCidrs: Object.freeze(strings(raw.allowedCidrs) ?? []),
    tags: Object.freeze(strings(raw.tags) ?? []),
    metadata: Object.freeze(metadata),
    capMaxTokens: raw.capMaxTokens === true,
  };
}

/** The columns' JSON: fields in one fixed order, absent limits left out. */
export function serializePolicy(policy: AccessPolicy | KeyPolicy): string {
  return JSON.stringify(policy);
}

function parseAccessPolicy(raw: Record<string, unknown>): AccessPolicy {
  const policy: AccessPolicy = {
    allowedModels: parseAllowedModels(raw.allowedModels),
    budgets: Object.freeze(parseBudgets(raw.budgets)),
    timezone: typeof raw.timezone === 'string' ? raw.timezone : 'UTC',
    alertThresholds: Object.freeze((Array.isArray(raw.alertThresholds) ? raw.alertThresholds : []).filter((v): v is number => typeof v === 'number')),
  };
  for (const field of ['rpm', 'tpm', 'maxConcurrency'] as const) {
    const value = raw[field];
    if (value === undefined || value === null) continue;
    // Edited into nonsense: the tightest limit rather than none.
    policy[field] = Number.isSafeInteger(value) && (value as number) >= 1 ? (value as number) : 0;
  }
  return policy;
}

function parseAllowedModels(value: unknown): AllowedModels {
  if (value === '*') return '*';
  return Object.freeze(strings(value) ?? []);
}

function parseBudgets(value: unknown): BudgetRule[] {
  if (!Array.isArray(value)) return value === undefined ? [] : [{ period: 'day', amountMicros: 0 }];
  return value.map((r: unknown) => {
    const rule = isRecord(r) ? r : {};
    const period = rule.period === 'week' || rule.period === 'month' ? rule.period : 'day';
    const amountMicros = Number.isSafeInteger(rule.amountMicros) && (rule.amountMicros as number) >= 0 ? (rule.amountMicros as number) : 0;
    return Object.freeze(typeof rule.model === 'string' ? { period, amountMicros, model: rule.model } : { period, amountMicros });
  });
}

function readObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value)) return value;
  } catch {
    /* fall through */
  }
  return { allowedModels: [], budgets: [{ period: 'day', amountMicros: 0 }] };
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? [...value] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
