// Prompt-cache affinity through the real server: a 20-turn Claude Code session (a growing conversation,
// its session in metadata.user_id) against two Anthropic upstreams of one model stays on one of them, and
// the ledger prices the cached tokens as cache reads, 5-minute and 1-hour writes at Anthropic's defaults
// (exact micros), with the read saving in /admin/usage by key. Then two Herds on one Redis share the choice.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-affinity-tests-0123456789';
const ENV = { LEFT_API_KEY: 'sk-left', RIGHT_API_KEY: 'sk-right', HERD_TEST_MASTER: MASTER };
const MODEL = 'claude-opus-4.5';
const SESSION = '54c1eb09-bc4c-4d2f-98eb-6d2ab2d5e2fe';
const REDIS_URL = process.env.REDIS_URL;

interface MessagesBody {
  messages: unknown[];
  cache_control?: { ttl?: string };
}

/**
 * An Anthropic upstream whose prompt cache grows with the conversation: turn i reads 1000 × i cached tokens
 * and writes 100 (for an hour when the request asks for it), 50 new input tokens, 20 output tokens.
 */
function cachingAnthropic(name: string): Promise<MockUpstream> {
  return startMockUpstream((req, res) => {
    const body = req.body as MessagesBody;
    const turn = (body.messages.length - 1) / 2;
    const hour = body.cache_control?.ttl === '1h';
    sendJson(res, 200, {
      id: `msg_${name}_${turn}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-5',
      content: [{ type: 'text', text: `turn ${turn} from ${name}` }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 50,
        cache_read_input_tokens: 1000 * turn,
        cache_creation_input_tokens: 100,
        cache_creation: { ephemeral_5m_input_tokens: hour ? 0 : 100, ephemeral_1h_input_tokens: hour ? 100 : 0 },
        output_tokens: 20,
      },
    });
  });
}

function post(server: HerdServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.httpUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': MASTER, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  });
}

/** What Claude Code 2.1 sends as metadata.user_id. */
const claudeCodeUser = (session: string) => JSON.stringify({ device_id: 'a1b2c3', account_uuid: '', session_id: session });

describe('prompt-cache affinity and cache pricing', () => {
  let left: MockUpstream;
  let right: MockUpstream;
  let server: HerdServer;
  let dir: string;
  let db: string;

  before(async () => {
    left = await cachingAnthropic('left');
    right = await cachingAnthropic('right');
    dir = mkdtempSync(join(tmpdir(), 'herd-affinity-'));
    db = join(dir, 'herd.db');
    // weighted: without affinity, the turns would be spread between the two (test/gateway/router/affinity-routing.test.ts).
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  left: { type: anthropic, base_url: "${left.url}", api_key_env: LEFT_API_KEY, exchange_rate: 1.0, retry: { attempts: 1 } }
  right: { type: anthropic, base_url: "${right.url}", api_key_env: RIGHT_API_KEY, exchange_rate: 1.0, retry: { attempts: 1 } }
models:
  ${MODEL}:
    price: { input: 5.00, output: 25.00 }
    strategy: weighted
    deployments: [{ provider: left, upstream_model: claude-opus-4-5 }, { provider: right, upstream_model: claude-opus-4-5 }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
  });
  after(async () => {
    await server?.close();
    await left?.close();
    await right?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('20 turns of a Claude Code session stay on one deployment; the ledger prices reads at 0.1×, 5m writes at 1.25× and 1h writes at 2× input', async () => {
    const messages: Array<{ role: string; content: string }> = [];
    const providers: string[] = [];
    for (let turn = 0; turn < 20; turn++) {
      messages.push({ role: 'user', content: `step ${turn}: continue the refactor` });
      const last = turn === 19;
      const res = await post(server, {
        model: MODEL,
        max_tokens: 1024,
        system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
        messages,
        metadata: { user_id: claudeCodeUser(SESSION) },
        // The last turn asks for the 1-hour cache.
        ...(last ? { cache_control: { type: 'ephemeral', ttl: '1h' } } : {}),
      });
      assert.equal(res.status, 200);
      providers.push(res.headers.get('x-herd-provider') ?? '');
      const answer = (await res.json()) as { content: Array<{ text: string }> };
      messages.push({ role: 'assistant', content: answer.content[0]!.text });
    }
    assert.equal(new Set(providers).size, 1, `one deployment served the session: ${providers.join(',')}`);
    assert.deepEqual(
      [left.requests.length, right.requests.length].sort((a, b) => a - b),
      [0, 20],
    );

    const sqlite = new Database(db, { readonly: true });
    try {
      const query = sqlite.prepare(
        'SELECT provider, cached_prompt_tokens, cache_write_tokens, cache_write_1h_tokens, cost_micros, saved_micros FROM ledger_requests ORDER BY cached_prompt_tokens',
      );
      // Answers wait for their rows' spool commit; the spool reaches the database every flush_interval_ms.
      let rows: Array<Record<string, number | string>> = [];
      for (let i = 0; i < 200 && rows.length < 20; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 20));
        rows = query.all() as Array<Record<string, number | string>>;
      }
      assert.equal(rows.length, 20);
      rows.forEach((row, turn) => {
        const hour = turn === 19;
        // $5/M input: 50 new tokens × 5 + 1000·turn reads × 0.5 + 100 writes × 6.25 (5m) or × 10 (1h) + 20 output × 25, in micro-dollars.
        const cost = 250 + 500 * turn + (hour ? 1000 : 625) + 500;
        assert.deepEqual(row, {
          provider: providers[0],
          cached_prompt_tokens: 1000 * turn,
          cache_write_tokens: 100,
          cache_write_1h_tokens: hour ? 100 : 0,
          cost_micros: cost,
          // The reads at input (5) less what they cost (0.5).
          saved_micros: 4500 * turn,
        });
      });
    } finally {
      sqlite.close();
    }

    const usage = await fetch(`${server.httpUrl}/admin/usage?since=1d&by=key`, { headers: { authorization: `Bearer ${MASTER}` } });
    const report = (await usage.json()) as { rows: Array<Record<string, unknown>> };
    assert.equal(report.rows.length, 1);
    const row = report.rows[0]!;
    assert.deepEqual(row.tokens, {
      prompt: 20 * 150 + 1000 * 190,
      cached_prompt: 1000 * 190,
      cache_write: 2000,
      cache_write_1h: 100,
      completion: 400,
      reasoning: 0,
      reported_reasoning: 0,
    });
    assert.equal(row.cache_read_saved_micros, 4500 * 190);
    assert.equal(row.saved_micros, 0, 'no answer came from Herd’s own cache');
  });
});

describe('prompt-cache affinity shared through Redis', { skip: REDIS_URL ? false : 'affinity over Redis: REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379)' }, () => {
  const prefix = `herd:test:affinity:${process.pid}:${Date.now()}:`;
  let left: MockUpstream;
  let right: MockUpstream;
  let first: HerdServer;
  let second: HerdServer;
  let dir: string;

  /** lowest-latency tries a deployment never measured first, in config order: each Herd's own first choice is known. */
  const herd = (name: string, order: string) =>
    startHerd(
      parseHerdConfig(
        `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${join(dir, `${name}-auth.db`)}" }
billing: { ledger: "off" }
limits: { redis: { url: "${REDIS_URL}", key_prefix: "${prefix}limits:${name}:" } }
providers:
  left: { type: anthropic, base_url: "${left.url}", api_key_env: LEFT_API_KEY, retry: { attempts: 1 } }
  right: { type: anthropic, base_url: "${right.url}", api_key_env: RIGHT_API_KEY, retry: { attempts: 1 } }
models:
  ${MODEL}:
    price: { input: 5.00, output: 25.00 }
    strategy: lowest-latency
    deployments: ${order}
routes:
  affinity: { key_prefix: "${prefix}" }
`,
        join(dir, `${name}.yaml`),
      ),
      { env: ENV },
    );

  before(async () => {
    left = await cachingAnthropic('left');
    right = await cachingAnthropic('right');
    dir = mkdtempSync(join(tmpdir(), 'herd-affinity-redis-'));
    first = await herd('first', '[{ provider: right, upstream_model: claude-opus-4-5 }, { provider: left, upstream_model: claude-opus-4-5 }]');
    second = await herd('second', '[{ provider: left, upstream_model: claude-opus-4-5 }, { provider: right, upstream_model: claude-opus-4-5 }]');
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await left?.close();
    await right?.close();
    const admin = new Redis(REDIS_URL!);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = (server: HerdServer, session: string) =>
    post(server, { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }, { 'x-claude-code-session-id': session });

  it("a session pinned by one Herd is followed by the other, which would otherwise choose differently; the key expires with the session's TTL", async () => {
    assert.equal((await ask(first, 'shared')).headers.get('x-herd-provider'), 'right', "the first Herd's own choice");
    assert.equal((await ask(second, 'shared')).headers.get('x-herd-provider'), 'right', 'the second follows the shared choice');
    assert.equal((await ask(second, 'unseen')).headers.get('x-herd-provider'), 'left', "the second Herd's own choice");

    const admin = new Redis(REDIS_URL!);
    try {
      const keys = await admin.keys(`${prefix}${MODEL}:*`);
      assert.equal(keys.length, 2);
      for (const key of keys) {
        const ttl = await admin.pttl(key);
        assert.ok(ttl > 0 && ttl <= 300_000, `${key} lives ttl_s (${ttl} ms left)`);
      }
    } finally {
      await admin.quit();
    }
  });
});
