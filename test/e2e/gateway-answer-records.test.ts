// What a client got is on record and in the headers, however the request ended: the ledger's request row
// holds the status the client was answered (a completion, a stream, a cache hit, a 503 after retries),
// each attempt row the upstream's own status, and an error answer carries the x-herd-* headers too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { openAICompletion, openAIErrorBody, openAIStreamFrames, scriptedUpstream, status, type ScriptedUpstream } from '../gateway/helpers/gateway-fixtures.ts';
import { startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-records-tests-0123456789';
const ENV = { HOLYSHEEP_API_KEY: 'sk-upstream-hs', HERD_RECORDS_MASTER: MASTER };

interface RequestRow {
  request_id: string;
  status: string;
  http_status: number | null;
  cache_hit: number;
  attempts: number;
}
interface AttemptRow {
  attempt: number;
  outcome: string;
  http_status: number | null;
}

describe('ledger statuses and x-herd-* headers on every answer', () => {
  let relay: MockUpstream;
  let script: ScriptedUpstream;
  let server: HerdServer;
  let client: OpenAI;
  let dir: string;
  let db: string;

  before(async () => {
    script = scriptedUpstream({ okJson: openAICompletion('gpt-4.1', 'Bonjour'), okFrames: openAIStreamFrames('gpt-4.1', ['Bon', 'jour']), errorBody: openAIErrorBody });
    relay = await startMockUpstream(script.handler);
    dir = mkdtempSync(join(tmpdir(), 'herd-answer-records-'));
    db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_RECORDS_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  holysheep: { type: openai, base_url: "${relay.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 3, base_ms: 5, cap_ms: 20 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: holysheep }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
    client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The rows of one request, once the ledger has flushed them. */
  async function rowsOf(count: number): Promise<{ requests: RequestRow[]; attempts: Map<string, AttemptRow[]> }> {
    for (let i = 0; ; i++) {
      const sqlite = new Database(db, { readonly: true });
      try {
        const requests = sqlite.prepare('SELECT request_id, status, http_status, cache_hit, attempts FROM ledger_requests ORDER BY started_at, request_id').all() as RequestRow[];
        if (requests.length >= count || i === 200) {
          assert.equal(requests.length, count, 'one request row per request');
          const attempts = new Map<string, AttemptRow[]>();
          for (const r of requests) {
            attempts.set(
              r.request_id,
              sqlite.prepare('SELECT attempt, outcome, http_status FROM ledger_attempts_all WHERE request_id = ? ORDER BY attempt').all(r.request_id) as AttemptRow[],
            );
          }
          return { requests, attempts };
        }
      } finally {
        sqlite.close();
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const ask = { model: 'gpt-4.1', messages: [{ role: 'user' as const, content: 'hello records' }] };

  it('a completion, a stream, a cache hit and a retried success: 200 on the request row, the upstream status on each attempt', async () => {
    const miss = await client.chat.completions.create({ ...ask, temperature: 0 }).withResponse();
    assert.equal(miss.response.headers.get('x-herd-cache'), 'miss');
    const { data: stream, response: streamed } = await client.chat.completions.create({ ...ask, stream: true }).withResponse();
    for await (const _chunk of stream) {
      /* to the end */
    }
    const hit = await client.chat.completions.create({ ...ask, temperature: 0 }).withResponse();
    assert.equal(hit.response.headers.get('x-herd-cache'), 'hit');
    script.script(status(429));
    const retried = await client.chat.completions.create({ ...ask, messages: [{ role: 'user', content: 'again' }] }).withResponse();
    assert.equal(retried.response.headers.get('x-herd-attempts'), '2');

    const { requests, attempts } = await rowsOf(4);
    // x-request-id names the ledger row, so a client can find its request from what it saw.
    assert.deepEqual(
      [miss.response, streamed, hit.response, retried.response].map((r) => r.headers.get('x-request-id')),
      requests.map((r) => r.request_id),
    );
    assert.deepEqual(
      requests.map((r) => [r.status, r.http_status, r.cache_hit]),
      [
        ['ok', 200, 0],
        ['ok', 200, 0],
        ['ok', 200, 1],
        ['ok', 200, 0],
      ],
    );
    const trail = requests.map((r) => attempts.get(r.request_id)?.map((a) => [a.outcome, a.http_status]));
    assert.deepEqual(trail, [
      [['ok', 200]],
      [['ok', 200]],
      [],
      [
        ['rate_limited', 429],
        ['ok', 200],
      ],
    ]);
  });

  it('a 503 after exhausted retries: 503 on the request row and in the answer, with the x-herd-* headers', async () => {
    script.script(status(503), status(503), status(503));
    const res = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(ask),
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
    });
    assert.equal(res.status, 503);
    const answeredId = res.headers.get('x-request-id');
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'upstream_unavailable');
    assert.equal(res.headers.get('x-herd-model'), 'gpt-4.1');
    assert.equal(res.headers.get('x-herd-provider'), 'holysheep');
    const tried = Number(res.headers.get('x-herd-attempts'));
    assert.ok(tried >= 2, `retried: ${tried} attempts`);
    assert.match(res.headers.get('x-herd-overhead-ms') ?? '', /^\d+\.\d{3}$/);
    script.script();

    const { requests, attempts } = await rowsOf(5);
    const failed = requests.at(-1) as RequestRow;
    assert.deepEqual([failed.status, failed.http_status, failed.attempts], ['UPSTREAM_UNAVAILABLE', 503, tried]);
    assert.equal(failed.request_id, answeredId, 'an error answer carries the id of its ledger row');
    assert.deepEqual(
      attempts.get(failed.request_id)?.map((a) => [a.outcome, a.http_status]),
      Array.from({ length: tried }, () => ['unavailable', 503]),
    );
  });

  it('an error refused before any upstream still says so in its headers', async () => {
    const res = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...ask, model: 'no-such-model' }),
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
    });
    assert.equal(res.status, 404);
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(res.headers.get('x-herd-attempts'), '0');
    assert.equal(res.headers.get('x-herd-provider'), 'none');
    assert.equal(res.headers.get('x-herd-model'), null);
    assert.match(res.headers.get('x-herd-overhead-ms') ?? '', /^\d+\.\d{3}$/);
  });
});
