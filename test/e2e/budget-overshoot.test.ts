// Budgets are never overshot (#28): a key with a ¥0.005 daily budget sends 20 concurrent requests, half
// without max_tokens, through the real HTTP server to a local fake OpenAI upstream whose answers are as
// long as allowed (max_tokens, else the model's maximum output). Recorded spend stays within the budget,
// refusals name the key and write no ledger row, and a key that may be capped gets max_tokens capped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startHerd } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';
import type { ChangeContext } from '../../src/gateway/keys/key-store.ts';
import { pause, sendJson, startMockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { postJson } from './start-test-server.ts';

const ENV = { BUDGET_TEST_MASTER: 'sk-herd-budget-test-master-00000000000000000000', BUDGET_UPSTREAM_KEY: 'sk-upstream' };
const CTX: ChangeContext = { actor: { id: 'cli@test', name: 'tester', role: 'admin' } };
/** The model's maximum output, herd.yaml's max_output_tokens: what the fake upstream answers without max_tokens. */
const MAX_OUTPUT = 100;

async function startLongAnswers() {
  const seen: (number | undefined)[] = [];
  const upstream = await startMockUpstream(async (req, res) => {
    const body = req.body as { max_tokens?: number; max_completion_tokens?: number };
    const limit = body.max_completion_tokens ?? body.max_tokens;
    seen.push(limit);
    // Overlapping answers: every request is admitted before any settles.
    await pause(40);
    const completion = Math.min(limit ?? MAX_OUTPUT, MAX_OUTPUT);
    sendJson(res, 200, {
      id: 'c-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(completion) }, finish_reason: 'length' }],
      usage: { prompt_tokens: 12, completion_tokens: completion, total_tokens: 12 + completion },
    });
  });
  return Object.assign(upstream, { seen });
}

async function startGateway(t: { after: (fn: () => unknown) => void }, upstreamUrl: string) {
  const dir = mkdtempSync(join(tmpdir(), 'herd-budget-e2e-'));
  const db = join(dir, 'herd.db');
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: BUDGET_TEST_MASTER, db: "${db}" }
billing: { ledger: "sqlite:${db}", currency: CNY, fx: { USD: 7.3 } }
providers:
  fake: { type: openai, base_url: "${upstreamUrl}/v1", api_key_env: BUDGET_UPSTREAM_KEY, exchange_rate: 1.0, retry: { attempts: 1 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    max_output_tokens: ${MAX_OUTPUT}
    deployments: [{ provider: fake }]
`,
    join(dir, 'herd.yaml'),
  );
  const store = await openKeyStore(`sqlite:${db}`);
  const budgeted = await store.createKey({ name: 'team-a', budgets: [{ period: 'day', amountMicros: 5_000 }], timezone: 'Asia/Shanghai' }, CTX);
  const capped = await store.createKey({ name: 'capped', budgets: [{ period: 'day', amountMicros: 400 }], capMaxTokens: true }, CTX);
  await store.close();
  const server = await startHerd(config, { env: ENV });
  t.after(() => server.close());
  return { server, db, budgeted, capped };
}

const ask = (url: string, secret: string, maxTokens: number | undefined) =>
  postJson(
    `${url}/v1/chat/completions`,
    { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello there' }], ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }) },
    { authorization: `Bearer ${secret}` },
  );

test('20 concurrent requests, half without max_tokens: recorded spend stays within a ¥0.005 daily budget; refusals name the key and write no row', async (t) => {
  const upstream = await startLongAnswers();
  t.after(() => upstream.close());
  const { server, db, budgeted } = await startGateway(t, upstream.url);
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(server.httpUrl, budgeted.secret, i % 2 === 0 ? 5 : undefined)));
  const ok = answers.filter((a) => a.status === 200).length;
  const refused = answers.filter((a) => a.status !== 200);
  assert.ok(ok >= 1, `some requests fit (${ok})`);
  assert.ok(refused.length >= 1, 'the budget refused the rest');
  for (const r of refused) {
    assert.equal(r.status, 429);
    const error = (r.json() as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'insufficient_quota');
    assert.match(error.message, /budget ¥0\.005 per day for key team-a (is spent|has ¥[\d.]+ left); it resets at 00:00 Asia\/Shanghai/);
  }
  await server.close();
  const file = new Database(db, { readonly: true });
  t.after(() => file.close());
  const rows = file.prepare('SELECT status, cost_micros FROM ledger_requests WHERE key_id = ?').all(budgeted.key.id) as { status: string; cost_micros: number }[];
  const spent = rows.reduce((s, r) => s + r.cost_micros, 0);
  assert.equal(rows.length, ok, 'one row per answered request, none for a refusal');
  assert.ok(spent <= 5_000, `recorded spend ¥${spent / 1e6} within the budget ¥0.005`);
  const counter = file.prepare('SELECT SUM(micros) AS micros FROM ledger_spend WHERE key_id = ?').get(budgeted.key.id) as { micros: number };
  assert.equal(counter.micros, spent, 'the budget counter holds exactly the settled spend');
  // Every answer without max_tokens was reserved at the model's maximum output: the upstream never saw one it could exceed.
  assert.ok(upstream.seen.every((m) => m === undefined || m === 5));
});

test('a key that may be capped: a request without max_tokens the budget cannot cover is capped, and the response says so', async (t) => {
  const upstream = await startLongAnswers();
  t.after(() => upstream.close());
  const { server, capped } = await startGateway(t, upstream.url);
  // At the provider's ¥1 per list dollar, ¥0.0004 covers the prompt (2 micros a token) and about 47 output tokens (8 each), not 100.
  const first = await ask(server.httpUrl, capped.secret, undefined);
  assert.equal(first.status, 200);
  const cap = Number(first.headers.get('x-herd-max-tokens-capped'));
  assert.ok(cap >= 1 && cap < MAX_OUTPUT, `capped to ${cap}`);
  assert.equal(upstream.seen.at(-1), cap, 'the upstream got the cap');
  assert.ok(cap >= 40 && cap <= 48, `the largest cap that fits: ${cap}`);
  const second = await ask(server.httpUrl, capped.secret, undefined);
  assert.equal(second.status, 429, 'nothing left: refused');
  const sent = await ask(server.httpUrl, capped.secret, 50);
  assert.equal(sent.status, 429, 'a request that sets max_tokens is never capped');
});
