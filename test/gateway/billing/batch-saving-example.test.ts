// The worked example of docs/batches.md, priced by Herd's own code: a 10,000-line nightly gpt-4.1 job (1,000 tokens in,
// 250 out a line) realtime at the official API paid at ¥7.3 per dollar, realtime through a ¥1-per-dollar relay, and
// batched through that relay; each line rounded to micros as its ledger row is, then summed as the usage report does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { createBatchDiscounts, findBatchPrice, priceBatchTokens } from '../../../src/gateway/billing/batch-price.ts';
import { createPriceCatalog } from '../../../src/gateway/billing/price-catalog.ts';
import { createSettlementRates, priceTokens } from '../../../src/gateway/billing/price-usage.ts';

const HERD_YAML = `
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:ledger.db" }
providers:
  official: { type: openai, base_url: "https://api.openai.com/v1", exchange_rate: 7.3 }
  relay: { type: openai, base_url: "https://relay.example/v1", exchange_rate: 1 }
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: relay }, { provider: official }]
`;
const LINES = 10_000;
const LINE = { promptTokens: 1_000, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 250 };
const NOW = Date.parse('2026-12-01T00:00:00Z');

test('the nightly job: list price, the relay realtime, the relay batched; the rate and batch savings as herd usage shows them', () => {
  const config = parseHerdConfig(HERD_YAML, '/tmp/herd.yaml');
  const catalog = createPriceCatalog(config);
  const rates = createSettlementRates(config);
  const discounts = createBatchDiscounts(config.providers, config.billing.batch_discount);
  const job = (line: { costMicros: number; usdMicros: number; listUsdMicros: number; realtimeListUsdMicros?: number }) => ({
    cny: line.costMicros * LINES,
    usd: line.usdMicros * LINES,
    listUsd: line.listUsdMicros * LINES,
    realtimeListUsd: (line.realtimeListUsdMicros ?? line.listUsdMicros) * LINES,
  });
  const realtime = (provider: string) => job(priceTokens(LINE, catalog.get(provider, 'gpt-4.1', NOW), provider, rates));
  const batched = (provider: string) => {
    const price = findBatchPrice(catalog, discounts, provider, 'gpt-4.1', NOW);
    assert.ok(price, `${provider} has a batch price`);
    return job(priceBatchTokens(LINE, price, provider, rates));
  };

  // 1,000 × $2/M + 250 × $8/M = $0.004 a line: $40 for the night at list.
  assert.deepEqual(realtime('official'), { cny: 292_000_000, usd: 40_000_000, listUsd: 40_000_000, realtimeListUsd: 40_000_000 });
  assert.deepEqual(batched('official'), { cny: 146_000_000, usd: 20_000_000, listUsd: 20_000_000, realtimeListUsd: 40_000_000 });
  // ¥1 per list dollar: ¥40, which is $5.48 at ¥7.3 (548 micro-dollars a line, rounded per row).
  assert.deepEqual(realtime('relay'), { cny: 40_000_000, usd: 5_480_000, listUsd: 40_000_000, realtimeListUsd: 40_000_000 });
  const night = batched('relay');
  assert.deepEqual(night, { cny: 20_000_000, usd: 2_740_000, listUsd: 20_000_000, realtimeListUsd: 40_000_000 });
  // herd usage: rate saved = list USD − true USD; batch saved = realtime list − list.
  assert.equal(night.listUsd - night.usd, 17_260_000);
  assert.equal(night.realtimeListUsd - night.listUsd, 20_000_000);
  assert.equal(night.realtimeListUsd - night.usd, 37_260_000, 'against the list price realtime: $37.26 of $40 saved');
});
