// Hand-computed prices, to the fen and cent: seed 000's per-model examples done right, every token
// kind, fallbacks for missing cached/cache-write prices, prices listed in CNY, and USD settlement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatMicros, formatMoney } from '../../../src/gateway/billing/money.ts';
import { createPriceCatalog, PriceCatalog } from '../../../src/gateway/billing/price-catalog.ts';
import { createSettlementRates, priceTokens } from '../../../src/gateway/billing/price-usage.ts';
import { billingTestConfig } from './billing-fixtures.ts';

const config = billingTestConfig();
const catalog = createPriceCatalog(config);
const rates = createSettlementRates(config);
const NOW = Date.parse('2026-05-01T00:00:00Z');
const output = (n: number) => ({ promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: n });
const cost = (provider: string, model: string, tokens: Parameters<typeof priceTokens>[0]) => priceTokens(tokens, catalog.get(provider, model, NOW), provider, rates);

test("seed 000's per-model examples: 1M output tokens, official at ¥7.3/$ vs the relay at ¥1/$", () => {
  // model, official provider, list $/M output, official ¥ (exact), relay ¥, saving ¥ (shown to the fen)
  const cases: Array<[string, string, string, number, number, string]> = [
    ['gpt-4.1', 'openai', '8.00', 58_400_000, 8_000_000, '50.40'],
    ['claude-sonnet-4.5', 'anthropic', '15.00', 109_500_000, 15_000_000, '94.50'],
    ['gemini-2.5-flash', 'gemini', '2.50', 18_250_000, 2_500_000, '15.75'],
    // $0.42 × 7.3 = ¥3.066 exactly: the seed's ¥3.07 is this rounded to the fen; the saving is ¥2.646 → ¥2.65.
    ['deepseek-v3.2', 'deepseek', '0.42', 3_066_000, 420_000, '2.65'],
  ];
  for (const [model, official, list, officialMicros, relayMicros, saving] of cases) {
    const o = cost(official, model, output(1_000_000));
    const r = cost('holysheep', model, output(1_000_000));
    assert.equal(o.costMicros, officialMicros, `${model} via ${official}`);
    assert.equal(r.costMicros, relayMicros, `${model} via holysheep`);
    assert.equal(formatMicros(o.listUsdMicros), list);
    assert.equal(o.usdMicros, o.listUsdMicros, 'at the market rate an official provider costs its list price in true USD');
    assert.equal(formatMicros(o.costMicros - r.costMicros), saving);
    assert.equal(o.currency, 'CNY');
  }
  assert.equal(formatMoney(cost('deepseek', 'deepseek-v3.2', output(1_000_000)).costMicros, 'CNY'), '¥3.07');
  // What ¥8 at the relay really is in dollars: 8 / 7.3 = 1.0958904… → 1 095 890 µ$ (half-even), $1.10.
  const relay = cost('holysheep', 'gpt-4.1', output(1_000_000));
  assert.equal(relay.usdMicros, 1_095_890);
  assert.equal(relay.listUsdMicros, 8_000_000);
  assert.equal(formatMoney(relay.usdMicros, 'USD'), '$1.10');
});

test('every token kind at its own price: uncached, cached reads, cache writes, completion with reasoning', () => {
  // Claude: 10 000 prompt tokens of which 6 000 cached reads and 2 000 cache writes; 1 000 completion (200 reasoning, already inside).
  // 2 000 × $3 + 6 000 × $0.30 + 2 000 × $3.75 + 1 000 × $15 = 6 000 + 1 800 + 7 500 + 15 000 = 30 300 µ$.
  const tokens = { promptTokens: 10_000, cachedPromptTokens: 6_000, cacheWriteTokens: 2_000, completionTokens: 1_000 };
  const official = cost('anthropic', 'claude-sonnet-4.5', tokens);
  assert.equal(official.listUsdMicros, 30_300);
  assert.equal(official.costMicros, 221_190, '30 300 × 7.3');
  assert.equal(official.usdMicros, 30_300);
  const relay = cost('holysheep', 'claude-sonnet-4.5', tokens);
  assert.equal(relay.costMicros, 30_300);
  assert.equal(relay.usdMicros, 4_151, '30 300 / 7.3 = 4 150.68… → 4 151');
});

test('cached and cache-write prices fall back to input; rounding happens once, at the end', () => {
  // Gemini lists no cached price: 1 000 prompt tokens (400 cached) all at $0.30 = 300 µ$ × 7.3 = 2 190 µ¥.
  const gemini = cost('gemini', 'gemini-2.5-flash', { promptTokens: 1_000, cachedPromptTokens: 400, cacheWriteTokens: 0, completionTokens: 0 });
  assert.equal(gemini.listUsdMicros, 300);
  assert.equal(gemini.costMicros, 2_190);
  // One cached DeepSeek token: 0.028 µ$ × 7.3 = 0.2044 µ¥ → 0; 37 of them: 7.5628 → 8 (not 37 × 0 = 0).
  assert.equal(cost('deepseek', 'deepseek-v3.2', { promptTokens: 1, cachedPromptTokens: 1, cacheWriteTokens: 0, completionTokens: 0 }).costMicros, 0);
  assert.equal(cost('deepseek', 'deepseek-v3.2', { promptTokens: 37, cachedPromptTokens: 37, cacheWriteTokens: 0, completionTokens: 0 }).costMicros, 8);
  // Cached + written above the prompt total: the parts are trusted, the uncached part is zero, not negative.
  const odd = cost('openai', 'gpt-4.1', { promptTokens: 10, cachedPromptTokens: 12, cacheWriteTokens: 0, completionTokens: 0 });
  assert.equal(odd.listUsdMicros, 6, '12 × $0.50');
});

test('a price listed in CNY is charged as listed and converted to USD at the market rate', () => {
  const cny = new PriceCatalog([
    {
      model: 'deepseek-v3.2',
      provider: 'deepseek',
      currency: 'CNY',
      input: 2,
      output: 3,
      cachedInput: '0.2',
      cacheWrite: undefined,
      effectiveFrom: 0,
      source: 'DeepSeek CNY list',
    },
  ]);
  const c = priceTokens(
    { promptTokens: 1_000_000, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 1_000_000 },
    cny.get('deepseek', 'deepseek-v3.2', NOW),
    'deepseek',
    rates,
  );
  assert.equal(c.costMicros, 5_000_000, '¥2 + ¥3, no exchange rate applied');
  assert.equal(c.usdMicros, 684_932, '5 / 7.3 = 0.6849315… → 684 932 µ$');
  assert.equal(c.listUsdMicros, 684_932);
});

test('settling in USD: the provider rate applies to list dollars, true USD is the settlement itself', () => {
  const usd = billingTestConfig('billing: { currency: USD }');
  const usdRates = createSettlementRates({ ...usd, providers: { ...usd.providers, openai: { ...usd.providers.openai!, exchange_rate: 1 } } });
  const c = priceTokens(output(1_000_000), createPriceCatalog(usd).get('openai', 'gpt-4.1', NOW), 'openai', usdRates);
  assert.equal(c.currency, 'USD');
  assert.equal(c.costMicros, 8_000_000);
  assert.equal(c.usdMicros, 8_000_000);
  assert.equal(usdRates.marketPerUsd.toDecimalString(), '1');
});
