// `herd keys create|list|revoke`: gateway keys (with their limits) in the store named by --db, else
// by herd.yaml's auth.db, else ./data/herd.db. A new key goes to stdout alone so scripts can capture it.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadHerdConfigFile } from '../config/load-herd-config.ts';
import { HerdError } from '../core/errors.ts';
import { resolveAuthSettings } from '../gateway/keys/auth-settings.ts';
import { formatBudgetAmount, parseBudgetAmount } from '../gateway/keys/budget-amount.ts';
import type { AllowedModels, KeyLimits, KeyStore, StoredKey } from '../gateway/keys/key-store.ts';
import { openKeyStore, parseKeyStoreLocation } from '../gateway/keys/open-key-store.ts';
import { parsePriority, resolvePriority } from '../gateway/limits/priority.ts';

export interface KeysFlags {
  config?: string;
  db?: string;
}

export interface KeysCreateFlags extends KeysFlags {
  name: string;
  /** `a,b` or `*` (the default). */
  models?: string;
  /** Limits as typed: whole numbers, decimal amounts in the settlement currency, high|normal|batch. */
  rpm?: string;
  tpm?: string;
  maxConcurrency?: string;
  budgetDay?: string;
  budgetMonth?: string;
  priority?: string;
}

export interface KeysListFlags extends KeysFlags {
  json?: boolean;
}

/** Where output goes; tests capture it instead of the process streams. */
export interface KeysIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

const processIo: KeysIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

export function registerKeysCommand(program: Command, io: KeysIo = processIo): void {
  const keys = program.command('keys').description('manage the API keys clients use for the OpenAI-compatible gateway');
  const withStore = (command: Command) =>
    command
      .option('--config <file>', 'herd.yaml whose auth.db to use (default: ./herd.yaml when present)')
      .option('--db <path>', 'key store file, overriding herd.yaml (default ./data/herd.db)');

  withStore(keys.command('create'))
    .description('create a key; it is printed once and cannot be shown again')
    .requiredOption('--name <name>', 'who or what will use the key')
    .option('--models <list>', "comma-separated models the key may call, or '*' for all", '*')
    .option('--rpm <n>', 'requests per minute (default: no limit)')
    .option('--tpm <n>', 'tokens per minute, prompt + completion (default: no limit)')
    .option('--max-concurrency <n>', 'requests in flight at once (default: no limit)')
    .option('--budget-day <amount>', 'spend per UTC day in the settlement currency, e.g. 50 or 12.50 (default: no limit)')
    .option('--budget-month <amount>', 'spend per UTC month in the settlement currency (default: no limit)')
    .option('--priority <class>', 'admission class when a request sends no x-herd-priority: high, normal or batch (default: normal)')
    .action((flags: KeysCreateFlags) => runKeysCreate(flags, io));
  withStore(keys.command('list'))
    .description('list keys (never their secrets)')
    .option('--json', 'print JSON instead of a table')
    .action((flags: KeysListFlags) => runKeysList(flags, io));
  withStore(keys.command('revoke'))
    .description('revoke a key by id or prefix; running servers stop accepting it from their next request on')
    .argument('<id-or-prefix>', 'the key id (key_…) or prefix (sk-herd-…) from herd keys list, or the key itself')
    .action((ref: string, flags: KeysFlags) => runKeysRevoke(ref, flags, io));
}

export async function runKeysCreate(flags: KeysCreateFlags, io: KeysIo): Promise<void> {
  const allowedModels = parseModelsFlag(flags.models ?? '*');
  const limits = parseLimitFlags(flags);
  const { store, path } = openStore(flags, io, false);
  try {
    const { key, secret } = await store.create({ name: flags.name, allowedModels, ...limits });
    const shown = formatLimits(key);
    io.stderr(`Created key ${key.id} '${key.name}' (models: ${formatModels(key.allowedModels)}${shown ? `; ${shown}` : ''}) in ${path}:\n`);
    io.stdout(`${secret}\n`);
    io.stderr('Store this key now: it is shown only once. Herd keeps only a hash of it and cannot show it again.\n');
  } finally {
    store.close();
  }
}

export async function runKeysList(flags: KeysListFlags, io: KeysIo): Promise<void> {
  const path = storePath(flags, io);
  if (!existsSync(path)) {
    if (flags.json) io.stdout('[]\n');
    else io.stdout(`No keys yet (${path} does not exist). Create one with: herd keys create --name NAME\n`);
    return;
  }
  const { store } = openStore(flags, io, true);
  try {
    const keys = await store.list();
    if (flags.json) io.stdout(`${JSON.stringify(keys.map(convertKeyToJson), null, 2)}\n`);
    else if (keys.length === 0) io.stdout(`No keys in ${path}. Create one with: herd keys create --name NAME\n`);
    else io.stdout(`${formatKeysTable(keys)}\n`);
  } finally {
    store.close();
  }
}

export async function runKeysRevoke(ref: string, flags: KeysFlags, io: KeysIo): Promise<void> {
  const { store } = openStore(flags, io, true);
  try {
    const { key, alreadyRevoked } = await store.revoke(ref);
    if (alreadyRevoked) {
      io.stdout(`Key ${key.id} '${key.name}' (${key.prefix}…) was already revoked on ${formatDate(key.revokedAt)}.\n`);
    } else {
      io.stdout(`Revoked key ${key.id} '${key.name}' (${key.prefix}…). Running servers refuse it from their next request on.\n`);
    }
  } finally {
    store.close();
  }
}

/** `*` for every model, else the comma-separated names (validated by the store). */
export function parseModelsFlag(value: string): AllowedModels {
  const text = value.trim();
  return text === '*' ? '*' : text.split(',').map((m) => m.trim());
}

/** The limit flags of `keys create`, checked and converted (amounts to micro-units, exactly). */
export function parseLimitFlags(flags: Pick<KeysCreateFlags, 'rpm' | 'tpm' | 'maxConcurrency' | 'budgetDay' | 'budgetMonth' | 'priority'>): KeyLimits {
  const limits: KeyLimits = {};
  if (flags.rpm !== undefined) limits.rpm = parseCount(flags.rpm, '--rpm');
  if (flags.tpm !== undefined) limits.tpm = parseCount(flags.tpm, '--tpm');
  if (flags.maxConcurrency !== undefined) limits.maxConcurrency = parseCount(flags.maxConcurrency, '--max-concurrency');
  if (flags.budgetDay !== undefined) limits.budgetDayMicros = parseBudgetAmount(flags.budgetDay, '--budget-day');
  if (flags.budgetMonth !== undefined) limits.budgetMonthMicros = parseBudgetAmount(flags.budgetMonth, '--budget-month');
  if (flags.priority !== undefined) limits.defaultPriority = parsePriority(flags.priority, '--priority');
  return limits;
}

export function formatKeysTable(keys: readonly StoredKey[]): string {
  const header = ['ID', 'Name', 'Prefix', 'Models', 'Created', 'Revoked', 'Priority', 'RPM', 'TPM', 'Concurrency', 'Budget/day', 'Budget/month'];
  const rows = keys.map((k) => [
    k.id,
    k.name,
    `${k.prefix}…`,
    formatModels(k.allowedModels),
    formatDate(k.createdAt),
    k.revokedAt ? formatDate(k.revokedAt) : '-',
    // The class its requests run at without an x-herd-priority header: the key's, else normal.
    resolvePriority(undefined, k.defaultPriority).toLowerCase(),
    orDash(k.rpm),
    orDash(k.tpm),
    orDash(k.maxConcurrency),
    k.budgetDayMicros === undefined ? '-' : formatBudgetAmount(k.budgetDayMicros),
    k.budgetMonthMicros === undefined ? '-' : formatBudgetAmount(k.budgetMonthMicros),
  ]);
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)));
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const format = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [rule, format(header), rule, ...rows.map(format), rule].join('\n');
}

/** The key store location: --db, else herd.yaml (--config or ./herd.yaml), else the default. */
export function resolveKeyStoreLocation(flags: KeysFlags, env: NodeJS.ProcessEnv): string {
  if (flags.db !== undefined) return flags.db;
  const file = flags.config ?? (existsSync('herd.yaml') ? 'herd.yaml' : undefined);
  return resolveAuthSettings(file ? loadHerdConfigFile(file, env).config.auth : undefined).keyStore;
}

function storePath(flags: KeysFlags, io: KeysIo): string {
  const location = parseKeyStoreLocation(resolveKeyStoreLocation(flags, io.env));
  if (location.kind !== 'sqlite') throw new HerdError('UNSUPPORTED', 'herd keys supports only sqlite: key stores for now');
  return resolve(location.path);
}

function openStore(flags: KeysFlags, io: KeysIo, mustExist: boolean): { store: KeyStore; path: string } {
  const path = storePath(flags, io);
  return { store: openKeyStore(path, { mustExist }), path };
}

function parseCount(text: string, flag: string): number {
  const value = text.trim();
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new HerdError('INVALID_ARG', `${flag} must be a whole number of at least 1, got '${text}'`, { param: flag });
  return n;
}

/** `rpm 60, tpm 90000, 4 concurrent, 10.00/day, 200.00/month, priority batch`; empty without limits. */
function formatLimits(key: KeyLimits): string {
  const parts: string[] = [];
  if (key.rpm !== undefined) parts.push(`rpm ${key.rpm}`);
  if (key.tpm !== undefined) parts.push(`tpm ${key.tpm}`);
  if (key.maxConcurrency !== undefined) parts.push(`${key.maxConcurrency} concurrent`);
  if (key.budgetDayMicros !== undefined) parts.push(`${formatBudgetAmount(key.budgetDayMicros)}/day`);
  if (key.budgetMonthMicros !== undefined) parts.push(`${formatBudgetAmount(key.budgetMonthMicros)}/month`);
  if (key.defaultPriority !== undefined) parts.push(`priority ${key.defaultPriority.toLowerCase()}`);
  return parts.join(', ');
}

function orDash(value: number | undefined): string {
  return value === undefined ? '-' : String(value);
}

function formatModels(models: AllowedModels): string {
  return models === '*' ? '*' : models.join(',');
}

function formatDate(date: Date | undefined): string {
  return date ? `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '-';
}

function convertKeyToJson(key: StoredKey) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    models: key.allowedModels,
    created: key.createdAt.toISOString(),
    revoked: key.revokedAt?.toISOString() ?? null,
    priority: key.defaultPriority ?? null,
    rpm: key.rpm ?? null,
    tpm: key.tpm ?? null,
    max_concurrency: key.maxConcurrency ?? null,
    /** Settlement currency micro-units (1e-6), exact. */
    budget_day_micros: key.budgetDayMicros ?? null,
    budget_month_micros: key.budgetMonthMicros ?? null,
  };
}
