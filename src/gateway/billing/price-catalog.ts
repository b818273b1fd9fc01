// The price catalog: dated (provider?, model) prices per million tokens with their currency and source,
// and dated prices for upstream model ids by glob (billing.prices[].match); a request is priced with the
// entry in force when it started, so a price change never reprices history.
import type { BillingConfig } from '../../config/billing-config-schema.ts';
import { parseEffectiveDate } from '../../config/billing-config-schema.ts';
import { isModelGlob, parseModelPattern } from '../../config/parse-model-pattern.ts';
import type { GatewayConfig, PriceConfig } from '../../config/gateway-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import type { CurrencyCode } from './money.ts';
import { Rational } from './rational.ts';

export interface PriceEntry {
  /** Canonical public model name; for a `match` entry, its glob. */
  model: string;
  /** billing.prices[].match: `model` is a glob over the id sent upstream, not a model name. */
  match?: boolean;
  /** Only this provider's deployment; undefined: any provider that has no entry of its own in force. */
  provider: string | undefined;
  currency: CurrencyCode;
  /** Per million tokens, exact. */
  input: Rational;
  output: Rational;
  /** Undefined: billed at `input` (on anthropic providers, find() fills Anthropic's multipliers in). */
  cachedInput: Rational | undefined;
  /** 5-minute cache writes. */
  cacheWrite: Rational | undefined;
  /** 1-hour cache writes; undefined: `cacheWrite`. */
  cacheWrite1h?: Rational | undefined;
  /** Epoch ms; -Infinity for herd.yaml's models.*.price and deployments[].price (in force since always). */
  effectiveFrom: number;
  source: string;
  /** The price's own batch rate (price.batch); undefined: the provider's batch_discount applies (batch-price.ts: findBatchPrice). */
  batch?: BatchRates | undefined;
}

/** A batch API's rate per million tokens; cache prices left out scale with input (batch-price.ts). */
export interface BatchRates {
  input: Rational;
  output: Rational;
  cachedInput?: Rational | undefined;
  cacheWrite?: Rational | undefined;
  cacheWrite1h?: Rational | undefined;
}

type Amount = Rational | number | string;

export type PriceInput = Omit<PriceEntry, 'input' | 'output' | 'cachedInput' | 'cacheWrite' | 'cacheWrite1h' | 'batch'> & {
  batch?: { input: Amount; output: Amount; cachedInput?: Amount | undefined; cacheWrite?: Amount | undefined; cacheWrite1h?: Amount | undefined } | undefined;
  input: Rational | number | string;
  output: Rational | number | string;
  cachedInput?: Rational | number | string | undefined;
  cacheWrite?: Rational | number | string | undefined;
  cacheWrite1h?: Rational | number | string | undefined;
};

/**
 * Anthropic lists one rule for every Claude model: cache reads at 0.1 × input, 5-minute writes at 1.25 ×,
 * 1-hour writes at 2 ×. A price that names no cache prices gets these on an anthropic provider; OpenAI's and
 * Gemini's cached-input discounts differ by model, so elsewhere a missing price stays at input.
 */
const ANTHROPIC_CACHE_MULTIPLIERS = { cachedInput: Rational.of('0.1'), cacheWrite: Rational.of('1.25'), cacheWrite1h: Rational.of(2) };

export interface PriceCatalogOptions {
  /** Providers of type anthropic: find() fills missing cache prices with Anthropic's multipliers for them. */
  anthropicProviders?: Iterable<string>;
}

/** The dated entries of one (glob, provider?) of billing.prices' `match` entries. */
interface MatchGroup {
  glob: string;
  provider: string | undefined;
  /** A glob without `*` or `?`: one exact id, which wins over every glob. */
  exact: boolean;
  test(id: string): boolean;
  /** Newest first. */
  entries: PriceEntry[];
}

export class PriceCatalog {
  /** model → provider ('' for generic) → entries, newest first. */
  private readonly entries = new Map<string, Map<string, PriceEntry[]>>();
  private readonly anthropicProviders: ReadonlySet<string>;

  /** An entry with Anthropic's cache multipliers filled in, made once per entry. */
  private readonly withAnthropicDefaults = new WeakMap<PriceEntry, PriceEntry>();
  /** `match` entries grouped by (glob, provider), in the order herd.yaml lists them first. */
  private readonly matches: MatchGroup[] = [];

  constructor(entries: readonly PriceInput[] = [], options: PriceCatalogOptions = {}) {
    this.anthropicProviders = new Set(options.anthropicProviders ?? []);

    for (const entry of entries) this.add(entry);
  }

  add(input: PriceInput): PriceEntry {
    const entry: PriceEntry = {
      ...input,
      input: Rational.of(input.input),
      output: Rational.of(input.output),
      cachedInput: input.cachedInput === undefined ? undefined : Rational.of(input.cachedInput),
      cacheWrite: input.cacheWrite === undefined ? undefined : Rational.of(input.cacheWrite),
      cacheWrite1h: input.cacheWrite1h === undefined ? undefined : Rational.of(input.cacheWrite1h),
      batch: parseBatchRates(input.batch),
    };
    if (entry.match === true) {
      this.addMatch(entry);
      return entry;
    }
    let byProvider = this.entries.get(entry.model);
    if (!byProvider) this.entries.set(entry.model, (byProvider = new Map()));
    const list = byProvider.get(entry.provider ?? '') ?? [];
    list.push(entry);
    list.sort((a, b) => b.effectiveFrom - a.effectiveFrom);
    byProvider.set(entry.provider ?? '', list);
    return entry;
  }

  private addMatch(entry: PriceEntry): void {
    let group = this.matches.find((g) => g.glob === entry.model && g.provider === entry.provider);
    if (group === undefined) {
      const pattern = parseModelPattern(entry.model);
      group = { glob: entry.model, provider: entry.provider, exact: !isModelGlob(entry.model), test: pattern.test, entries: [] };
      this.matches.push(group);
    }
    group.entries.push(entry);
    group.entries.sort((a, b) => b.effectiveFrom - a.effectiveFrom);
  }

  /**
   * The price of `model` on `provider` at `atMs`: the provider's own prices first, then the generic
   * ones. At each of the two levels a `match` entry for the id sent upstream (`upstreamModel`; an exact
   * id before globs, globs in herd.yaml order) comes before the model's own entries, and the newest
   * entry in force wins. A provider's own list (a relay's deployment price) thus keeps applying when
   * the maker's list changes, and a dated change for one provider affects only that provider.
   * On an anthropic provider, cache prices the entry leaves out are Anthropic's multipliers of its input.
   */
  find(provider: string | undefined, model: string, atMs: number, upstreamModel?: string): PriceEntry | undefined {
    const byProvider = this.entries.get(model);
    const inForce = (list: PriceEntry[] | undefined) => list?.find((e) => e.effectiveFrom <= atMs);
    let entry: PriceEntry | undefined;
    for (const level of provider === undefined ? [undefined] : [provider, undefined]) {
      const matched = upstreamModel === undefined ? undefined : this.findMatch(level, upstreamModel, atMs);
      entry = matched ?? inForce(byProvider?.get(level ?? ''));
      if (entry !== undefined) break;
    }
    if (entry === undefined || provider === undefined || !this.anthropicProviders.has(provider)) return entry;
    return this.fillAnthropicDefaults(entry);
  }

  private findMatch(provider: string | undefined, id: string, atMs: number): PriceEntry | undefined {
    for (const exact of [true, false]) {
      for (const group of this.matches) {
        if (group.exact !== exact || group.provider !== provider || !group.test(id)) continue;
        const entry = group.entries.find((e) => e.effectiveFrom <= atMs);
        if (entry !== undefined) return entry;
      }
    }
    return undefined;
  }

  private fillAnthropicDefaults(entry: PriceEntry): PriceEntry {
    if (entry.cachedInput !== undefined && entry.cacheWrite !== undefined && entry.cacheWrite1h !== undefined) return entry;
    let filled = this.withAnthropicDefaults.get(entry);
    if (filled === undefined) {
      filled = {
        ...entry,
        cachedInput: entry.cachedInput ?? entry.input.times(ANTHROPIC_CACHE_MULTIPLIERS.cachedInput),
        cacheWrite: entry.cacheWrite ?? entry.input.times(ANTHROPIC_CACHE_MULTIPLIERS.cacheWrite),
        cacheWrite1h: entry.cacheWrite1h ?? entry.input.times(ANTHROPIC_CACHE_MULTIPLIERS.cacheWrite1h),
      };
      this.withAnthropicDefaults.set(entry, filled);
    }
    return filled;
  }

  /** As find(), but a missing price is a configuration error (validation makes it unreachable). */
  get(provider: string | undefined, model: string, atMs: number, upstreamModel?: string): PriceEntry {
    const entry = this.find(provider, model, atMs, upstreamModel);
    if (!entry) throw new HerdError('INTERNAL', `no price for model '${model}'${provider ? ` on '${provider}'` : ''} at ${new Date(atMs).toISOString()}`);
    return entry;
  }

  /** Every entry, for `herd check` and tests: model, then provider, newest first. */
  list(): PriceEntry[] {
    return [...[...this.entries.values()].flatMap((byProvider) => [...byProvider.values()].flat()), ...this.matches.flatMap((g) => g.entries)];
  }
}

/**
 * The catalog herd.yaml describes: models.*.price (generic, USD), deployments[].price (that provider,
 * USD), both in force since always, plus billing.prices' dated entries (aliases resolved).
 */
export function createPriceCatalog(config: Pick<GatewayConfig, 'models'> & { providers?: GatewayConfig['providers']; billing?: Pick<BillingConfig, 'prices'> }): PriceCatalog {
  const anthropicProviders = Object.entries(config.providers ?? {})
    .filter(([, p]) => p.type === 'anthropic')
    .map(([name]) => name);
  const catalog = new PriceCatalog([], { anthropicProviders });
  const canonical = new Map<string, string>();
  for (const [name, model] of Object.entries(config.models)) {
    canonical.set(name, name);
    for (const alias of model.aliases) canonical.set(alias, name);
    if (model.price) catalog.add(fromConfigPrice(name, undefined, model.price, `herd.yaml models.${name}.price`));
    model.deployments.forEach((d, i) => {
      if (d.price) catalog.add(fromConfigPrice(name, d.provider, d.price, `herd.yaml models.${name}.deployments[${i}].price`));
      // A type: triton deployment with no price anywhere is free (gateway-catalog.ts routes it at zero too).
      else if (!model.price && config.providers?.[d.provider]?.type === 'triton') {
        catalog.add(fromConfigPrice(name, d.provider, { input: 0, output: 0 }, `herd.yaml models.${name}.deployments[${i}] (type: triton, no price: zero)`));
      }
    });
  }
  (config.billing?.prices ?? []).forEach((p, i) => {
    const model = p.match ?? (p.model === undefined ? undefined : canonical.get(p.model));
    const effectiveFrom = parseEffectiveDate(p.effective);
    if (model === undefined || effectiveFrom === undefined) throw new HerdError('INVALID_ARG', `billing.prices[${i}]: unknown model or bad date (validate the config first)`);
    catalog.add({
      model,
      ...(p.match !== undefined ? { match: true } : {}),
      provider: p.provider,
      currency: p.currency,
      input: p.input,
      output: p.output,
      cachedInput: p.cached_input,
      cacheWrite: p.cache_write,
      cacheWrite1h: p.cache_write_1h,
      effectiveFrom,
      source: p.source ?? `herd.yaml billing.prices[${i}]`,
    });
  });
  return catalog;
}

function fromConfigPrice(model: string, provider: string | undefined, price: PriceConfig, source: string): PriceInput {
  return {
    model,
    provider,
    currency: 'USD',
    input: price.input,
    output: price.output,
    cachedInput: price.cached_input,
    cacheWrite: price.cache_write,
    cacheWrite1h: price.cache_write_1h,
    effectiveFrom: Number.NEGATIVE_INFINITY,
    source,
    batch:
      price.batch === undefined
        ? undefined
        : {
            input: price.batch.input,
            output: price.batch.output,
            cachedInput: price.batch.cached_input,
            cacheWrite: price.batch.cache_write,
            cacheWrite1h: price.batch.cache_write_1h,
          },
  };
}

function parseBatchRates(batch: PriceInput['batch']): BatchRates | undefined {
  if (batch === undefined) return undefined;
  const optional = (v: Amount | undefined) => (v === undefined ? undefined : Rational.of(v));
  return {
    input: Rational.of(batch.input),
    output: Rational.of(batch.output),
    cachedInput: optional(batch.cachedInput),
    cacheWrite: optional(batch.cacheWrite),
    cacheWrite1h: optional(batch.cacheWrite1h),
  };
}
