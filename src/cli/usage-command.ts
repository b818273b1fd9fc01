// `herd usage`: spend and tokens from the ledger grouped by day, model, provider, key or team, in the
// settlement currency, true USD and list USD; a table, or --json (the same JSON as GET /admin/usage).
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import type { BillingConfig } from '../config/billing-config-schema.ts';
import type { HerdConfig } from '../config/herd-config-schema.ts';
import { loadHerdConfigFile } from '../config/load-herd-config.ts';
import { HerdError } from '../core/errors.ts';
import { openLedger, parseLedgerLocation, resolveLedgerLocation } from '../gateway/billing/open-ledger.ts';
import { buildUsageReport, convertUsageReportToJson, formatUsageReport, parseSince, parseUsageGroup } from '../gateway/billing/usage-report.ts';

export interface BillingCliFlags {
  config?: string;
  /** Overrides herd.yaml's billing.ledger. */
  ledger?: string;
}

export interface UsageFlags extends BillingCliFlags {
  since?: string;
  until?: string;
  by?: string;
  json?: boolean;
}

/** Where output goes and what time it is; tests capture and pin them. */
export interface BillingCliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  now?: () => number;
}

export const processIo: BillingCliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

export const DEFAULT_LEDGER = 'sqlite:./data/herd.db';

export function registerUsageCommand(program: Command, io: BillingCliIo = processIo): void {
  program
    .command('usage')
    .description('spend and tokens from the ledger, by day, model, provider, key or team (settlement currency and USD)')
    .option('--since <when>', 'start: a duration back from now (7d, 24h, 30m, 2w) or a date (2026-05-01, UTC)', '7d')
    .option('--until <when>', 'end (exclusive), same forms as --since; default now')
    .option('--by <group>', 'day | model | provider | key | team', 'day')
    .option('--json', 'print JSON (the same as GET /admin/usage)')
    .option('--config <file>', 'herd.yaml whose billing.ledger to read (default: ./herd.yaml when present)')
    .option('--ledger <location>', 'sqlite:PATH or postgres://…, overriding herd.yaml')
    .action((flags: UsageFlags) => runUsage(flags, io));
}

export async function runUsage(flags: UsageFlags, io: BillingCliIo): Promise<void> {
  const now = (io.now ?? Date.now)();
  const by = parseUsageGroup(flags.by);
  const sinceMs = parseSince(flags.since ?? '7d', now);
  const untilMs = flags.until === undefined ? now : parseSince(flags.until, now);
  if (untilMs <= sinceMs) throw new HerdError('INVALID_ARG', `--until (${new Date(untilMs).toISOString()}) must be after --since (${new Date(sinceMs).toISOString()})`);
  const location = resolveCliLedger(flags, io.env).location;
  const parsed = parseLedgerLocation(location);
  // Reading a report never creates a database.
  if (parsed.kind === 'sqlite' && !existsSync(parsed.path)) {
    const empty = { sinceMs, untilMs, by, rows: [], totals: [] };
    io.stdout(flags.json ? `${JSON.stringify(convertUsageReportToJson(empty), null, 2)}\n` : `No usage recorded yet (${resolve(parsed.path)} does not exist).\n`);
    return;
  }
  const ledger = await openLedger(location);
  try {
    const report = await buildUsageReport(ledger, { sinceMs, untilMs, by });
    io.stdout(flags.json ? `${JSON.stringify(convertUsageReportToJson(report), null, 2)}\n` : formatUsageReport(report));
  } finally {
    await ledger.close();
  }
}

/**
 * herd.yaml (--config, else ./herd.yaml when present) and the ledger to use: --ledger, else
 * billing.ledger, else sqlite:./data/herd.db — a SQLite path relative to herd.yaml when there is one.
 */
export function resolveCliLedger(flags: BillingCliFlags, env: NodeJS.ProcessEnv): { location: string; config: HerdConfig | undefined; billing: BillingConfig | undefined } {
  const file = flags.config ?? (existsSync('herd.yaml') ? 'herd.yaml' : undefined);
  const config = file === undefined ? undefined : loadHerdConfigFile(file, env).config;
  const billing = config === undefined ? undefined : readBillingSection(config);
  // Like auth.db, the ledger (configured or default) sits relative to herd.yaml when there is one.
  const configured = billing?.ledger ?? DEFAULT_LEDGER;
  const location = flags.ledger ?? (file === undefined ? configured : resolveLedgerLocation(configured, dirname(resolve(file))));
  return { location, config, billing };
}

/** herd.yaml's billing section; absent until the config has one (then the defaults apply). */
export function readBillingSection(config: HerdConfig): BillingConfig | undefined {
  return (config as HerdConfig & { billing?: BillingConfig }).billing;
}
