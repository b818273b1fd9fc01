// Batch prices: a line of a client batch sent to an upstream batch API is billed at the price's own batch
// rate, else at its realtime price less the provider's batch_discount; its realtime list price is kept beside.
import type { ProviderConfig } from '../../config/gateway-config-schema.ts';
import type { PriceCatalog, PriceEntry } from './price-catalog.ts';
import { type Cost, type SettlementRates, type TokenCounts, priceTokens } from './price-usage.ts';
import { Rational } from './rational.ts';

/** Provider types whose batch APIs are documented at half the realtime price (OpenAI Batch, Anthropic Message Batches, Gemini batch mode). */
const HALF_PRICE_BATCH_TYPES: ReadonlySet<string> = new Set(['openai', 'anthropic', 'gemini']);
const DEFAULT_BATCH_DISCOUNT = Rational.of('0.5');

export interface BatchPrice {
  /** What a batch line is billed at. */
  batch: PriceEntry;
  /** The realtime entry it replaces: its list price is what the line would have cost realtime. */
  realtime: PriceEntry;
}

/** A batch line's cost, with the same tokens at the realtime list price in USD (the ledger's realtime_list_usd_micros). */
export interface BatchCost extends Cost {
  realtimeListUsdMicros: number;
}

/** billing.batch_discount by provider name, with 0.5 for every openai, anthropic and gemini provider it leaves out. */
export function createBatchDiscounts(providers: Record<string, Pick<ProviderConfig, 'type'>>, configured: Record<string, number> = {}): Map<string, Rational> {
  const discounts = new Map<string, Rational>();
  for (const [name, provider] of Object.entries(providers)) {
    const own = configured[name];
    if (own !== undefined) discounts.set(name, Rational.of(own));
    else if (HALF_PRICE_BATCH_TYPES.has(provider.type)) discounts.set(name, DEFAULT_BATCH_DISCOUNT);
  }
  return discounts;
}

/**
 * The price of a batch line sent to `provider`'s batch API (the catalog entry find() picks, made a batch
 * price), with the realtime entry it is instead of; undefined when there is no price at all, or no batch
 * price (no batch rate on the entry, no discount for the provider): such a line is billed at the realtime price.
 */
export function findBatchPrice(
  catalog: Pick<PriceCatalog, 'find'>,
  discounts: ReadonlyMap<string, Rational>,
  provider: string,
  model: string,
  atMs: number,
  upstreamModel?: string,
): BatchPrice | undefined {
  const realtime = catalog.find(provider, model, atMs, upstreamModel);
  if (realtime === undefined) return undefined;
  const batch = deriveBatchEntry(realtime, discounts.get(provider));
  return batch === undefined ? undefined : { batch, realtime };
}

/**
 * The batch entry of a realtime one: its own batch rate (cache prices it leaves out scaled by batch input ÷
 * realtime input, or the batch input when the realtime input is zero), else every price × (1 − discount);
 * undefined without either.
 */
export function deriveBatchEntry(realtime: PriceEntry, discount: Rational | undefined): PriceEntry | undefined {
  const own = realtime.batch;
  if (own !== undefined) {
    const scale = (price: Rational | undefined) =>
      price === undefined ? undefined : realtime.input.compare(0) === 0 ? own.input : price.times(own.input).dividedBy(realtime.input);
    return {
      ...realtime,
      input: own.input,
      output: own.output,
      cachedInput: own.cachedInput ?? scale(realtime.cachedInput),
      cacheWrite: own.cacheWrite ?? scale(realtime.cacheWrite),
      cacheWrite1h: own.cacheWrite1h ?? scale(realtime.cacheWrite1h),
      batch: undefined,
      source: `${realtime.source} batch`,
    };
  }
  if (discount === undefined || discount.compare(0) === 0) return undefined;
  const factor = Rational.ONE.minus(discount);
  const times = (price: Rational | undefined) => (price === undefined ? undefined : price.times(factor));
  return {
    ...realtime,
    input: realtime.input.times(factor),
    output: realtime.output.times(factor),
    cachedInput: times(realtime.cachedInput),
    cacheWrite: times(realtime.cacheWrite),
    cacheWrite1h: times(realtime.cacheWrite1h),
    batch: undefined,
    source: `${realtime.source} less the ${discount.toString()} batch discount`,
  };
}

/**
 * A batch line's tokens at its batch price (what the upstream bills: cost, true USD, list USD at the batch
 * rate) and at the realtime list price; without a batch price both are the realtime price (a line run
 * realtime at BATCH priority saves nothing).
 */
export function priceBatchTokens(tokens: TokenCounts<number | Rational>, price: BatchPrice | PriceEntry, provider: string, rates: SettlementRates): BatchCost {
  const pair = 'realtime' in price ? price : { batch: price, realtime: price };
  const cost = priceTokens(tokens, pair.batch, provider, rates);
  const realtimeListUsdMicros = pair.realtime === pair.batch ? cost.listUsdMicros : priceTokens(tokens, pair.realtime, provider, rates).listUsdMicros;
  return { ...cost, realtimeListUsdMicros };
}
