// A usage profile for `herd cost`: tokens per model per month, exact. From a YAML file (per day or
// per month), from command-line flags, or from the last N days of the ledger scaled to 30 days.
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { GatewayConfig } from '../../config/gateway-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import type { UsageRow } from './ledger.ts';
import type { TokenCounts } from './price-usage.ts';
import { Rational } from './rational.ts';

/** A month, as `herd cost` counts it. */
export const DAYS_PER_MONTH = 30;

export interface ProfileModel {
  /** Canonical model name. */
  model: string;
  /** Tokens per month: prompt (cached reads and cache writes included), of which cached and written; completion. */
  monthly: TokenCounts<Rational>;
}

export interface UsageProfile {
  /** For the report's title: `profile.yaml (per day × 30)`, `ledger: last 7 days × 30/7`. */
  description: string;
  models: ProfileModel[];
  /** Ledger models no longer in herd.yaml, left out. */
  skipped: string[];
}

const COUNT = /^(\d+(?:\.\d+)?)\s*([kmb])?$/i;
const MULTIPLIER: Record<string, bigint> = { k: 1_000n, m: 1_000_000n, b: 1_000_000_000n };

/** `1000000`, `1_000_000`, `1,000,000`, `100k`, `1.5M`, `2B` → exact token count. */
export function parseTokenCount(value: number | string, what: string): Rational {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new HerdError('INVALID_ARG', `${what}: must be a token count of zero or more, got ${value}`);
    return Rational.of(value);
  }
  const match = COUNT.exec(value.trim().replace(/[_,]/g, ''));
  if (!match) throw new HerdError('INVALID_ARG', `${what}: '${value}' is not a token count (e.g. 250000, 250k, 1.5M)`);
  const suffix = match[2]?.toLowerCase();
  return Rational.of(match[1] as string).times(suffix ? (MULTIPLIER[suffix] as bigint) : 1n);
}

const countSchema = z.union([z.number(), z.string()]);
/** A profile file's shape; docs/configuration.md is generated from it. */
export const usageProfileSchema = z.strictObject({
  per: z.enum(['day', 'month']).default('day').describe('whether the counts are per day (multiplied by 30) or per month'),
  models: z
    .record(
      z.string(),
      z.strictObject({
        input: countSchema.default(0).describe('all prompt tokens, cached reads and cache writes included'),
        cached_input: countSchema.default(0).describe("of the prompt tokens, those read from the provider's cache"),
        cache_write: countSchema.default(0).describe("of the prompt tokens, those written to the provider's cache"),
        output: countSchema.default(0).describe('completion tokens'),
      }),
    )
    .describe('per model of herd.yaml (name or alias): token counts such as 250000, 250k, 1.5M'),
});

export interface ProfileCounts {
  input?: number | string | undefined;
  cached_input?: number | string | undefined;
  cache_write?: number | string | undefined;
  output?: number | string | undefined;
}

/** A profile file's text (YAML). */
export function parseUsageProfile(text: string, file: string, config: Pick<GatewayConfig, 'models'>): UsageProfile {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new HerdError('INVALID_ARG', `${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = usageProfileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HerdError(
      'INVALID_ARG',
      `${file}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'} (expected: per: day|month, models: { NAME: { input, cached_input, cache_write, output } })`,
    );
  }
  const per = parsed.data.per;
  const models = Object.entries(parsed.data.models).map(([name, counts]) => createProfileModel(name, counts, per, config, `${file}: models.${name}`));
  return { description: `${file} (${per === 'day' ? `per day × ${DAYS_PER_MONTH}` : 'per month'})`, models: mergeModels(models), skipped: [] };
}

/** One model's counts from flags (per day unless `per` is month). */
export function createFlagsProfile(model: string, counts: ProfileCounts, per: 'day' | 'month', config: Pick<GatewayConfig, 'models'>): UsageProfile {
  return {
    description: `--model ${model} (${per === 'day' ? `per day × ${DAYS_PER_MONTH}` : 'per month'})`,
    models: [createProfileModel(model, counts, per, config, '--model')],
    skipped: [],
  };
}

/** Ledger totals by model over `days` days, scaled exactly to a 30-day month. */
export function createLedgerProfile(rows: readonly UsageRow[], days: number, config: Pick<GatewayConfig, 'models'>): UsageProfile {
  const scale = Rational.fraction(BigInt(DAYS_PER_MONTH), BigInt(days));
  const models: ProfileModel[] = [];
  const skipped: string[] = [];
  for (const row of rows) {
    if (row.group === '-') continue;
    const model = canonicalModel(row.group, config);
    if (model === undefined) {
      skipped.push(row.group);
      continue;
    }
    models.push({
      model,
      monthly: {
        promptTokens: Rational.of(row.promptTokens).times(scale),
        cachedPromptTokens: Rational.of(row.cachedPromptTokens).times(scale),
        cacheWriteTokens: Rational.of(row.cacheWriteTokens).times(scale),
        completionTokens: Rational.of(row.completionTokens).times(scale),
      },
    });
  }
  return { description: `ledger: last ${days} day${days === 1 ? '' : 's'} × ${DAYS_PER_MONTH}/${days}`, models: mergeModels(models), skipped };
}

function createProfileModel(name: string, counts: ProfileCounts, per: 'day' | 'month', config: Pick<GatewayConfig, 'models'>, where: string): ProfileModel {
  const model = canonicalModel(name, config);
  if (model === undefined) throw new HerdError('INVALID_ARG', `${where}: unknown model '${name}' (known: ${Object.keys(config.models).join(', ') || 'none configured'})`);
  const factor = per === 'day' ? BigInt(DAYS_PER_MONTH) : 1n;
  const count = (value: number | string | undefined, field: string) => parseTokenCount(value ?? 0, `${where}.${field}`).times(factor);
  const monthly = {
    promptTokens: count(counts.input, 'input'),
    cachedPromptTokens: count(counts.cached_input, 'cached_input'),
    cacheWriteTokens: count(counts.cache_write, 'cache_write'),
    completionTokens: count(counts.output, 'output'),
  };
  if (monthly.cachedPromptTokens.plus(monthly.cacheWriteTokens).compare(monthly.promptTokens) > 0) {
    throw new HerdError('INVALID_ARG', `${where}: cached_input + cache_write are parts of input and cannot exceed it`);
  }
  return { model, monthly };
}

function canonicalModel(name: string, config: Pick<GatewayConfig, 'models'>): string | undefined {
  if (name in config.models) return name;
  return Object.entries(config.models).find(([, m]) => m.aliases.includes(name))?.[0];
}

/** An alias and its model listed separately add up. */
function mergeModels(models: ProfileModel[]): ProfileModel[] {
  const merged = new Map<string, ProfileModel>();
  for (const m of models) {
    const seen = merged.get(m.model);
    if (!seen) {
      merged.set(m.model, m);
      continue;
    }
    const a = seen.monthly;
    const b = m.monthly;
    seen.monthly = {
      promptTokens: a.promptTokens.plus(b.promptTokens),
      cachedPromptTokens: a.cachedPromptTokens.plus(b.cachedPromptTokens),
      cacheWriteTokens: a.cacheWriteTokens.plus(b.cacheWriteTokens),
      completionTokens: a.completionTokens.plus(b.completionTokens),
    };
  }
  return [...merged.values()];
}
