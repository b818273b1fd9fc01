// Shared state seen from outside: two gateway replicas on one Redis enforce one RPM limit exactly;
// budgets refuse with insufficient_quota; cache hits replay identically (JSON and SSE) and cost
// nothing; a stream cut by the upstream is still billed; /admin/usage reports it all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { openAICompletion, openAIErrorBody, openAIStreamFrames, scriptedUpstream, type ScriptedUpstream } from '../gateway/helpers/gateway-fixtures.ts';
import { startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const REDIS_URL = process.env['REDIS_URL'];
const MASTER = 'sk-herd-master-key-for-the-state-tests-0123456789';
const ENV = { RELAY_API_KEY: 'sk-upstream', HERD_STATE_MASTER: MASTER };

function configText(upstream: string, redis: string | undefined, prefix: string): string {
  return `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_STATE_MASTER, db: ./herd.db }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:./herd.db", flush_interval_ms: 20 }
${redis ? `limits: { redis: { url: "${redis}", key_prefix: "${prefix}" } }` : ''}
providers:
  relay: { type: openai, base_url: "${upstream}/v1", api_key_env: RELAY_API_KEY, exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
`;
}

describe('gateway shared state', () => {
  let upstream: MockUpstream;
  let script: ScriptedUpstream;
  let dir: string;
  const servers: HerdServer[] = [];
  const prefix = `herd:test:${randomUUID()}:`;

  before(async () => {
    script = scriptedUpstream({
      okJson: openAICompletion('gpt-4.1', 'Bonjour'),
      okFrames: openAIStreamFrames('gpt-4.1', ['Bon', 'jour', ' à', ' vous']),
      errorBody: openAIErrorBody,
    });
    upstream = await startMockUpstream(script.handler);
    dir = mkdtempSync(join(tmpdir(), 'herd-state-'));
    const file = join(dir, 'herd.yaml');
    for (let i = 0; i < 2; i++) servers.push(await startHerd(parseHerdConfig(configText(upstream.url, REDIS_URL, prefix), file), { env: ENV }));
  });
  after(async () => {
    for (const s of servers) await s.close();
    await upstream.close();
  });

  const client = (key: string, server = servers[0] as HerdServer) => new OpenAI({ apiKey: key, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  const createKey = async (input: Parameters<TestKeys['create']>[0]) => {
    const store = await TestKeys.open(join(dir, 'herd.db'));
    try {
      return (await store.create(input)).secret;
    } finally {
      await store.close();
    }
  };
  const ask = { model: 'gpt-4.1', messages: [{ role: 'user' as const, content: 'hello' }] };

  it('two replicas sharing Redis enforce one RPM limit exactly', { skip: REDIS_URL ? false : 'REDIS_URL is not set: the shared-limit suite needs a real Redis' }, async () => {
    const key = await createKey({ name: 'rpm-10', allowedModels: '*', rpm: 10 });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${servers[i % 2]!.httpUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(ask),
        }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as { error?: { code: string } } })),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    assert.equal(ok.length, 10, JSON.stringify(results.map((r) => r.status)));
    assert.equal(limited.length, 20);
    assert.ok(limited.every((r) => r.body.error?.code === 'rate_limit_exceeded' && Number(r.retryAfter) >= 1));
  });

  it('a key over its budget gets 429 insufficient_quota, without Retry-After', async () => {
    const key = await createKey({ name: 'tiny-budget', allowedModels: '*', budgetDayMicros: 10 });
    const res = await fetch(`${servers[0]!.httpUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify(ask) });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), null);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'insufficient_quota');
  });

  it('a deterministic request is answered from the cache the second time, identically, JSON and SSE', async () => {
    const before = upstream.requests.length;
    const request = { ...ask, temperature: 0, messages: [{ role: 'user' as const, content: `cache me ${randomUUID()}` }] };
    const first = await client(MASTER).chat.completions.create(request).withResponse();
    const second = await client(MASTER, servers[0]).chat.completions.create(request).withResponse();
    assert.equal(first.response.headers.get('x-herd-cache'), 'miss');
    assert.equal(second.response.headers.get('x-herd-cache'), 'hit');
    assert.deepEqual(second.data.choices, first.data.choices);
    assert.equal(upstream.requests.length - before, 1, 'one upstream call for two answers');
    const stream = await client(MASTER).chat.completions.create({ ...request, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, first.data.choices[0]?.message.content);
    assert.equal(upstream.requests.length - before, 1);
  });

  it('a stream cut by the upstream is billed from what was delivered, and /admin/usage reports spend', async () => {
    const key = await createKey({ name: 'stream-cut', allowedModels: '*' });
    script.script({ kind: 'stream-reset', after: 3 });
    const stream = await client(key).chat.completions.create({ ...ask, stream: true });
    await assert.rejects(async () => {
      for await (const _chunk of stream) {
        /* read until the cut */
      }
    });
    await new Promise((r) => setTimeout(r, 200)); // rows are written in batches
    const usage = await fetch(`${servers[0]!.httpUrl}/admin/usage?by=key&since=1d`, { headers: { authorization: `Bearer ${MASTER}` } });
    assert.equal(usage.status, 200);
    type Row = {
      key_name: string;
      requests: number;
      failed: number;
      estimated: number;
      cache_hits: number;
      saved_micros: number;
      cost_micros: number;
      tokens: { prompt: number; completion: number };
    };
    const rows = ((await usage.json()) as { rows: Row[] }).rows;
    const cut = rows.find((r) => r.key_name === 'stream-cut');
    assert.ok(cut, JSON.stringify(rows));
    assert.equal(cut.estimated, 1, 'usage counted by Herd from the delivered text, marked estimated');
    assert.ok(cut.tokens.completion > 0 && cut.cost_micros > 0, 'the delivered part is charged');
    const master = rows.find((r) => r.key_name.startsWith('master'));
    assert.ok(master && master.cache_hits >= 2 && master.saved_micros > 0, 'cache hits are recorded with the cost they saved');
    const denied = await fetch(`${servers[0]!.httpUrl}/admin/usage`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(denied.status, 403, 'a user key may not read /admin');
  });
});
