// Every refusal is one kind of audit event and none is a ledger row: a wrong key, a blocked key, a model
// the key may not use, an RPM limit and a budget, through the real server (OpenAI and Anthropic dialects),
// land in the audit log as `refusal.<reason>` rows, a minute's repeats folded into one row with a count.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { TEST_CHANGE, TestKeys } from '../helpers/test-keys.ts';

const MASTER = 'sk-herd-refusals-master-0b1c2d3e4f5a6b7c8d9e';
const ENV = { REFUSALS_MASTER: MASTER, REFUSALS_UPSTREAM: 'sk-upstream-refusals' };

describe('refusals in the audit log', () => {
  let upstream: MockUpstream;
  let dir: string;
  let server: HerdServer | undefined;

  before(async () => {
    upstream = await startMockUpstream((_req, res) => sendJson(res, 200, openAICompletion('gpt-test', 'hi')));
    dir = mkdtempSync(join(tmpdir(), 'herd-refusals-'));
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('wrong key, blocked key, model not allowed, RPM and budget: audit rows with counts, no ledger rows', async () => {
    const keys = await TestKeys.open(join(dir, 'keys.db'));
    const narrow = (await keys.create({ name: 'narrow', allowedModels: ['other-model'] })).secret;
    const slow = (await keys.create({ name: 'slow', allowedModels: '*', rpm: 1 })).secret;
    const poor = (await keys.create({ name: 'poor', allowedModels: '*', budgetDayMicros: 1 })).secret;
    const blocked = await keys.create({ name: 'blocked', allowedModels: '*' });
    await keys.store.setBlocked(blocked.key.id, true, TEST_CHANGE);
    await keys.close();
    server = await startHerd(
      parseHerdConfig(
        `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: REFUSALS_MASTER, db: "${join(dir, 'keys.db')}" }
billing: { ledger: "sqlite:${join(dir, 'ledger.db')}", spool_dir: "${join(dir, 'spool')}", flush_interval_ms: 20 }
providers:
  up: { type: openai, base_url: "${upstream.url}/v1", api_key_env: REFUSALS_UPSTREAM, timeout_ms: 2000 }
models:
  gpt-test:
    price: { input: 1, output: 2 }
    max_output_tokens: 100
    deployments: [{ provider: up }]
`,
        join(dir, 'herd.yaml'),
      ),
      { env: ENV, log: () => undefined },
    );
    const url = server.httpUrl;
    const chat = (secret: string) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] }),
      }).then(async (r) => ({ status: r.status, body: await r.text() }));
    const messages = (secret: string) =>
      fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': secret, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] }),
      }).then(async (r) => ({ status: r.status, body: await r.text() }));

    for (let i = 0; i < 3; i++) assert.equal((await chat('sk-herd-not-a-real-key-000000000000000000')).status, 401);
    assert.equal((await chat(blocked.secret)).status, 403);
    assert.equal((await chat(narrow)).status, 403);
    assert.equal((await messages(narrow)).status, 403);
    assert.equal((await chat(slow)).status, 200);
    assert.equal((await chat(slow)).status, 429);
    const budget = await chat(poor);
    assert.equal(budget.status, 429);
    assert.match(budget.body, /budget .* per day for key poor/);
    await server.close();
    server = undefined;

    const db = new Database(join(dir, 'keys.db'), { readonly: true });
    const rows = db.prepare("SELECT actor_name, action, object, count FROM audit_events WHERE action LIKE 'refusal.%' ORDER BY seq").all() as {
      actor_name: string;
      action: string;
      object: string;
      count: number;
    }[];
    db.close();
    const summary = rows.map((r) => `${r.action} ${r.actor_name} ${r.object} ×${r.count}`).sort();
    assert.deepEqual(summary, [
      'refusal.budget_exceeded poor model:gpt-test ×1',
      'refusal.invalid_api_key no valid key model:gpt-test ×3',
      'refusal.key_blocked blocked model:gpt-test ×1',
      'refusal.model_not_allowed narrow model:gpt-test ×2',
      'refusal.rate_limited slow model:gpt-test ×1',
    ]);
    const ledger = new Database(join(dir, 'ledger.db'), { readonly: true });
    const statuses = (ledger.prepare('SELECT status FROM ledger_requests').all() as { status: string }[]).map((r) => r.status);
    ledger.close();
    assert.deepEqual(statuses, ['ok'], 'the one answered request is the only ledger row');
  });
});
