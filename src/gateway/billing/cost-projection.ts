// `herd cost`'s arithmetic and output: a month of a usage profile priced through every deployment of each
// model, the cheapest and dearest route and the saving between them — exact micros, shown to the cent.
import { MODEL_PLACEHOLDER, type GatewayConfig } from '../../config/gateway-config-schema.ts';
import { findBatchPrice } from './batch-price.ts';
import { formatCount, formatReportTable } from './format-report-table.ts';
import { addMicros, formatMicros, formatMoney, type CurrencyCode, type Micros } from './money.ts';
import type { PriceCatalog, PriceEntry } from './price-catalog.ts';
import { priceTokens, type Cost, type SettlementRates, type TokenCounts } from './price-usage.ts';
import { Rational } from './rational.ts';
import { DAYS_PER_MONTH, type UsageProfile } from './usage-profile.ts';

export interface RouteCost {
  provider: string;
  upstreamModel: string;
  cost: Cost;
  /** How much more than the model's cheapest route (0 for the cheapest). */
  overCheapestMicros: Micros;
  /** The same month sent as batches at this route's batch price; undefined: it has none. */
  batch: Cost | undefined;
}

export interface ModelProjection {
  model: string;
  monthly: TokenCounts<Rational>;
  /** Cheapest first. */
  routes: RouteCost[];
  savingMicros: Micros;
  /** saving ÷ dearest, undefined when the dearest costs nothing. */
  savingRatio: Rational | undefined;
}

export interface CostProjection {
  currency: CurrencyCode;
  marketPerUsd: Rational;
  atMs: number;
  description: string;
  skipped: string[];
  models: ModelProjection[];
  totals: {
    cheapestMicros: Micros;
    dearestMicros: Micros;
    savingMicros: Micros;
    savingRatio: Rational | undefined;
    /** Each model at its cheapest route, batch prices included, and what that saves against cheapestMicros (0 without batch prices). */
    batchCheapestMicros: Micros;
    batchSavingMicros: Micros;
  };
  /** Providers that serve every model of the profile: the month if everything went through them. */
  providerTotals: Array<{ provider: string; costMicros: Micros; usdMicros: Micros }>;
}

export function projectCosts(input: {
  profile: UsageProfile;
  config: Pick<GatewayConfig, 'models'>;
  catalog: PriceCatalog;
  rates: SettlementRates;
  atMs: number;
  /** billing.batch_discount with its defaults (createBatchDiscounts); absent: only prices' own batch rates. */
  batchDiscounts?: ReadonlyMap<string, Rational>;
}): CostProjection {
  const { profile, config, catalog, rates, atMs } = input;
  const discounts = input.batchDiscounts ?? new Map<string, Rational>();
  const models = profile.models.map((p): ModelProjection => {
    const priced = (config.models[p.model]?.deployments ?? [])
      .map((d) => {
        const upstreamModel = (d.upstream_model ?? p.model).replaceAll(MODEL_PLACEHOLDER, p.model);
        const batch = findBatchPrice(catalog, discounts, d.provider, p.model, atMs, upstreamModel);
        return {
          provider: d.provider,
          upstreamModel,
          cost: priceTokens(p.monthly, catalog.get(d.provider, p.model, atMs, upstreamModel), d.provider, rates),
          batch: batch === undefined ? undefined : priceTokens(p.monthly, batch.batch, d.provider, rates),
        };
      })
      .sort((a, b) => a.cost.costMicros - b.cost.costMicros);
    const cheapest = priced[0]?.cost.costMicros ?? 0;
    const dearest = priced.at(-1)?.cost.costMicros ?? 0;
    return {
      model: p.model,
      monthly: p.monthly,
      routes: priced.map((r) => ({ ...r, overCheapestMicros: r.cost.costMicros - cheapest })),
      savingMicros: dearest - cheapest,
      savingRatio: ratio(dearest - cheapest, dearest),
    };
  });
  const cheapestMicros = models.reduce((sum, m) => addMicros(sum, m.routes[0]?.cost.costMicros ?? 0), 0);
  const dearestMicros = models.reduce((sum, m) => addMicros(sum, m.routes.at(-1)?.cost.costMicros ?? 0), 0);
  const asBatch = (r: RouteCost) => (r.batch ?? r.cost).costMicros;
  const batchCheapestMicros = models.reduce((sum, m) => addMicros(sum, m.routes.length === 0 ? 0 : Math.min(...m.routes.map(asBatch))), 0);
  return {
    currency: rates.currency,
    marketPerUsd: rates.marketPerUsd,
    atMs,
    description: profile.description,
    skipped: profile.skipped,
    models,
    totals: {
      cheapestMicros,
      dearestMicros,
      savingMicros: dearestMicros - cheapestMicros,
      savingRatio: ratio(dearestMicros - cheapestMicros, dearestMicros),
      batchCheapestMicros,
      batchSavingMicros: cheapestMicros - batchCheapestMicros,
    },
    providerTotals: sumByProvider(models),
  };
}

function sumByProvider(models: readonly ModelProjection[]): CostProjection['providerTotals'] {
  const totals = new Map<string, { provider: string; costMicros: Micros; usdMicros: Micros; models: Set<string> }>();
  for (const m of models) {
    // A provider with two deployments of a model counts its cheaper one.
    for (const r of m.routes) {
      const t = totals.get(r.provider) ?? { provider: r.provider, costMicros: 0, usdMicros: 0, models: new Set<string>() };
      if (t.models.has(m.model)) continue;
      t.models.add(m.model);
      t.costMicros = addMicros(t.costMicros, r.cost.costMicros);
      t.usdMicros = addMicros(t.usdMicros, r.cost.usdMicros);
      totals.set(r.provider, t);
    }
  }
  return [...totals.values()]
    .filter((t) => t.models.size === models.length && models.length > 0)
    .sort((a, b) => a.costMicros - b.costMicros)
    .map(({ provider, costMicros, usdMicros }) => ({ provider, costMicros, usdMicros }));
}

function ratio(part: Micros, whole: Micros): Rational | undefined {
  return whole === 0 ? undefined : Rational.fraction(BigInt(part), BigInt(whole));
}

/** A ratio as a percentage with two decimals, half-even: 50.4/58.4 → "86.30". */
export function formatPercent(r: Rational | undefined): string | null {
  if (r === undefined) return null;
  const hundredths = r.times(10_000).roundHalfEven();
  const negative = hundredths < 0n;
  const digits = (negative ? -hundredths : hundredths).toString().padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

function priceJson(p: PriceEntry) {
  const d = (r: Rational | undefined) => (r === undefined ? null : r.toDecimalString());
  return {
    currency: p.currency,
    input: d(p.input),
    cached_input: d(p.cachedInput),
    cache_write: d(p.cacheWrite),
    output: d(p.output),
    source: p.source,
    effective: Number.isFinite(p.effectiveFrom) ? new Date(p.effectiveFrom).toISOString() : null,
  };
}

/** Exact micros for programs, cent strings for people; token counts as exact decimal strings. */
export function convertCostProjectionToJson(p: CostProjection) {
  const money = (prefix: string, micros: Micros) => ({ [`${prefix}_micros`]: micros, [prefix]: formatMicros(micros) });
  const tokens = (t: TokenCounts<Rational>) => ({
    input: t.promptTokens.toDecimalString(2),
    cached_input: t.cachedPromptTokens.toDecimalString(2),
    cache_write: t.cacheWriteTokens.toDecimalString(2),
    output: t.completionTokens.toDecimalString(2),
  });
  return {
    object: 'cost.projection',
    currency: p.currency,
    market_rate_per_usd: p.marketPerUsd.toDecimalString(),
    days: DAYS_PER_MONTH,
    prices_at: new Date(p.atMs).toISOString(),
    usage: p.description,
    skipped_models: p.skipped,
    models: p.models.map((m) => ({
      model: m.model,
      tokens_per_month: tokens(m.monthly),
      routes: m.routes.map((r) => ({
        provider: r.provider,
        upstream_model: r.upstreamModel,
        exchange_rate: r.cost.exchangeRate.toDecimalString(),
        price: priceJson(r.cost.price),
        ...money('cost', r.cost.costMicros),
        ...money('usd', r.cost.usdMicros),
        ...money('list_usd', r.cost.listUsdMicros),
        ...money('over_cheapest', r.overCheapestMicros),
        ...(r.batch === undefined ? { batch_cost_micros: null, batch_cost: null } : { ...money('batch_cost', r.batch.costMicros), batch_price: priceJson(r.batch.price) }),
      })),
      cheapest: m.routes[0]?.provider ?? null,
      dearest: m.routes.at(-1)?.provider ?? null,
      ...money('saving', m.savingMicros),
      saving_percent: formatPercent(m.savingRatio),
    })),
    totals: {
      ...money('cheapest', p.totals.cheapestMicros),
      ...money('dearest', p.totals.dearestMicros),
      ...money('saving', p.totals.savingMicros),
      saving_percent: formatPercent(p.totals.savingRatio),
      ...money('batch_cheapest', p.totals.batchCheapestMicros),
      ...money('batch_saving', p.totals.batchSavingMicros),
    },
    provider_totals: p.providerTotals.map((t) => ({ provider: t.provider, ...money('cost', t.costMicros), ...money('usd', t.usdMicros) })),
  };
}

export function formatCostProjection(p: CostProjection): string {
  const c = p.currency;
  const title = `Monthly cost (${DAYS_PER_MONTH} days) in ${c}; true USD at the market rate ${formatRate(p)}; usage: ${p.description}`;
  if (p.models.length === 0) return `${title}\nNo models in the usage profile.\n`;
  const rows = p.models.flatMap((m) =>
    m.routes.map((r, i) => [
      i === 0 ? m.model : '',
      i === 0 ? formatCount(Number(m.monthly.promptTokens.roundHalfEven())) : '',
      i === 0 ? formatCount(Number(m.monthly.completionTokens.roundHalfEven())) : '',
      r.provider,
      `${r.cost.price.currency === 'USD' ? `×${r.cost.exchangeRate.toDecimalString()}` : r.cost.price.currency}`,
      formatMoney(r.cost.costMicros, c),
      formatMoney(r.cost.usdMicros, 'USD'),
      r.batch === undefined ? '-' : formatMoney(r.batch.costMicros, c),
      m.routes.length === 1 ? '' : i === 0 ? 'cheapest' : `+${formatMoney(r.overCheapestMicros, c)}`,
    ]),
  );
  const table = formatReportTable({
    header: ['model', 'input tok/mo', 'output tok/mo', 'via', 'rate', `cost/month`, 'true USD', 'as batch', 'vs cheapest'],
    align: ['left', 'right', 'right', 'left', 'left', 'right', 'right', 'right', 'left'],
    rows,
  });
  const t = p.totals;
  const lines = [title, '', table, ''];
  lines.push(
    `Each model where it is cheapest: ${formatMoney(t.cheapestMicros, c)}/month; where it is dearest: ${formatMoney(t.dearestMicros, c)}/month; ` +
      `saving ${formatMoney(t.savingMicros, c)}${t.savingRatio ? ` (${formatPercent(t.savingRatio)}%)` : ''}.`,
  );
  if (t.batchSavingMicros > 0) {
    lines.push(
      `Sent as batches where a route has a batch price (up to 24 h), each model where it is then cheapest: ${formatMoney(t.batchCheapestMicros, c)}/month, ` +
        `saving ${formatMoney(t.batchSavingMicros, c)} more.`,
    );
  }
  if (p.providerTotals.length > 1) {
    lines.push(`Everything through one provider: ${p.providerTotals.map((x) => `${x.provider} ${formatMoney(x.costMicros, c)}`).join(', ')}.`);
  }
  if (p.skipped.length > 0) lines.push(`Not in herd.yaml any more, left out: ${p.skipped.join(', ')}.`);
  return `${lines.join('\n')}\n`;
}

function formatRate(p: CostProjection): string {
  return p.currency === 'USD'
    ? '$1 = $1'
    : `${formatMoney(Number(p.marketPerUsd.times(1_000_000).roundHalfEven()), p.currency, 4)
        .replace(/0+$/, '')
        .replace(/\.$/, '')}/$`;
}
