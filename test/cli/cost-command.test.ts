// `herd cost`, checked against hand-computed cases to the fen: the 1M-token example, seed
// 000's monthly example done right (and what its own numbers should have been), cached input,
// a month projected exactly from 7 days of ledger, and the --json shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerCostCommand, runCost, type CostFlags } from '../../src/cli/cost-command.ts';
import type { BillingCliIo } from '../../src/cli/usage-command.ts';
import type { HerdError } from '../../src/core/errors.ts';
import { SqliteLedger } from '../../src/gateway/billing/sqlite-ledger.ts';
import { PROVIDERS_AND_MODELS } from '../gateway/billing/billing-fixtures.ts';
import { sampleRequest } from '../gateway/billing/ledger-contract.ts';

const NOW = Date.parse('2026-05-21T12:00:00Z');

function captureIo(): BillingCliIo & { text(): string } {
  const out: string[] = [];
  return {
    env: {},
    now: () => NOW,
    stdout: (t) => {
      out.push(t);
    },
    stderr: (t) => {
      out.push(t);
    },
    text: () => out.join(''),
  };
}

function workspace(): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'herd-cost-'));
  const config = join(dir, 'herd.yaml');
  writeFileSync(config, PROVIDERS_AND_MODELS);
  return { dir, config };
}

async function costJson(flags: CostFlags) {
  const io = captureIo();
  await runCost({ ...flags, json: true }, io);
  return JSON.parse(io.text());
}

test('1M output tokens a month of gpt-4.1 at $8/M: official at ¥7.3 → ¥58.40, relay at ¥1 → ¥8.00, saving ¥50.40', async () => {
  const { config } = workspace();
  const json = await costJson({ config, model: 'gpt4', output: '1M', per: 'month' });
  const [model] = json.models;
  assert.equal(model.model, 'gpt-4.1');
  assert.deepEqual(
    model.routes.map((r: Record<string, unknown>) => [r.provider, r.cost, r.cost_micros, r.usd, r.over_cheapest]),
    [
      ['holysheep', '8.00', 8_000_000, '1.10', '0.00'],
      ['openai', '58.40', 58_400_000, '8.00', '50.40'],
    ],
  );
  assert.deepEqual([model.cheapest, model.dearest, model.saving, model.saving_micros, model.saving_percent], ['holysheep', 'openai', '50.40', 50_400_000, '86.30']);
  assert.equal(json.currency, 'CNY');
  assert.equal(json.market_rate_per_usd, '7.3');
  assert.deepEqual(model.tokens_per_month, { input: '0', cached_input: '0', cache_write: '0', output: '1000000' });
  assert.deepEqual(model.routes[1].price, {
    currency: 'USD',
    input: '2',
    cached_input: '0.5',
    cache_write: null,
    output: '8',
    source: 'herd.yaml models.gpt-4.1.price',
    effective: null,
  });

  const io = captureIo();
  await runCost({ config, model: 'gpt-4.1', output: '1000000', per: 'month' }, io);
  const text = io.text();
  assert.match(text, /^Monthly cost \(30 days\) in CNY; true USD at the market rate ¥7\.3\/\$; usage: --model gpt-4\.1 \(per month\)\n/);
  // As batch: both are of type openai, half price by default (billing.batch_discount).
  assert.match(text, /gpt-4\.1 +0 +1,000,000 +holysheep +×1 +¥8\.00 +\$1\.10 +¥4\.00 +cheapest/);
  assert.match(text, /\n +openai +×7\.3 +¥58\.40 +\$8\.00 +¥29\.20 +\+¥50\.40/);
  assert.match(text, /saving ¥50\.40 \(86\.30%\)\./);
  assert.match(text, /Sent as batches where a route has a batch price \(up to 24 h\), each model where it is then cheapest: ¥4\.00\/month, saving ¥4\.00 more\./);
});

test("seed 000's monthly example, computed right: 10万/5万/50万 output tokens a day of GPT-4.1, Claude, DeepSeek", async () => {
  const { dir, config } = workspace();
  // 10万 = 100 000 tokens. A day, officially: 0.1M × $8 × 7.3 + 0.05M × $15 × 7.3 + 0.5M × $0.42 × 7.3 = ¥5.84 + ¥5.475 + ¥1.533 = ¥12.848;
  // a month: ¥385.44. Through the ¥1/$ relay: (¥0.80 + ¥0.75 + ¥0.21) × 30 = ¥52.80. Saving ¥332.64, 86.30%.
  // The seed claims ¥45,135, ¥7,380 and ¥37,755 (83.6%): it multiplies per-million prices by 10, 5 and 50
  // (reading 10万 as 10M), and even then its sums are off (see the next assertion).
  const profile = join(dir, 'seed-000.yaml');
  writeFileSync(profile, 'per: day\nmodels:\n  gpt-4.1: { output: 100000 }\n  claude-sonnet-4-5: { output: 50k }\n  deepseek-v3.2: { output: "500,000" }\n');
  const json = await costJson({ config, profile });
  assert.deepEqual(
    json.models.map((m: { model: string; routes: Array<{ provider: string; cost: string }> }) => [m.model, m.routes.map((r) => `${r.provider} ${r.cost}`)]),
    [
      ['gpt-4.1', ['holysheep 24.00', 'openai 175.20']],
      ['claude-sonnet-4.5', ['holysheep 22.50', 'anthropic 164.25']],
      ['deepseek-v3.2', ['holysheep 6.30', 'deepseek 45.99']],
    ],
  );
  assert.deepEqual(json.totals, {
    cheapest_micros: 52_800_000,
    cheapest: '52.80',
    dearest_micros: 385_440_000,
    dearest: '385.44',
    saving_micros: 332_640_000,
    saving: '332.64',
    saving_percent: '86.30',
    // Every route here is of type openai, anthropic or gemini: half price as batches.
    batch_cheapest_micros: 26_400_000,
    batch_cheapest: '26.40',
    batch_saving_micros: 26_400_000,
    batch_saving: '26.40',
  });
  assert.deepEqual(
    json.provider_totals.map((p: { provider: string; cost: string }) => [p.provider, p.cost]),
    [['holysheep', '52.80']],
  );

  // Taking the seed's own multipliers (10M, 5M, 50M a day), the right totals are ¥38,544.00 and ¥5,280.00 (saving ¥33,264.00), not ¥45,135 / ¥7,380.
  writeFileSync(profile, 'models:\n  gpt-4.1: { output: 10M }\n  claude-sonnet-4.5: { output: 5M }\n  deepseek-v3.2: { output: 50M }\n');
  const literal = await costJson({ config, profile });
  assert.deepEqual([literal.totals.dearest, literal.totals.cheapest, literal.totals.saving, literal.totals.saving_percent], ['38544.00', '5280.00', '33264.00', '86.30']);
});

test('cached input at its own price: 1M prompt tokens a day of which 400k cached, 200k output', async () => {
  const { config } = workspace();
  // A month: 30M prompt (12M cached), 6M output. List: 18M × $2 + 12M × $0.50 + 6M × $8 = $36 + $6 + $48 = $90.
  const json = await costJson({ config, model: 'gpt-4.1', input: '1M', cachedInput: '400k', output: '200k' });
  assert.deepEqual(
    json.models[0].routes.map((r: { provider: string; cost: string; list_usd: string }) => [r.provider, r.cost, r.list_usd]),
    [
      ['holysheep', '90.00', '90.00'],
      ['openai', '657.00', '90.00'],
    ],
  );
  await assert.rejects(runCost({ config, model: 'gpt-4.1', input: '1M', cachedInput: '2M' }, captureIo()), /cached_input \+ cache_write are parts of input/);
});

test('--from-ledger: 7 days of recorded tokens scaled exactly to 30 days, rounded once', async () => {
  const { dir, config } = workspace();
  const ledger = SqliteLedger.open(join(dir, 'data', 'herd.db'));
  for (let day = 1; day <= 7; day++) {
    ledger.record(
      sampleRequest({ requestId: `g${day}`, startedAt: NOW - day * 86_400_000 + 60_000, promptTokens: 0, cachedPromptTokens: 0, completionTokens: day === 7 ? 142_858 : 142_857 }),
      [],
    );
  }
  ledger.record(sampleRequest({ requestId: 'gone', model: 'retired-model', startedAt: NOW - 3_600_000 }), []);
  ledger.record(sampleRequest({ requestId: 'too-old', startedAt: NOW - 8 * 86_400_000 }), []);
  await ledger.close();
  // 1 000 000 output tokens in 7 days → 30/7 M a month: × $8 × 7.3 = ¥250.285714… → 250 285 714 µ¥ (¥250.29); at ¥1/$: ¥34.285714… (¥34.29).
  const json = await costJson({ config, fromLedger: true, days: '7' });
  assert.equal(json.usage, 'ledger: last 7 days × 30/7');
  assert.deepEqual(json.skipped_models, ['retired-model']);
  assert.deepEqual(
    json.models[0].routes.map((r: { provider: string; cost_micros: number; cost: string }) => [r.provider, r.cost_micros, r.cost]),
    [
      ['holysheep', 34_285_714, '34.29'],
      ['openai', 250_285_714, '250.29'],
    ],
  );
  assert.equal(json.models[0].tokens_per_month.output, '4285714.29');
  await assert.rejects(runCost({ config, fromLedger: true, days: '0' }, captureIo()), /--days must be a whole number/);
});

test('dated billing prices apply at --at; one usage source at a time; clear errors', async () => {
  const { dir, config } = workspace();
  const io = captureIo();
  const program = new Command('herd').exitOverride();
  registerCostCommand(program, io);
  await program.parseAsync(['node', 'herd', 'cost', '--config', config, '--model', 'deepseek-v3.2', '--output', '1M', '--per', 'month', '--json']);
  assert.equal(JSON.parse(io.text()).models[0].routes[1].cost, '3.07', '$0.42 × 7.3 = ¥3.066');
  const twoSources = (err: HerdError) => err.code === 'INVALID_ARG' && /exactly one usage source/.test(err.message);
  await assert.rejects(runCost({ config, model: 'gpt-4.1', fromLedger: true }, captureIo()), twoSources);
  await assert.rejects(runCost({ config }, captureIo()), twoSources);
  await assert.rejects(runCost({ config, model: 'gpt-5' }, captureIo()), /unknown model 'gpt-5' \(known: gpt-4\.1, /);
  await assert.rejects(runCost({ config, model: 'gpt-4.1', output: 'lots' }, captureIo()), /'lots' is not a token count/);
  await assert.rejects(runCost({ config, model: 'gpt-4.1', per: 'week' }, captureIo()), /--per must be day or month/);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'models: { gpt-4.1: { outputs: 5 } }\n');
  await assert.rejects(runCost({ config, profile: bad }, captureIo()), /bad\.yaml: models\.gpt-4\.1: .*expected: per: day\|month/);
  await assert.rejects(runCost({ config, fromLedger: true }, captureIo()), /no ledger at .*data\/herd\.db yet/);
});
