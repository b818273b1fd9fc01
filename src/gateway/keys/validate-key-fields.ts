// Checks and normalises what a caller asks a key or team to be, before any store sees it, so SQLite and
// PostgreSQL accept exactly the same names, model patterns, budgets, zones, CIDRs and limits.
import { isIP } from 'node:net';
import { HerdError } from '../../core/errors.ts';
import { isPriority } from '../limits/priority.ts';
import type { AccessPolicy, AllowedModels, BudgetRule, KeyFields, KeyRole, RateLimits, TeamFields } from './key-store.ts';
import { KEY_ROLES } from './key-store.ts';
import type { KeyPolicy } from './key-rows.ts';
import { quoteUntrusted } from './mask-key.ts';

const MAX_NAME_LENGTH = 100;
const MAX_LIST = 64;
const MAX_TAG_LENGTH = 64;
const MAX_METADATA_VALUE = 512;
// Control characters in a name or model would corrupt the CLI's table and any log line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL = /[\u0000-\u001f\u007f]/;
const PERIODS = ['day', 'week', 'month'];

export interface ValidKeyFields {
  name: string;
  /** The team reference as given (id or name); the store resolves it. */
  team: string | undefined;
  role: KeyRole;
  policy: KeyPolicy;
  expiresAt: number | undefined;
}

export interface ValidTeamFields {
  name: string;
  policy: AccessPolicy;
}

/** What an update left alone is not checked again: a released name with '/', an expiry now past. */
export interface RecheckOptions {
  name: boolean;
  expiresAt: boolean;
}

export function validateKeyFields(fields: KeyFields, nowMs: number, recheck: RecheckOptions = { name: true, expiresAt: true }): ValidKeyFields {
  const role = fields.role ?? 'client';
  if (!KEY_ROLES.includes(role)) throw invalid('role', `role must be one of ${KEY_ROLES.join(', ')}, got ${quoteUntrusted(String(role))}`);
  const team = fields.team?.trim() || undefined;
  if (role === 'manager' && team === undefined) throw invalid('role', "a 'manager' key manages its own team's keys: give it a team");
  if (recheck.expiresAt && fields.expiresAt !== undefined && (!Number.isSafeInteger(fields.expiresAt) || fields.expiresAt <= nowMs)) {
    throw invalid('expiresAt', 'expiresAt must be a time in the future (epoch milliseconds)');
  }
  if (fields.defaultPriority !== undefined && !isPriority(fields.defaultPriority)) {
    throw invalid('defaultPriority', `defaultPriority must be HIGH, NORMAL or BATCH, got ${JSON.stringify(fields.defaultPriority)}`);
  }
  const policy: KeyPolicy = {
    ...validateAccessPolicy(fields),
    allowedCidrs: validateCidrs(fields.allowedCidrs ?? []),
    tags: validateTags(fields.tags ?? []),
    metadata: validateMetadata(fields.metadata ?? {}),
    capMaxTokens: fields.capMaxTokens ?? false,
    ...(fields.defaultPriority !== undefined ? { defaultPriority: fields.defaultPriority } : {}),
  };
  const name = recheck.name ? validateName(fields.name, 'key') : fields.name;
  return { name, team, role, policy, expiresAt: fields.expiresAt };
}

export function validateTeamFields(fields: TeamFields, recheckName = true): ValidTeamFields {
  return { name: recheckName ? validateName(fields.name, 'team') : fields.name, policy: validateAccessPolicy(fields) };
}

/** `/` is refused because `team/name` addresses a key; names made before #28 keep theirs. */
function validateName(raw: string | undefined, what: 'key' | 'team'): string {
  const name = (raw ?? '').trim();
  const example = what === 'key' ? 'the service or person that will use it' : 'the group that owns its keys';
  if (name === '') throw invalid('name', `a ${what} needs a name (e.g. ${example})`);
  if (name.length > MAX_NAME_LENGTH) throw invalid('name', `a ${what} name may have at most ${MAX_NAME_LENGTH} characters, got ${name.length}`);
  if (CONTROL.test(name) || name.includes('/')) throw invalid('name', `a ${what} name may not contain '/' or control characters`);
  if (/^(hk|tm|key)_/.test(name) || name.startsWith('sk-'))
    throw invalid('name', `a ${what} name may not look like an id or a secret (hk_, tm_, key_, sk-): ${quoteUntrusted(name)}`);
  return name;
}

function validateAccessPolicy(fields: RateLimits & Partial<Pick<AccessPolicy, 'allowedModels' | 'budgets' | 'timezone' | 'alertThresholds'>>): AccessPolicy {
  const timezone = (fields.timezone ?? 'UTC').trim();
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw invalid('timezone', `timezone ${quoteUntrusted(timezone)} is not an IANA time zone (e.g. UTC, Europe/Berlin, Asia/Shanghai)`);
  }
  return {
    allowedModels: validateAllowedModels(fields.allowedModels ?? '*'),
    budgets: validateBudgets(fields.budgets ?? []),
    timezone,
    alertThresholds: validateThresholds(fields.alertThresholds ?? []),
    ...validateRateLimits(fields),
  };
}

/** Only the limits that are set, each a whole number ≥ 1. */
function validateRateLimits(input: RateLimits): RateLimits {
  const limits: RateLimits = {};
  for (const field of ['rpm', 'tpm', 'maxConcurrency'] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw invalid(field, `${field} must be a whole number of at least 1, got ${value}`);
    limits[field] = value;
  }
  return limits;
}

function validateAllowedModels(models: AllowedModels): AllowedModels {
  if (models === '*') return '*';
  if (!Array.isArray(models)) throw invalid('allowedModels', "allowed models must be '*' or a list of model names and patterns");
  const names = [...new Set(models.map((m) => String(m).trim()))];
  if (names.length === 0 || names.some((m) => m === ''))
    throw invalid('allowedModels', "allowed models must be '*' or a list of model names or patterns (gpt-4o*), none of them empty");
  if (names.includes('*')) {
    if (names.length === 1) return '*';
    throw invalid('allowedModels', "'*' already allows every model: give it alone or list names without it");
  }
  const bad = names.find((m) => CONTROL.test(m) || m.includes(','));
  if (bad !== undefined) throw invalid('allowedModels', `model name ${quoteUntrusted(bad)} may not contain commas or control characters`);
  return names;
}

function validateBudgets(rules: readonly BudgetRule[]): BudgetRule[] {
  const seen = new Set<string>();
  return rules.map((rule, i) => {
    const param = `budgets[${i}]`;
    if (!PERIODS.includes(rule.period)) throw invalid(param, `${param}.period must be day, week or month, got ${quoteUntrusted(String(rule.period))}`);
    if (!Number.isSafeInteger(rule.amountMicros) || rule.amountMicros < 0) throw invalid(param, `${param}.amountMicros must be a whole number of micro-units ≥ 0`);
    const model = rule.model?.trim() || undefined;
    if (model !== undefined && (CONTROL.test(model) || model.length > MAX_NAME_LENGTH)) throw invalid(param, `${param}.model is not a model name or pattern`);
    const id = `${rule.period}\n${model ?? ''}`;
    if (seen.has(id)) throw invalid(param, `two budgets per ${rule.period}${model ? ` for ${model}` : ''}: give one`);
    seen.add(id);
    return model === undefined ? { period: rule.period, amountMicros: rule.amountMicros } : { period: rule.period, amountMicros: rule.amountMicros, model };
  });
}

function validateThresholds(values: readonly number[]): number[] {
  for (const v of values) {
    if (!Number.isFinite(v) || v <= 0 || v > 1000) throw invalid('alertThresholds', `alert thresholds are percentages above 0 and at most 1000, got ${v}`);
  }
  return [...new Set(values)].sort((a, b) => a - b);
}

/** `10.0.0.0/8`, `2001:db8::/32`; a bare address means just it (/32 or /128). */
function validateCidrs(cidrs: readonly string[]): string[] {
  if (cidrs.length > MAX_LIST) throw invalid('allowedCidrs', `at most ${MAX_LIST} CIDRs`);
  return [
    ...new Set(
      cidrs.map((raw) => {
        const text = String(raw).trim();
        const [address = '', bits, extra] = text.split('/');
        const family = isIP(address);
        const max = family === 6 ? 128 : 32;
        const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
        if (family === 0 || extra !== undefined || prefix < 0 || prefix > max)
          throw invalid('allowedCidrs', `${quoteUntrusted(text)} is not an IPv4 or IPv6 CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)`);
        return `${address}/${prefix}`;
      }),
    ),
  ];
}

function validateTags(tags: readonly string[]): string[] {
  if (tags.length > MAX_LIST) throw invalid('tags', `at most ${MAX_LIST} tags`);
  const clean = tags.map((t) => String(t).trim());
  const bad = clean.find((t) => t === '' || t.length > MAX_TAG_LENGTH || CONTROL.test(t));
  if (bad !== undefined) throw invalid('tags', `tag ${quoteUntrusted(bad)} must be 1–${MAX_TAG_LENGTH} characters without control characters`);
  return [...new Set(clean)];
}

function validateMetadata(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const entries = Object.entries(metadata);
  if (entries.length > MAX_LIST) throw invalid('metadata', `at most ${MAX_LIST} metadata entries`);
  for (const [k, v] of entries) {
    if (k === '' || k.length > MAX_TAG_LENGTH || CONTROL.test(k))
      throw invalid('metadata', `metadata key ${quoteUntrusted(k)} must be 1–${MAX_TAG_LENGTH} characters without control characters`);
    if (typeof v !== 'string' || v.length > MAX_METADATA_VALUE)
      throw invalid('metadata', `metadata value of ${quoteUntrusted(k)} must be a string of at most ${MAX_METADATA_VALUE} characters`);
  }
  return Object.fromEntries(entries);
}

/** The fields a patch sets (null included): a field given as undefined leaves the current value alone. */
export function presentOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function invalid(param: string, message: string): HerdError {
  return new HerdError('INVALID_ARG', message, { param });
}
