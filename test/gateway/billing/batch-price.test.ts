// Batch prices by hand: the default half price of openai/anthropic/gemini providers, a provider's own
// billing.batch_discount (0: none), a deployment's own price.batch with its cache prices scaled, and the
// realtime list price kept beside the batch cost for the saving.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBatchDiscounts, findBatchPrice, priceBatchTokens } from '../../../src/gateway/billing/batch-price.ts';
import { createPriceCatalog } from '../../../src/gateway/billing/price-catalog.ts';
import { createSettlementRates } from '../../../src/gateway/billing/price-usage.ts';
import { billingTestConfig, parseTestConfig, PROVIDERS_AND_MODELS } from './billing-fixtures.ts';

const NOW = Date.parse('2026-05-01T00:00:00Z');
const config = billingTestConfig('billing: { batch_discount: { holysheep: 0, deepseek: 0.25 } }');
// The anthropic deployment of claude with a price of its own carrying a batch rate.
config.models['claude-sonnet-4.5']?.deployments.splice(1, 1, {
  ...(config.models['claude-sonnet-4.5']?.deployments[1] as NonNullable<(typeof config.models)[string]>['deployments'][number]),
  price: { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15, batch: { input: 1.5, output: 7.5 } },
});
const catalog = createPriceCatalog(config);
const rates = createSettlementRates(config);
const discounts = createBatchDiscounts(config.providers, config.billing.batch_discount);

test('the default: half price on openai, anthropic and gemini providers; none on others; a configured discount wins (0: none)', () => {
  assert.deepEqual(
    [...discounts].map(([name, d]) => [name, d.toString()]),
    [
      ['holysheep', '0'],
      ['openai', '0.5'],
      ['anthropic', '0.5'],
      ['gemini', '0.5'],
      ['deepseek', '0.25'],
    ],
    'holysheep is of type openai, but its batch_discount 0 wins: no batch price',
  );
  assert.equal(createBatchDiscounts({ local: { type: 'triton' } }).size, 0, 'a local model has no batch API discount');
  assert.equal(findBatchPrice(catalog, discounts, 'holysheep', 'gpt-4.1', NOW), undefined);
});

test('a line at half price on openai: cost and true USD at the batch rate, the realtime list price beside it', () => {
  const price = findBatchPrice(catalog, discounts, 'openai', 'gpt-4.1', NOW);
  assert.ok(price);
  // 800k uncached × $2 + 200k cached × $0.50 + 1M output × $8 = $9.70 realtime; half: $4.85; × ¥7.3 = ¥35.405.
  const cost = priceBatchTokens({ promptTokens: 1_000_000, cachedPromptTokens: 200_000, cacheWriteTokens: 0, completionTokens: 1_000_000 }, price, 'openai', rates);
  assert.deepEqual([cost.costMicros, cost.usdMicros, cost.listUsdMicros, cost.realtimeListUsdMicros], [35_405_000, 4_850_000, 4_850_000, 9_700_000]);
  assert.match(cost.price.source, /less the 0\.5 batch discount/);
  // The cached-read saving is the batch rate's: 200k × ($1 − $0.25) × 7.3.
  assert.equal(cost.cacheReadSavedMicros, 1_095_000);
});

test("a deployment's own batch rate: cache prices it leaves out scale with input", () => {
  const price = findBatchPrice(catalog, discounts, 'anthropic', 'claude-sonnet-4.5', NOW);
  assert.ok(price);
  assert.deepEqual([price.batch.cachedInput?.toString(), price.batch.cacheWrite?.toString()], ['0.15', '1.875']);
  // Batch: 500k × 1.5 + 400k × 0.15 + 100k × 1.875 + 100k × 7.5 = $1.7475; realtime: 1.5 + 0.12 + 0.375 + 1.5 = $3.495.
  const cost = priceBatchTokens({ promptTokens: 1_000_000, cachedPromptTokens: 400_000, cacheWriteTokens: 100_000, completionTokens: 100_000 }, price, 'anthropic', rates);
  assert.deepEqual([cost.listUsdMicros, cost.realtimeListUsdMicros], [1_747_500, 3_495_000]);
});

test('a line without a batch price (run realtime, or a provider without a discount) saves nothing', () => {
  const entry = catalog.get('holysheep', 'gpt-4.1', NOW);
  const cost = priceBatchTokens({ promptTokens: 1_000_000, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0 }, entry, 'holysheep', rates);
  assert.deepEqual([cost.costMicros, cost.listUsdMicros, cost.realtimeListUsdMicros], [2_000_000, 2_000_000, 2_000_000]);
  // deepseek's 25% off its listed $0.28 / $0.42.
  const deepseek = findBatchPrice(catalog, discounts, 'deepseek', 'deepseek-v3.2', NOW);
  assert.deepEqual([deepseek?.batch.input.toString(), deepseek?.batch.output.toString()], ['0.21', '0.315']);
});

test('config: batch_discount names known providers, between 0 and 1; price.batch needs input and output', () => {
  const bad = parseTestConfig(`${PROVIDERS_AND_MODELS}\nbilling: { batch_discount: { nosuch: 0.5, openai: 1.5 } }`);
  assert.equal(bad.success, false);
  const messages = bad.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n') ?? '';
  assert.match(messages, /billing\.batch_discount\.openai/);
  const unknown = parseTestConfig(`${PROVIDERS_AND_MODELS}\nbilling: { batch_discount: { nosuch: 0.5 } }`);
  assert.match(unknown.error?.issues.map((i) => i.message).join('\n') ?? '', /unknown provider 'nosuch'/);
  const noOutput = parseTestConfig(PROVIDERS_AND_MODELS.replace('price: { input: 0.30, output: 2.50 }', 'price: { input: 0.30, output: 2.50, batch: { input: 0.15 } }'));
  assert.equal(noOutput.success, false);
});
