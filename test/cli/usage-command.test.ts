// `herd usage` over a real SQLite ledger: the table and --json by each grouping, the ledger found
// through herd.yaml (relative to it) or --ledger, a fresh install, and clear errors for bad flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerUsageCommand, runUsage, type BillingCliIo } from '../../src/cli/usage-command.ts';
import type { HerdError } from '../../src/core/errors.ts';
import { SqliteLedger } from '../../src/gateway/billing/sqlite-ledger.ts';
import { sampleRequest } from '../gateway/billing/ledger-contract.ts';

const NOW = Date.parse('2026-05-21T12:00:00Z');

function captureIo(): BillingCliIo & { out: string[]; text(): string } {
  const out: string[] = [];
  return {
    out,
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

async function seedLedger(file: string): Promise<void> {
  const ledger = SqliteLedger.open(file);
  const day1 = Date.parse('2026-05-20T09:00:00Z');
  const day2 = Date.parse('2026-05-21T09:00:00Z');
  ledger.record(
    sampleRequest({
      requestId: 'a',
      startedAt: day1,
      provider: 'openai',
      costMicros: 58_400_000,
      usdMicros: 8_000_000,
      listUsdMicros: 8_000_000,
      promptTokens: 0,
      cachedPromptTokens: 0,
      completionTokens: 1_000_000,
      reasoningTokens: 0,
    }),
    [],
  );
  ledger.record(
    sampleRequest({
      requestId: 'b',
      startedAt: day2,
      keyId: 'key_b',
      keyName: 'team b',
      provider: 'holysheep',
      costMicros: 8_000_000,
      usdMicros: 1_095_890,
      listUsdMicros: 8_000_000,
      promptTokens: 0,
      cachedPromptTokens: 0,
      completionTokens: 1_000_000,
      reasoningTokens: 0,
    }),
    [],
  );
  ledger.record(sampleRequest({ requestId: 'old', startedAt: Date.parse('2026-04-01T00:00:00Z') }), []);
  await ledger.close();
}

test('a table by model and by provider, with totals in ¥ and $', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  await seedLedger(file);
  const io = captureIo();
  await runUsage({ ledger: `sqlite:${file}`, by: 'provider', since: '7d' }, io);
  const text = io.text();
  assert.match(text, /^Usage from 2026-05-14 12:00 UTC to 2026-05-21 12:00 UTC by provider\n/);
  // After list USD: rate saved (list less true USD), batch saved, cache saved, read saved.
  assert.match(text, /holysheep +1 +0 +0 +0 +0 +0 +1,000,000 +0 +¥8\.00 +\$1\.10 +\$8\.00 +\$6\.90 +\$0\.00 +¥0\.00 +¥0\.00/);
  assert.match(text, /openai +1 +0 +0 +0 +0 +0 +1,000,000 +0 +¥58\.40 +\$8\.00 +\$8\.00 +\$0\.00 +\$0\.00 +¥0\.00 +¥0\.00/);
  assert.match(text, /total +2 +0 +0 +0 +0 +0 +2,000,000 +0 +¥66\.40 +\$9\.10 +\$16\.00 +\$6\.90 +\$0\.00 +¥0\.00 +¥0\.00/, 'the April request is outside --since 7d');
  assert.match(text, /true USD: that at the market rate/);
});

test('--json is exact (micros and tokens) with cent strings, grouped by key with names', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  await seedLedger(file);
  const io = captureIo();
  await runUsage({ ledger: file, by: 'key', since: '2026-05-01', until: '2026-05-21T00:00:00Z', json: true }, io);
  const json = JSON.parse(io.text());
  assert.equal(json.object, 'usage.report');
  assert.deepEqual([json.since, json.until, json.by], ['2026-05-01T00:00:00.000Z', '2026-05-21T00:00:00.000Z', 'key']);
  assert.deepEqual(json.rows, [
    {
      group: 'key_a',
      key_name: 'team a',
      currency: 'CNY',
      requests: 1,
      failed: 0,
      cache_hits: 0,
      estimated: 0,
      tokens: { prompt: 0, cached_prompt: 0, cache_write: 0, cache_write_1h: 0, completion: 1_000_000, reasoning: 0, reported_reasoning: 0 },
      cost_micros: 58_400_000,
      cost: '58.40',
      usd_micros: 8_000_000,
      usd: '8.00',
      list_usd_micros: 8_000_000,
      list_usd: '8.00',
      saved_micros: 0,
      saved: '0.00',
      cache_read_saved_micros: 0,
      cache_read_saved: '0.00',
      rate_saved_usd_micros: 0,
      rate_saved_usd: '0.00',
      batch_requests: 0,
      batch_saved_usd_micros: 0,
      batch_saved_usd: '0.00',
    },
  ]);
  assert.equal(json.totals[0].cost, '58.40');
});

test('batch lines: the saving from batching beside the saving from the exchange rate, in the table and --json', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  const ledger = SqliteLedger.open(file);
  const at = Date.parse('2026-05-21T09:00:00Z');
  const tokens = { promptTokens: 0, cachedPromptTokens: 0, completionTokens: 1_000_000, reasoningTokens: 0 };
  // gpt-4.1's 1M output at half price ($4 list, ¥29.20 at ¥7.3/$), realtime list $8; a relay's realtime line at ¥1/$.
  ledger.record(
    sampleRequest({
      ...tokens,
      requestId: 'line1',
      startedAt: at,
      provider: 'openai',
      batchId: 'batch_1',
      costMicros: 29_200_000,
      usdMicros: 4_000_000,
      listUsdMicros: 4_000_000,
      realtimeListUsdMicros: 8_000_000,
    }),
    [],
  );
  ledger.record(sampleRequest({ ...tokens, requestId: 'rt', startedAt: at, provider: 'holysheep', costMicros: 8_000_000, usdMicros: 1_095_890, listUsdMicros: 8_000_000 }), []);
  await ledger.close();
  const io = captureIo();
  await runUsage({ ledger: file, by: 'provider', since: '7d' }, io);
  const text = io.text();
  assert.match(text, /openai +1 +0 +0 +0 +0 +0 +1,000,000 +0 +¥29\.20 +\$4\.00 +\$4\.00 +\$0\.00 +\$4\.00 /);
  assert.match(text, /holysheep +1 .* +\$8\.00 +\$6\.90 +\$0\.00 /);
  assert.match(text, /total +2 .* +\$12\.00 +\$6\.90 +\$4\.00 /);
  assert.match(text, /batch saved: batch lines at the realtime list price less their batch price \(1 batch line\(s\)\)/);
  const json = captureIo();
  await runUsage({ ledger: file, by: 'provider', since: '7d', json: true }, json);
  const [total] = JSON.parse(json.text()).totals as Array<Record<string, unknown>>;
  assert.deepEqual([total?.batch_requests, total?.batch_saved_usd_micros, total?.rate_saved_usd_micros], [1, 4_000_000, 6_904_110]);
});

test('per key: prompt-cache reads and writes, and what the reads saved, apart from what cache hits saved', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  const ledger = SqliteLedger.open(file);
  const at = Date.parse('2026-05-21T09:00:00Z');
  const upstream = { startedAt: at, model: 'claude-sonnet-4.5', provider: 'anthropic', upstreamModel: 'claude-sonnet-4-5', costMicros: 1_000_000 };
  // An upstream answer records its cache reads' discount in saved_micros; a cache hit, its whole cost.
  ledger.record(
    sampleRequest({ ...upstream, requestId: 'r1', promptTokens: 10_000, cachedPromptTokens: 8_000, cacheWriteTokens: 1_000, cacheWrite1hTokens: 400, savedMicros: 21_600 }),
    [],
  );
  ledger.record(sampleRequest({ ...upstream, requestId: 'r2', promptTokens: 12_000, cachedPromptTokens: 9_000, cacheWriteTokens: 2_000, savedMicros: 24_300 }), []);
  ledger.record(sampleRequest({ ...upstream, requestId: 'hit', cacheHit: true, costMicros: 0, savedMicros: 500_000 }), []);
  ledger.record(sampleRequest({ ...upstream, requestId: 'other', keyId: 'key_b', keyName: 'team b', cachedPromptTokens: 0, savedMicros: 0 }), []);
  await ledger.close();

  const io = captureIo();
  await runUsage({ ledger: file, by: 'key', since: '7d', json: true }, io);
  const [a, b] = JSON.parse(io.text()).rows as Array<Record<string, unknown>>;
  assert.equal(a?.group, 'key_a');
  assert.deepEqual(a?.tokens, { prompt: 22_000, cached_prompt: 17_000, cache_write: 3_000, cache_write_1h: 400, completion: 1_000, reasoning: 200, reported_reasoning: 0 });
  assert.equal(a?.cache_read_saved_micros, 45_900);
  assert.equal(a?.saved_micros, 500_000, 'a cache hit saves its whole cost; reads are reported apart');
  assert.equal(b?.cache_read_saved_micros, 0);

  const table = captureIo();
  await runUsage({ ledger: file, by: 'key', since: '7d' }, table);
  assert.match(table.text(), /key_a \(team a\) +3 +0 +1 +22,000 +17,000 +3,000 +1,000 +200 +¥2\.00 .* +¥0\.50 +¥0\.046\n/);
});

test('the ledger comes from herd.yaml, relative to it; a fresh install prints no usage and creates nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-usage-'));
  mkdirSync(join(dir, 'data'));
  await seedLedger(join(dir, 'data', 'herd.db'));
  writeFileSync(join(dir, 'herd.yaml'), 'server: { http_port: 0, grpc_port: 0 }\n');
  const io = captureIo();
  await runUsage({ config: join(dir, 'herd.yaml'), by: 'day' }, io);
  assert.match(io.text(), /2026-05-20 +1 .*¥58\.40/);
  assert.match(io.text(), /2026-05-21 +1 .*¥8\.00/);

  const empty = mkdtempSync(join(tmpdir(), 'herd-usage-empty-'));
  const none = captureIo();
  await runUsage({ ledger: `sqlite:${join(empty, 'data', 'herd.db')}` }, none);
  assert.match(none.text(), /^No usage recorded yet \(.*data\/herd\.db does not exist\)\.\n$/);
  assert.equal(existsSync(join(empty, 'data')), false);
  const json = captureIo();
  await runUsage({ ledger: join(empty, 'herd.db'), json: true }, json);
  assert.deepEqual(JSON.parse(json.text()).rows, []);
});

test('through commander; bad flags are INVALID_ARG with the accepted forms', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  await seedLedger(file);
  const io = captureIo();
  const program = new Command('herd').exitOverride();
  registerUsageCommand(program, io);
  await program.parseAsync(['node', 'herd', 'usage', '--ledger', file, '--by', 'model', '--json']);
  assert.equal(JSON.parse(io.text()).rows[0].group, 'gpt-4.1');
  await assert.rejects(
    runUsage({ ledger: file, by: 'week' }, captureIo()),
    (err: HerdError) => err.code === 'INVALID_ARG' && /by must be one of day, model, provider, key, team/.test(err.message),
  );
  await assert.rejects(runUsage({ ledger: file, since: 'yesterday' }, captureIo()), /since must be a duration such as 7d/);
  await assert.rejects(runUsage({ ledger: file, since: '1d', until: '2d' }, captureIo()), /--until .* must be after --since/);
  await assert.rejects(runUsage({ ledger: 'mysql://x' }, captureIo()), /scheme 'mysql:' is not supported/);
});

test('by key: the master key is named once, and sums below a cent show their digits instead of ¥0.00', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  const ledger = SqliteLedger.open(file);
  const at = Date.parse('2026-05-21T09:00:00Z');
  const small = { promptTokens: 12, cachedPromptTokens: 0, completionTokens: 3, reasoningTokens: 0 };
  ledger.record(
    sampleRequest({ requestId: 'm', startedAt: at, keyId: 'master', keyName: 'master ($HERD_MASTER_KEY)', costMicros: 4_200, usdMicros: 575, listUsdMicros: 4_200, ...small }),
    [],
  );
  ledger.record(sampleRequest({ requestId: 't', startedAt: at, keyId: 'key_t', keyName: 'tiny', costMicros: 12, usdMicros: 2, listUsdMicros: 12, ...small }), []);
  await ledger.close();
  const io = captureIo();
  await runUsage({ ledger: file, by: 'key', since: '7d' }, io);
  const text = io.text();
  assert.match(text, /\n\s*master \(\$HERD_MASTER_KEY\) +1 /);
  assert.doesNotMatch(text, /master \(master/);
  assert.match(text, /key_t \(tiny\) +1 /);
  assert.match(text, /master .* ¥0\.0042 +\$0\.00058 +\$0\.0042 +\$0\.0036 +\$0\.00 +¥0\.00\b/);
  assert.match(text, /key_t .* ¥0\.000012 +\$0\.000002 +\$0\.000012 +\$0\.000010 +\$0\.00 +¥0\.00\b/);
  assert.match(text, /total .* ¥0\.0042 +\$0\.00058 +\$0\.0042 /, 'the total (4212 micro-yuan) to two significant digits');
  assert.doesNotMatch(text, /¥0\.00 +\$0\.00 /, 'no spend reads as zero');
});

test('reasoning: the normalised figure in the table and JSON, and how much of it the upstreams reported themselves', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  const ledger = SqliteLedger.open(file);
  const at = Date.parse('2026-05-21T09:00:00Z');
  // An OpenAI-compatible upstream reports its figure; Anthropic reports none apart (Herd counted 30).
  ledger.record(sampleRequest({ requestId: 'o', startedAt: at, provider: 'holysheep', completionTokens: 20, reasoningTokens: 7, reportedReasoningTokens: 7 }), []);
  ledger.record(sampleRequest({ requestId: 'a', startedAt: at, provider: 'anthropic', completionTokens: 60, reasoningTokens: 30 }), []);
  await ledger.close();
  const io = captureIo();
  await runUsage({ ledger: file, by: 'provider', since: '7d', json: true }, io);
  const json = JSON.parse(io.text());
  assert.deepEqual(
    json.rows.map((r: { group: string; tokens: { reasoning: number; reported_reasoning: number } }) => [r.group, r.tokens.reasoning, r.tokens.reported_reasoning]),
    [
      ['anthropic', 30, 0],
      ['holysheep', 7, 7],
    ],
  );
  assert.deepEqual([json.totals[0].tokens.reasoning, json.totals[0].tokens.reported_reasoning], [37, 7]);
  const table = captureIo();
  await runUsage({ ledger: file, by: 'provider', since: '7d' }, table);
  assert.match(table.text(), /reasoning: completion tokens spent reasoning; 7 of them as the upstreams reported them/);
});

test('--by team: spend per team, its name beside its id; keys without a team under -', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-usage-')), 'herd.db');
  const ledger = SqliteLedger.open(file);
  const at = Date.parse('2026-05-21T09:00:00Z');
  const team = { teamId: 'tm_research', teamName: 'research', keyTags: ['prod'], keyMetadata: { cost_center: '42' } };
  ledger.record(sampleRequest({ requestId: 'r1', startedAt: at, keyId: 'hk_a', costMicros: 1_000_000, ...team }), []);
  ledger.record(sampleRequest({ requestId: 'r2', startedAt: at, keyId: 'hk_b', costMicros: 2_000_000, ...team }), []);
  ledger.record(sampleRequest({ requestId: 'r3', startedAt: at, keyId: 'hk_c', costMicros: 500_000 }), []);
  await ledger.close();
  const json = captureIo();
  await runUsage({ ledger: file, by: 'team', since: '7d', json: true }, json);
  const report = JSON.parse(json.text());
  assert.deepEqual(
    report.rows.map((r: { group: string; team_name?: string | null; requests: number }) => [r.group, r.team_name, r.requests]),
    [
      ['-', null, 1],
      ['tm_research', 'research', 2],
    ],
  );
  const table = captureIo();
  await runUsage({ ledger: file, by: 'team', since: '7d' }, table);
  assert.match(table.text(), /tm_research \(research\) +2 /);
});
