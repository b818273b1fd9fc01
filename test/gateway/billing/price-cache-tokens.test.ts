// Prompt-cache pricing by hand: reads, 5-minute and 1-hour writes at explicit prices; Anthropic's
// multipliers when an anthropic provider's price names none (and input elsewhere); the read saving;
// and Anthropic usage's 1-hour writes read from cache_creation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPriceCatalog } from '../../../src/gateway/billing/price-catalog.ts';
import { createSettlementRates, priceTokens, type TokenCounts } from '../../../src/gateway/billing/price-usage.ts';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { convertAnthropicUsage } from '../../../src/gateway/wire/anthropic-messages/convert-anthropic-usage.ts';

const config = parseHerdConfig(
  `
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "off" }
providers:
  anthropic: { type: anthropic, exchange_rate: 7.3 }
  relay: { type: anthropic, base_url: "https://relay.example/v1", api_key_env: RELAY_KEY, exchange_rate: 1.0 }
  openai: { type: openai, exchange_rate: 1.0 }
models:
  claude-sonnet-4.5:
    price: { input: 3.00, output: 15.00 }
    deployments:
      - { provider: anthropic }
      - { provider: relay, price: { input: 3.00, output: 15.00, cached_input: 0.60, cache_write: 3.00, cache_write_1h: 4.50 } }
      - { provider: openai }
`,
  'herd.yaml',
  {},
);
const catalog = createPriceCatalog(config);
const rates = createSettlementRates(config);
const AT = Date.parse('2026-05-01T00:00:00Z');
// 1M prompt tokens: 600k read from the cache, 300k written (100k of them for an hour), 100k uncached; no output.
const tokens: TokenCounts = { promptTokens: 1_000_000, cachedPromptTokens: 600_000, cacheWriteTokens: 300_000, cacheWrite1hTokens: 100_000, completionTokens: 0 };
const price = (provider: string, t: TokenCounts = tokens) => priceTokens(t, catalog.get(provider, 'claude-sonnet-4.5', AT), provider, rates);

describe('prompt-cache pricing', () => {
  it("anthropic provider, no cache prices: reads 0.1×, 5m writes 1.25×, 1h writes 2× input; the reads' saving", () => {
    // $: 100k × 3 + 600k × 0.30 + 200k × 3.75 + 100k × 6.00 = 0.30 + 0.18 + 0.75 + 0.60 = $1.83; × ¥7.3 = ¥13.359.
    const cost = price('anthropic');
    assert.equal(cost.listUsdMicros, 1_830_000);
    assert.equal(cost.costMicros, 13_359_000);
    // 600k × ($3.00 − $0.30) = $1.62 → ¥11.826.
    assert.equal(cost.cacheReadSavedMicros, 11_826_000);
    assert.equal(cost.price.source, 'herd.yaml models.claude-sonnet-4.5.price', 'the entry used is still the one herd.yaml names');
  });

  it("explicit cache prices win: the relay's own list", () => {
    // 100k × 3 + 600k × 0.60 + 200k × 3.00 + 100k × 4.50 = 0.30 + 0.36 + 0.60 + 0.45 = $1.71 at ¥1/$.
    const cost = price('relay');
    assert.equal(cost.costMicros, 1_710_000);
    assert.equal(cost.cacheReadSavedMicros, 1_440_000);
  });

  it('another provider type: missing cache prices bill at input, and reads save nothing', () => {
    const cost = price('openai');
    assert.equal(cost.costMicros, 3_000_000);
    assert.equal(cost.cacheReadSavedMicros, 0);
  });

  it('without a 1-hour count every write is a 5-minute write; a 1-hour count above the writes is capped at them', () => {
    const noHour = price('anthropic', { ...tokens, cacheWrite1hTokens: undefined });
    // 100k × 3 + 600k × 0.30 + 300k × 3.75 = $1.605.
    assert.equal(noHour.listUsdMicros, 1_605_000);
    const tooMany = price('anthropic', { ...tokens, cacheWrite1hTokens: 900_000 });
    // 100k × 3 + 600k × 0.30 + 300k × 6.00 = $2.28.
    assert.equal(tooMany.listUsdMicros, 2_280_000);
  });

  it("Anthropic usage: cache_creation's 1-hour part becomes cacheWrite1hTokens", () => {
    const usage = convertAnthropicUsage({
      input_tokens: 50,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 300,
      cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 },
      output_tokens: 7,
    });
    assert.deepEqual([usage.promptTokens, usage.cachedPromptTokens, usage.cacheWriteTokens, usage.cacheWrite1hTokens], [1350, 1000, 300, 100]);
    assert.equal(convertAnthropicUsage({ input_tokens: 5, cache_creation_input_tokens: 10 }).cacheWrite1hTokens, undefined);
  });
});
