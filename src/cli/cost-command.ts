// `herd cost`: what a month of usage costs through each configured provider of each model, and the
// saving between them — from a profile file, from flags, or from the last N days of the ledger.
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { HerdError } from '../core/errors.ts';
import { createBatchDiscounts } from '../gateway/billing/batch-price.ts';
import { convertCostProjectionToJson, formatCostProjection, projectCosts } from '../gateway/billing/cost-projection.ts';
import { openLedger, parseLedgerLocation } from '../gateway/billing/open-ledger.ts';
import { createPriceCatalog } from '../gateway/billing/price-catalog.ts';
import { createSettlementRates } from '../gateway/billing/price-usage.ts';
import { createFlagsProfile, createLedgerProfile, parseUsageProfile, type UsageProfile } from '../gateway/billing/usage-profile.ts';
import { parseSince } from '../gateway/billing/usage-report.ts';
import { processIo, resolveCliLedger, type BillingCliFlags, type BillingCliIo } from './usage-command.ts';

export interface CostFlags extends BillingCliFlags {
  profile?: string;
  model?: string;
  input?: string;
  cachedInput?: string;
  cacheWrite?: string;
  output?: string;
  per?: string;
  fromLedger?: boolean;
  days?: string;
  /** Price the month with the catalog entries in force at this time (default now). */
  at?: string;
  json?: boolean;
}

export function registerCostCommand(program: Command, io: BillingCliIo = processIo): void {
  program
    .command('cost')
    .description('monthly (30-day) cost of a usage profile through each configured provider, and the saving between them')
    .option('--profile <file>', 'YAML: per: day|month, models: { NAME: { input, cached_input, cache_write, output } } (token counts; input includes cached)')
    .option('--model <name>', 'one model from flags instead of a profile')
    .option('--input <tokens>', 'prompt tokens (250000, 250k, 1.5M), cached ones included', '0')
    .option('--cached-input <tokens>', "of which read from the provider's cache", '0')
    .option('--cache-write <tokens>', "of which written to the provider's cache", '0')
    .option('--output <tokens>', 'completion tokens', '0')
    .option('--per <period>', 'the flag counts are per day (× 30) or per month', 'day')
    .option('--from-ledger', 'use what the ledger recorded over the last --days days, scaled to 30 days')
    .option('--days <n>', 'with --from-ledger: how many days back', '30')
    .option('--at <date>', 'price with the entries in force at this date (default now)')
    .option('--json', 'print JSON')
    .option('--config <file>', 'herd.yaml with the providers, models and prices (default ./herd.yaml)')
    .option('--ledger <location>', 'with --from-ledger: sqlite:PATH or postgres://…, overriding herd.yaml')
    .action((flags: CostFlags) => runCost(flags, io));
}

export async function runCost(flags: CostFlags, io: BillingCliIo): Promise<void> {
  const now = (io.now ?? Date.now)();
  const sources = [flags.profile !== undefined, flags.model !== undefined, flags.fromLedger === true].filter(Boolean).length;
  if (sources !== 1) throw new HerdError('INVALID_ARG', 'give exactly one usage source: --profile FILE, --model NAME with --input/--output, or --from-ledger [--days N]');
  if (flags.config === undefined && !existsSync('herd.yaml')) throw new HerdError('INVALID_ARG', 'herd cost prices the providers and models of a herd.yaml: pass --config FILE');
  const { location, config, billing } = resolveCliLedger(flags, io.env);
  if (!config || Object.keys(config.models).length === 0) throw new HerdError('INVALID_ARG', 'the config defines no models: nothing to price');
  const priced = { ...config, ...(billing ? { billing } : {}) };
  const atMs = flags.at === undefined ? now : parseSince(flags.at, now);
  const profile = await loadProfile(flags, priced, location, now);
  const batchDiscounts = createBatchDiscounts(priced.providers, billing?.batch_discount);
  const projection = projectCosts({ profile, config: priced, catalog: createPriceCatalog(priced), rates: createSettlementRates(priced), atMs, batchDiscounts });
  io.stdout(flags.json ? `${JSON.stringify(convertCostProjectionToJson(projection), null, 2)}\n` : formatCostProjection(projection));
}

async function loadProfile(flags: CostFlags, config: Parameters<typeof parseUsageProfile>[2], location: string, now: number): Promise<UsageProfile> {
  if (flags.profile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.profile, 'utf8');
    } catch (err) {
      throw new HerdError('INVALID_ARG', `cannot read profile ${flags.profile}: ${(err as Error).message}`);
    }
    return parseUsageProfile(text, flags.profile, config);
  }
  if (flags.model !== undefined) {
    const per = flags.per ?? 'day';
    if (per !== 'day' && per !== 'month') throw new HerdError('INVALID_ARG', `--per must be day or month, got '${per}'`);
    return createFlagsProfile(flags.model, { input: flags.input, cached_input: flags.cachedInput, cache_write: flags.cacheWrite, output: flags.output }, per, config);
  }
  const days = Number(flags.days ?? '30');
  if (!Number.isInteger(days) || days < 1) throw new HerdError('INVALID_ARG', `--days must be a whole number of days, at least 1, got '${flags.days}'`);
  const parsed = parseLedgerLocation(location);
  if (parsed.kind === 'sqlite' && !existsSync(parsed.path)) throw new HerdError('NOT_FOUND', `no ledger at ${parsed.path} yet: nothing recorded to project from`);
  const ledger = await openLedger(location);
  try {
    const rows = await ledger.usage({ sinceMs: now - days * 86_400_000, untilMs: now, by: 'model' });
    return createLedgerProfile(rows, days, config);
  } finally {
    await ledger.close();
  }
}
