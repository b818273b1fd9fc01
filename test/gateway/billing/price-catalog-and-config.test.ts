// The price catalog's time travel (the entry in force when a request ran; provider entries before
// generic ones) and the billing section's schema and cross-checks, each at its exact config path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { billingConfigSchema, parseEffectiveDate } from '../../../src/config/billing-config-schema.ts';
import { createPriceCatalog } from '../../../src/gateway/billing/price-catalog.ts';
import { createSettlementRates, priceTokens } from '../../../src/gateway/billing/price-usage.ts';
import { billingTestConfig, parseTestConfig, PROVIDERS_AND_MODELS } from './billing-fixtures.ts';

const at = (iso: string) => Date.parse(iso);

test('a dated price change applies from its date on and never reprices earlier requests', () => {
  const config = billingTestConfig(`
billing:
  prices:
    - { model: gpt4, effective: 2026-06-01, input: 2.50, output: 10.00, source: 'maker raised prices' }
    - { model: gpt-4.1, provider: holysheep, effective: '2026-07-01T00:00:00+08:00', input: 1.8, output: 7.2, source: 'relay promo' }
`);
  const catalog = createPriceCatalog(config);
  const output = (provider: string, iso: string) => catalog.get(provider, 'gpt-4.1', at(iso)).output.toDecimalString();
  assert.equal(output('openai', '2026-05-31T23:59:59.999Z'), '8', 'herd.yaml price before the change');
  assert.equal(output('openai', '2026-06-01T00:00:00Z'), '10');
  assert.equal(output('holysheep', '2026-06-15T00:00:00Z'), '10', 'no relay entry in force yet: the generic change applies');
  assert.equal(output('holysheep', '2026-06-30T15:59:59Z'), '10');
  assert.equal(output('holysheep', '2026-06-30T16:00:00Z'), '7.2', 'midnight in UTC+8 is 16:00 UTC');
  assert.equal(output('openai', '2026-08-01T00:00:00Z'), '10', 'a provider entry affects only that provider');
  const entry = catalog.get('openai', 'gpt-4.1', at('2026-01-01T00:00:00Z'));
  assert.equal(entry.source, 'herd.yaml models.gpt-4.1.price');
  assert.equal(entry.effectiveFrom, Number.NEGATIVE_INFINITY);
  assert.equal(catalog.get('openai', 'gpt-4.1', at('2026-06-02T00:00:00Z')).source, 'maker raised prices');

  // The same tokens cost differently either side of the change: ¥58.40 then ¥73.00 for 1M output tokens at ¥7.3/$.
  const rates = createSettlementRates(config);
  const tokens = { promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 1_000_000 };
  assert.equal(priceTokens(tokens, catalog.get('openai', 'gpt-4.1', at('2026-05-01T00:00:00Z')), 'openai', rates).costMicros, 58_400_000);
  assert.equal(priceTokens(tokens, catalog.get('openai', 'gpt-4.1', at('2026-06-01T00:00:00Z')), 'openai', rates).costMicros, 73_000_000);
});

test("a deployment's own price is that provider's list and outlives generic changes", () => {
  const config = billingTestConfig(`
billing:
  prices: [{ model: deepseek-v3.2, effective: 2026-06-01, input: 0.30, output: 0.50 }]
`);
  config.models['deepseek-v3.2']!.deployments[0]!.price = { input: 0.2, output: 0.3 };
  const catalog = createPriceCatalog(config);
  assert.equal(catalog.get('holysheep', 'deepseek-v3.2', at('2026-07-01T00:00:00Z')).output.toDecimalString(), '0.3');
  assert.equal(catalog.get('holysheep', 'deepseek-v3.2', at('2026-07-01T00:00:00Z')).source, 'herd.yaml models.deepseek-v3.2.deployments[0].price');
  assert.equal(catalog.get('deepseek', 'deepseek-v3.2', at('2026-07-01T00:00:00Z')).output.toDecimalString(), '0.5');
  assert.equal(catalog.find('deepseek', 'no-such-model', 0), undefined);
  assert.throws(() => catalog.get('deepseek', 'no-such-model', 0), /no price for model 'no-such-model' on 'deepseek'/);
});

test('billing defaults: CNY, the market rate 7.3 for true USD, SQLite ledger next to herd.yaml, 1 s batches', () => {
  const billing = billingConfigSchema.parse({});
  assert.deepEqual(billing, {
    currency: 'CNY',
    fx: {},
    ledger: 'sqlite:./data/herd.db',
    flush_interval_ms: 1000,
    flush_max_rows: 500,
    stale_reservation_minutes: 60,
    default_max_output_tokens: 32_768,
    batch_discount: {},
    alerts: { thresholds: [50, 80, 100], max_attempts: 8, timeout_ms: 10_000, lease_ms: 30_000, poll_interval_ms: 1000 },
    prices: [],
  });
  const rates = createSettlementRates({ billing, providers: {} });
  assert.equal(rates.marketPerUsd.toDecimalString(), '7.3');
  assert.equal(createSettlementRates({ billing: billingConfigSchema.parse({ fx: { USD: '7.1234' } }), providers: {} }).marketPerUsd.toDecimalString(), '7.1234');
});

test('schema and cross-check errors name the offending path', () => {
  const messages = (yaml: string) => {
    const result = parseTestConfig(`${PROVIDERS_AND_MODELS}\n${yaml}`);
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };
  assert.deepEqual(messages('billing: { currency: CNY, fx: { USD: 7.3 } }'), []);
  assert.deepEqual(messages('billing: { currency: CNY, fx: { CNY: 2 } }'), ['billing.fx.CNY: CNY is the settlement currency: its rate is 1 by definition (leave it out)']);
  assert.match(messages('billing: { currency: EUR }')[0] ?? '', /^billing\.currency: /);
  assert.match(messages('billing: { fx: { USD: -1 } }')[0] ?? '', /^billing\.fx\.USD: must be more than zero/);
  assert.match(messages('billing: { ledger: "mysql://x" }')[0] ?? '', /^billing\.ledger: must be sqlite:PATH/);
  assert.deepEqual(messages('billing: { prices: [{ model: nope, effective: 2026-01-01, input: 1, output: 1 }] }'), [
    "billing.prices.0.model: unknown model 'nope' (known: gpt-4.1, claude-sonnet-4.5, gemini-2.5-flash, deepseek-v3.2)",
  ]);
  assert.deepEqual(messages('billing: { prices: [{ model: gpt4, provider: gemini, effective: 2026-01-01, input: 1, output: 1 }] }'), [
    "billing.prices.0.provider: model 'gpt-4.1' has no deployment on 'gemini' (it has: holysheep, openai)",
  ]);
  assert.match(messages('billing: { prices: [{ model: gpt4, effective: 2026-02-30, input: 1, output: 1 }] }')[0] ?? '', /^billing\.prices\.0\.effective: must be a date/);
  assert.match(
    messages("billing: { prices: [{ model: gpt4, effective: '2026-02-01T10:00:00', input: 1, output: 1 }] }")[0] ?? '',
    /effective: must be a date/,
    'a time without offset is ambiguous',
  );
  assert.deepEqual(
    messages(`billing:
  prices:
    - { model: gpt4, effective: 2026-02-01, input: 1, output: 1 }
    - { model: gpt-4.1, effective: '2026-02-01T00:00:00Z', input: 2, output: 2 }`),
    ["billing.prices.1.effective: another entry for 'gpt-4.1' takes effect at the same time"],
  );
  assert.deepEqual(messages('billing: { currency: USD, prices: [{ model: gpt4, effective: 2026-02-01, currency: CNY, input: 1, output: 1 }] }'), [
    'billing.prices.0.currency: prices in CNY need billing.fx.CNY (USD per CNY)',
  ]);
  assert.match(messages('billing: { prices: [{ model: gpt4, effective: 2026-02-01, input: "1,5", output: 1 }] }')[0] ?? '', /input/);
});

test('effective dates: a day is 00:00 UTC; times need an offset', () => {
  assert.equal(parseEffectiveDate('2026-05-01'), Date.UTC(2026, 4, 1));
  assert.equal(parseEffectiveDate('2026-05-01T08:00:00+08:00'), Date.UTC(2026, 4, 1));
  assert.equal(parseEffectiveDate('2026-13-01'), undefined);
  assert.equal(parseEffectiveDate('May 1'), undefined);
});
