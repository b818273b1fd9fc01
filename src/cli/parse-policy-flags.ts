// The flags of `herd keys create|update` and `herd teams create|update` into the admin API's input shape
// (parse-admin-input.ts then makes KeyStore fields of it, as for the REST API): amounts typed in the
// settlement currency become exact micro-units; `none` clears a limit on update.
import type { Command } from 'commander';
import { HerdError } from '../core/errors.ts';
import type { KeyInputJson, PolicyInputJson } from '../gateway/admin/parse-admin-input.ts';
import { formatBudgetAmount, parseBudgetAmount } from '../gateway/keys/budget-amount.ts';
import { KEY_ROLES, type AllowedModels, type KeyRole } from '../gateway/keys/key-store.ts';
import { parsePriority } from '../gateway/limits/priority.ts';

export interface PolicyFlags {
  name?: string;
  models?: string;
  budget?: string[];
  budgetDay?: string;
  budgetMonth?: string;
  timezone?: string;
  alert?: string;
  rpm?: string;
  tpm?: string;
  maxConcurrency?: string;
}

export interface KeyPolicyFlags extends PolicyFlags {
  team?: string;
  role?: string;
  priority?: string;
  expires?: string;
  cidr?: string[];
  tag?: string[];
  meta?: string[];
  capMaxTokens?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The flags every policy (key or team) takes; `update`: they may say `none` to clear. */
export function addPolicyOptions(command: Command, update: boolean): Command {
  const clear = update ? "; 'none' clears" : '';
  return command
    .option('--models <list>', `comma-separated models, aliases or patterns (gpt-4o*) it may call, or '*' for all${update ? '' : " (default '*')"}`)
    .option(
      '--budget <period=amount[:model]>',
      `a spend cap per day, week or month in the settlement currency, e.g. day=100, month=2000, day=10:gpt-4o* (repeat for several${update ? "; replaces all; 'none' removes all" : ''})`,
      collect,
    )
    .option('--budget-day <amount>', 'same as --budget day=AMOUNT')
    .option('--budget-month <amount>', 'same as --budget month=AMOUNT')
    .option('--timezone <zone>', 'IANA time zone the budget periods align to (default UTC)')
    .option('--alert <percents>', "budget alert thresholds, e.g. 50,80,100 (default: the server's)")
    .option('--rpm <n>', `requests per minute${clear}`)
    .option('--tpm <n>', `tokens per minute, prompt + completion${clear}`)
    .option('--max-concurrency <n>', `requests in flight at once${clear}`);
}

export function addKeyOptions(command: Command, update: boolean): Command {
  const clear = update ? "; 'none' clears" : '';
  addPolicyOptions(command, update)
    .option('--team <team>', `the team (id or name) whose limits also apply${clear}`)
    .option('--role <role>', `${KEY_ROLES.join(' | ')} (default client): admin, viewer and manager keys reach the admin API`)
    .option('--priority <class>', `admission class when a request sends no x-herd-priority: high, normal or batch${clear}`)
    .option('--expires <when>', `a duration from now (30d, 12h) or a date (2027-01-01)${update ? "; 'never' clears" : ''}`)
    .option('--cidr <range>', `client addresses the key may be used from, e.g. 10.0.0.0/8 (repeat for several${update ? '; replaces all' : ''})`, collect)
    .option('--tag <tag>', `a tag copied into the key's ledger rows (repeat${update ? '; replaces all' : ''})`, collect)
    .option('--meta <key=value>', `metadata copied into the key's ledger rows (repeat${update ? '; replaces all' : ''})`, collect)
    .option('--cap-max-tokens', "when the budget cannot cover the model's maximum output, cap max_tokens instead of refusing");
  if (update) command.option('--no-cap-max-tokens', 'refuse such a request again instead of capping max_tokens');
  return command;
}

/** `day=100`, `month=2000.50`, `day=10:gpt-4o*`. */
export function parseBudgetFlag(text: string): { period: 'day' | 'week' | 'month'; amount_micros: number; model?: string } {
  const match = /^\s*(day|week|month)\s*=\s*([^:\s]+)\s*(?::\s*(\S.*?))?\s*$/i.exec(text);
  if (!match) throw new HerdError('INVALID_ARG', `--budget must look like day=100, month=2000 or day=10:gpt-4o* (period day, week or month), got '${text}'`, { param: '--budget' });
  const period = (match[1] as string).toLowerCase() as 'day' | 'week' | 'month';
  const amount_micros = parseBudgetAmount(match[2] as string, '--budget');
  return match[3] === undefined ? { period, amount_micros } : { period, amount_micros, model: match[3] };
}

export function parsePolicyFlags(flags: PolicyFlags, update: boolean): PolicyInputJson {
  const out: PolicyInputJson = {};
  if (flags.name !== undefined) out.name = flags.name;
  if (flags.models !== undefined) out.allowed_models = parseModelsFlag(flags.models);
  const budgets = (flags.budget ?? []).map((b) => (update && b.trim() === 'none' ? 'none' : parseBudgetFlag(b)));
  if (flags.budgetDay !== undefined) budgets.push({ period: 'day', amount_micros: parseBudgetAmount(flags.budgetDay, '--budget-day') });
  if (flags.budgetMonth !== undefined) budgets.push({ period: 'month', amount_micros: parseBudgetAmount(flags.budgetMonth, '--budget-month') });
  if (budgets.includes('none')) {
    if (budgets.length > 1) throw new HerdError('INVALID_ARG', '--budget none removes every budget: give it alone', { param: '--budget' });
    out.budgets = [];
  } else if (budgets.length > 0) out.budgets = budgets.filter((b) => b !== 'none');
  if (flags.timezone !== undefined) out.timezone = flags.timezone;
  if (flags.alert !== undefined) out.alert_thresholds = flags.alert.split(',').map((p) => parseCount(p, '--alert'));
  if (flags.rpm !== undefined) out.rpm = parseLimit(flags.rpm, '--rpm', update);
  if (flags.tpm !== undefined) out.tpm = parseLimit(flags.tpm, '--tpm', update);
  if (flags.maxConcurrency !== undefined) out.max_concurrency = parseLimit(flags.maxConcurrency, '--max-concurrency', update);
  return out;
}

export function parseKeyPolicyFlags(flags: KeyPolicyFlags, update: boolean): KeyInputJson {
  const out: KeyInputJson = parsePolicyFlags(flags, update);
  if (flags.team !== undefined) out.team = update && flags.team === 'none' ? null : flags.team;
  if (flags.role !== undefined) {
    if (!(KEY_ROLES as readonly string[]).includes(flags.role))
      throw new HerdError('INVALID_ARG', `--role must be one of ${KEY_ROLES.join(', ')}, got '${flags.role}'`, { param: '--role' });
    out.role = flags.role as KeyRole;
  }
  if (flags.priority !== undefined) out.priority = update && flags.priority === 'none' ? null : parsePriority(flags.priority, '--priority').toLowerCase();
  if (flags.expires !== undefined) out.expires_at = update && flags.expires === 'never' ? null : flags.expires;
  if (flags.cidr !== undefined) out.allowed_cidrs = flags.cidr;
  if (flags.tag !== undefined) out.tags = flags.tag;
  if (flags.meta !== undefined) out.metadata = Object.fromEntries(flags.meta.map(parseMetaFlag));
  if (flags.capMaxTokens !== undefined) out.cap_max_tokens = flags.capMaxTokens;
  return out;
}

/** `*` for every model, else the comma-separated names (validated by the store). */
export function parseModelsFlag(value: string): AllowedModels {
  const text = value.trim();
  return text === '*' ? '*' : text.split(',').map((m) => m.trim());
}

function parseMetaFlag(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw new HerdError('INVALID_ARG', `--meta must look like key=value, got '${text}'`, { param: '--meta' });
  return [text.slice(0, at).trim(), text.slice(at + 1)];
}

function parseLimit(text: string, flag: string, update: boolean): number | null {
  if (update && text.trim() === 'none') return null;
  return parseCount(text, flag);
}

function parseCount(text: string, flag: string): number {
  const value = text.trim();
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new HerdError('INVALID_ARG', `${flag} must be a whole number of at least 1, got '${text}'`, { param: flag });
  return n;
}

/** `rpm 60, tpm 90000, 4 concurrent, 12.50/day, 10.00/day on gpt-4o*`; empty without limits. */
export function formatPolicyLimits(policy: {
  rpm: number | null;
  tpm: number | null;
  max_concurrency: number | null;
  budgets: readonly { period: string; amount_micros: number; model: string | null }[];
}): string {
  const parts: string[] = [];
  if (policy.rpm !== null) parts.push(`rpm ${policy.rpm}`);
  if (policy.tpm !== null) parts.push(`tpm ${policy.tpm}`);
  if (policy.max_concurrency !== null) parts.push(`${policy.max_concurrency} concurrent`);
  for (const b of policy.budgets) parts.push(`${formatBudgetAmount(b.amount_micros)}/${b.period}${b.model === null ? '' : ` on ${b.model}`}`);
  return parts.join(', ');
}
