// billing.prices `match` entries: prices for the id sent upstream, by glob or exact id. An exact id wins
// over globs, globs go in list order, both win over the model's own prices at the same provider level,
// and dated entries still apply from their date on. Plus their config checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPriceCatalog } from '../../../src/gateway/billing/price-catalog.ts';
import { billingTestConfig, parseTestConfig, PROVIDERS_AND_MODELS } from './billing-fixtures.ts';

const at = (iso: string) => Date.parse(iso);
const T = at('2026-07-01T00:00:00Z');

test('a match entry prices the upstream id it matches: exact id first, then globs in order, then the model', () => {
  const catalog = createPriceCatalog(
    billingTestConfig(`
billing:
  prices:
    - { match: 'claude-*', effective: 2026-01-01, input: 3, output: 15, source: any claude }
    - { match: 'claude-opus-*', effective: 2026-01-01, input: 15, output: 75, source: never reached }
    - { match: claude-opus-4-8, effective: 2026-01-01, input: 5, output: 25, source: opus 4.8 }
    - { match: 'claude-haiku-*', provider: holysheep, effective: 2026-01-01, input: 0.5, output: 2.5, source: relay haiku }
`),
  );
  const source = (provider: string, upstream: string | undefined) => catalog.get(provider, 'claude-sonnet-4.5', T, upstream).source;
  assert.equal(source('anthropic', 'claude-opus-4-8'), 'opus 4.8', 'an exact id wins over every glob');
  assert.equal(source('anthropic', 'claude-opus-4-1'), 'any claude', 'globs: the first that matches wins');
  assert.equal(source('anthropic', 'gpt-4.1'), 'herd.yaml models.claude-sonnet-4.5.price', 'nothing matches: the model price');
  assert.equal(source('anthropic', undefined), 'herd.yaml models.claude-sonnet-4.5.price', 'no upstream id: the model price');
  assert.equal(source('holysheep', 'claude-haiku-4-5'), 'relay haiku', "a provider's own match entry");
  assert.equal(source('anthropic', 'claude-haiku-4-5'), 'any claude', "another provider's entry does not apply");
});

test("a provider's own model price still beats a generic match entry; dated match entries apply from their date", () => {
  const config = billingTestConfig(`
billing:
  prices:
    - { match: 'deepseek-*', effective: 2026-06-01, input: 0.5, output: 1, source: june }
    - { match: 'deepseek-*', effective: 2026-08-01, input: 0.6, output: 1.2, source: august }
`);
  config.models['deepseek-v3.2']!.deployments[0]!.price = { input: 0.2, output: 0.3 };
  const catalog = createPriceCatalog(config);
  const source = (provider: string, iso: string) => catalog.get(provider, 'deepseek-v3.2', at(iso), 'deepseek-chat').source;
  assert.equal(source('holysheep', '2026-07-01T00:00:00Z'), 'herd.yaml models.deepseek-v3.2.deployments[0].price');
  assert.equal(source('deepseek', '2026-05-01T00:00:00Z'), 'herd.yaml models.deepseek-v3.2.price', 'before its date');
  assert.equal(source('deepseek', '2026-07-01T00:00:00Z'), 'june');
  assert.equal(source('deepseek', '2026-08-01T00:00:00Z'), 'august');
  assert.ok(catalog.list().some((e) => e.match === true && e.source === 'august'));
});

test('match entries: model or match, never both; unknown providers and same-time duplicates are errors', () => {
  const messages = (yaml: string) => {
    const result = parseTestConfig(`${PROVIDERS_AND_MODELS}\n${yaml}`);
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };
  assert.deepEqual(messages("billing: { prices: [{ match: 'claude-*', effective: 2026-01-01, input: 1, output: 1 }] }"), []);
  assert.deepEqual(messages("billing: { prices: [{ match: 'claude-*', model: gpt4, effective: 2026-01-01, input: 1, output: 1 }] }"), [
    'billing.prices.0: needs either model (a model name or alias) or match (an upstream model id or glob), not both',
  ]);
  assert.deepEqual(messages('billing: { prices: [{ effective: 2026-01-01, input: 1, output: 1 }] }'), [
    'billing.prices.0: needs either model (a model name or alias) or match (an upstream model id or glob), not both',
  ]);
  assert.deepEqual(messages("billing: { prices: [{ match: 'a b', effective: 2026-01-01, input: 1, output: 1 }] }"), [
    'billing.prices.0.match: must be a model-id glob without spaces',
  ]);
  assert.deepEqual(
    messages(`billing:
  prices:
    - { match: 'claude-*', provider: nope, effective: 2026-01-01, input: 1, output: 1 }
    - { match: 'claude-*', effective: 2026-01-01, input: 1, output: 1 }
    - { match: 'claude-*', effective: 2026-01-01, input: 2, output: 2 }`),
    ["billing.prices.0.provider: unknown provider 'nope'", "billing.prices.2.effective: another entry for match 'claude-*' takes effect at the same time"],
  );
});
