// What a request's tokens cost, exactly: tokens × catalog price, in the settlement currency (provider
// rate) and true USD (market rate), each rounded once, half-even, to integer micro-units.
import type { BillingConfig } from '../../config/billing-config-schema.ts';
import { DEFAULT_CNY_PER_USD } from '../../config/billing-config-schema.ts';
import type { ProviderConfig } from '../../config/gateway-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import { roundToMicros, type CurrencyCode, type Micros } from './money.ts';
import type { PriceEntry } from './price-catalog.ts';
import { Rational } from './rational.ts';

/** Token counts by kind, counted the way Usage counts them: prompt includes cached reads and cache writes; completion includes reasoning. */
export interface TokenCounts<T = number> {
  promptTokens: T;
  cachedPromptTokens: T;
  cacheWriteTokens: T;
  completionTokens: T;
  /** Of cacheWriteTokens, those written for 1 hour (priced at cache_write_1h); absent: none. */
  cacheWrite1hTokens?: T | undefined;
}

export interface SettlementRates {
  currency: CurrencyCode;
  /** Market rate: settlement units per 1 USD (1 when settling in USD). True USD = settlement ÷ this. */
  marketPerUsd: Rational;
  /** Market rates for other listing currencies: settlement units per 1 unit. */
  market: ReadonlyMap<CurrencyCode, Rational>;
  /** Per provider: settlement units charged per 1 USD of list price (providers.*.exchange_rate). */
  providerRates: ReadonlyMap<string, Rational>;
}

export interface Cost {
  /** The settlement currency of costMicros. */
  currency: CurrencyCode;
  /** What the provider charges, in the settlement currency. */
  costMicros: Micros;
  /** costMicros at the market rate: what it really costs in dollars (a ¥1/$ relay shows its saving here). */
  usdMicros: Micros;
  /** The same tokens at the list price in USD, before any provider's rate. */
  listUsdMicros: Micros;
  /** The catalog entry used. */
  price: PriceEntry;
  /** The provider's rate applied (settlement units per list-price USD), for USD-listed prices. */
  exchangeRate: Rational;
  /** In the settlement currency: what the cached prompt tokens would have cost at input, less what they cost. */
  cacheReadSavedMicros: Micros;
}

export function createSettlementRates(config: {
  billing?: Pick<BillingConfig, 'currency' | 'fx'>;
  providers: Record<string, Pick<ProviderConfig, 'exchange_rate'>>;
}): SettlementRates {
  const currency = config.billing?.currency ?? 'CNY';
  const fx = config.billing?.fx ?? {};
  const market = new Map<CurrencyCode, Rational>([[currency, Rational.ONE]]);
  for (const code of ['CNY', 'USD'] as const) {
    const rate = fx[code];
    if (code !== currency && rate !== undefined) market.set(code, Rational.of(rate));
  }
  if (!market.has('USD')) market.set('USD', Rational.of(DEFAULT_CNY_PER_USD));
  const providerRates = new Map(Object.entries(config.providers).map(([name, p]) => [name, Rational.of(p.exchange_rate)] as const));
  return { currency, marketPerUsd: market.get('USD') as Rational, market, providerRates };
}

/**
 * Cost of `tokens` at `price` through `provider`. Uncached prompt tokens (prompt − cached − cache
 * writes) at input, cached reads at cached_input, 5-minute cache writes at cache_write, 1-hour ones at
 * cache_write_1h (falling back to cache_write, all falling back to input), completion (reasoning
 * included) at output. An upstream whose cached + written tokens
 * exceed its prompt total is trusted for the parts: the uncached part is then zero, never negative.
 *
 * Currency: a USD price × the provider's exchange_rate is the settlement cost; a price listed in the
 * settlement currency is charged as listed; one listed in a third currency converts at the market.
 */
export function priceTokens(tokens: TokenCounts<number | Rational>, price: PriceEntry, provider: string, rates: SettlementRates): Cost {
  const listed = listAmount(tokens, price);
  const exchangeRate = rates.providerRates.get(provider) ?? Rational.ONE;
  let toSettlement: Rational;
  if (price.currency === 'USD') toSettlement = exchangeRate;
  else {
    const market = rates.market.get(price.currency);
    if (market === undefined) throw new HerdError('INTERNAL', `no market rate for ${price.currency} (set billing.fx.${price.currency})`);
    toSettlement = market;
  }
  const settlement = listed.times(toSettlement);
  const listUsd = price.currency === 'USD' ? listed : settlement.dividedBy(rates.marketPerUsd);
  const cached = nonNegative(tokens.cachedPromptTokens);
  const readSaving = cached.compare(0) === 0 ? Rational.ZERO : cached.times(price.input.minus(price.cachedInput ?? price.input)).times(toSettlement);
  return {
    currency: rates.currency,
    costMicros: roundToMicros(settlement),
    usdMicros: roundToMicros(settlement.dividedBy(rates.marketPerUsd)),
    listUsdMicros: roundToMicros(listUsd),
    price,
    exchangeRate,
    cacheReadSavedMicros: roundToMicros(readSaving),
  };
}

/** Exact amount in micro-units of the listing currency: tokens × price per million = micros. */
function listAmount(tokens: TokenCounts<number | Rational>, price: PriceEntry): Rational {
  const cached = nonNegative(tokens.cachedPromptTokens);
  const written = nonNegative(tokens.cacheWriteTokens);
  // The 1-hour part is trusted only up to the writes it belongs to.
  const asked1h = nonNegative(tokens.cacheWrite1hTokens ?? 0);
  const written1h = asked1h.compare(written) > 0 ? written : asked1h;
  const written5m = written.minus(written1h);
  const uncached = nonNegative(Rational.of(tokens.promptTokens).minus(cached).minus(written));
  const write5m = price.cacheWrite ?? price.input;
  return uncached
    .times(price.input)
    .plus(cached.times(price.cachedInput ?? price.input))
    .plus(written5m.times(write5m))
    .plus(written1h.times(price.cacheWrite1h ?? write5m))
    .plus(nonNegative(tokens.completionTokens).times(price.output));
}

function nonNegative(value: number | Rational): Rational {
  const r = Rational.of(value);
  return r.compare(0) < 0 ? Rational.ZERO : r;
}
