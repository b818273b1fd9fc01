// POST /v1/embeddings through the real server with the official `openai` SDK as the client, in front
// of local upstreams speaking OpenAI's and Gemini's embeddings wire formats: encodings, dimensions,
// array input, retries and fallbacks, the ledger's rows (dialect included) and their cost, the errors a
// client sees, and an embedding deployment's breaker in GET /health.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { answerGeminiBatchEmbed, answerOpenAIEmbeddings, fakeTokenCount, fakeVector } from '../gateway/helpers/embedding-upstreams.ts';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { postThroughBothEntries } from './post-through-both-entries.ts';

const MASTER = 'sk-herd-master-key-for-the-embeddings-tests-0123456789';
const ENV = { RELAY_API_KEY: 'sk-upstream-relay', GEMINI_API_KEY: 'sk-upstream-gemini', HERD_EMBED_MASTER: MASTER };

interface RequestRow {
  model_requested: string;
  model: string | null;
  provider: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  estimated: number;
  cost_micros: number;
  status: string;
  http_status: number;
  attempts: number;
  request_id: string;
  dialect: string;
  route_rule: string | null;
}

const assertClose = (actual: ArrayLike<number>, expected: ArrayLike<number>) => {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i]! - expected[i]!) < 1e-6, `element ${i}: ${actual[i]} vs ${expected[i]}`);
};

describe('POST /v1/embeddings', () => {
  let relay: MockUpstream;
  let gemini: MockUpstream;
  let server: HerdServer;
  let client: OpenAI;
  let dir: string;
  let db: string;
  /** Statuses the relay's next embeddings requests fail with, in order. */
  let relayFailures: number[] = [];

  before(async () => {
    relay = await startMockUpstream((req, res) => {
      if (req.url.endsWith('/embeddings')) {
        // The `flaky` provider's only model: every request fails, to open its breaker.
        if ((req.body as { model?: unknown }).model === 'always-fails') {
          sendJson(res, 500, { error: { message: 'down', type: 'server_error', param: null, code: null } });
          return;
        }
        const failure = relayFailures.shift();
        if (failure !== undefined) sendJson(res, failure, { error: { message: `failure ${failure}`, type: 'server_error', param: null, code: null } });
        else answerOpenAIEmbeddings(req, res);
        return;
      }
      sendJson(res, 200, openAICompletion('gpt-4.1', 'Bonjour'));
    });
    gemini = await startMockUpstream((req, res) => answerGeminiBatchEmbed(req, res));
    dir = mkdtempSync(join(tmpdir(), 'herd-embeddings-e2e-'));
    db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_EMBED_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  relay: { type: openai, base_url: "${relay.url}/v1", timeout_ms: 2000, retry: { attempts: 2, base_ms: 1, cap_ms: 5 } }
  gemini: { type: gemini, base_url: "${gemini.url}", timeout_ms: 2000, retry: { attempts: 1 } }
  flaky: { type: openai, base_url: "${relay.url}/v1", api_key_env: RELAY_API_KEY, timeout_ms: 2000, retry: { attempts: 1 }, breaker: { min_requests: 2, failure_ratio: 0.5 } }
models:
  text-embedding-3-small:
    kind: embedding
    dimensions: 8
    price: { input: 100, output: 0 }
    deployments: [{ provider: relay }]
    fallbacks: [gemini-embedding-001]
  gemini-embedding-001:
    kind: embedding
    dimensions: 8
    price: { input: 50, output: 0 }
    deployments: [{ provider: gemini }]
  ada:
    kind: embedding
    price: { input: 100, output: 0 }
    deployments: [{ provider: relay, upstream_model: text-embedding-ada-002 }]
  flaky-embedding:
    kind: embedding
    price: { input: 1, output: 0 }
    deployments: [{ provider: flaky, upstream_model: always-fails }]
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: relay }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
    client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    await relay?.close();
    await gemini?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    relay.requests.length = 0;
    gemini.requests.length = 0;
    relayFailures = [];
  });

  async function ledgerRow(requestCount: number): Promise<{ row: RequestRow; attempts: { outcome: string; cost_micros: number; prompt_tokens: number }[] }> {
    for (let i = 0; ; i++) {
      const sqlite = new Database(db, { readonly: true });
      try {
        const rows = sqlite.prepare('SELECT * FROM ledger_requests ORDER BY started_at, request_id').all() as RequestRow[];
        if (rows.length >= requestCount || i === 200) {
          assert.equal(rows.length, requestCount);
          const row = rows.at(-1)!;
          const attempts = sqlite.prepare('SELECT outcome, cost_micros, prompt_tokens FROM ledger_attempts_all WHERE request_id = ? ORDER BY attempt').all(row.request_id) as {
            outcome: string;
            cost_micros: number;
            prompt_tokens: number;
          }[];
          return { row, attempts };
        }
      } finally {
        sqlite.close();
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  let answered = 0;

  it('the SDK default (base64 on the wire) decodes to the upstream vector; the ledger prices input tokens', async () => {
    const { data, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello embedding world' }).withResponse();
    answered++;
    assert.equal(data.object, 'list');
    assert.equal(data.model, 'text-embedding-3-small');
    assert.equal(data.data.length, 1);
    assert.equal(data.data[0]!.object, 'embedding');
    assert.equal(data.data[0]!.index, 0);
    assertClose(data.data[0]!.embedding, fakeVector('hello embedding world', 8));
    assert.deepEqual(data.usage, { prompt_tokens: 3, total_tokens: 3 });
    assert.equal(response.headers.get('x-herd-model'), 'text-embedding-3-small');
    assert.equal(response.headers.get('x-herd-provider'), 'relay');
    assert.equal(response.headers.get('x-herd-attempts'), '1');
    const upstream = relay.requests[0]!;
    assert.equal(upstream.url, '/v1/embeddings');
    assert.equal(upstream.headers.authorization, 'Bearer sk-upstream-relay');
    assert.deepEqual(upstream.body, { model: 'text-embedding-3-small', input: ['hello embedding world'], encoding_format: 'base64' });

    const { row, attempts } = await ledgerRow(answered);
    assert.equal(row.model, 'text-embedding-3-small');
    assert.equal(row.provider, 'relay');
    assert.equal(row.status, 'ok');
    assert.equal(row.http_status, 200);
    assert.equal(row.dialect, 'openai-embeddings');
    assert.equal(row.route_rule, 'model:text-embedding-3-small');
    assert.equal(row.prompt_tokens, 3);
    assert.equal(row.completion_tokens, 0);
    assert.equal(row.cost_micros, 300, '3 tokens at $100 per million');
    assert.deepEqual(attempts, [{ outcome: 'ok', cost_micros: 300, prompt_tokens: 3 }]);
  });

  it('encoding_format float answers arrays of numbers; base64 answers little-endian float32', async () => {
    const floats = await fetch(`${server.httpUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'one', encoding_format: 'float' }),
    });
    answered++;
    assert.equal(floats.status, 200);
    const body = (await floats.json()) as { data: { embedding: unknown }[] };
    assert.ok(Array.isArray(body.data[0]!.embedding));
    assertClose(body.data[0]!.embedding as number[], fakeVector('one', 8));

    const sdkFloat = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'one', encoding_format: 'float' });
    answered++;
    assertClose(sdkFloat.data[0]!.embedding, fakeVector('one', 8));

    const b64 = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'one', encoding_format: 'base64' });
    answered++;
    const text = b64.data[0]!.embedding as unknown as string;
    assert.equal(typeof text, 'string');
    const bytes = Buffer.from(text, 'base64');
    assert.equal(bytes.length, 32);
    assertClose(
      Array.from({ length: 8 }, (_, i) => bytes.readFloatLE(i * 4)),
      fakeVector('one', 8),
    );
  });

  it('array input answers one vector per text, in order; dimensions is forwarded and honoured', async () => {
    const texts = ['alpha', 'beta gamma', 'delta epsilon zeta'];
    const answer = await client.embeddings.create({ model: 'text-embedding-3-small', input: texts, dimensions: 4 });
    answered++;
    assert.deepEqual(
      answer.data.map((d) => d.index),
      [0, 1, 2],
    );
    for (const [i, t] of texts.entries()) assertClose(answer.data[i]!.embedding, fakeVector(t, 4));
    assert.equal(
      answer.usage.prompt_tokens,
      texts.reduce((n, t) => n + fakeTokenCount(t), 0),
    );
    assert.deepEqual(relay.requests[0]!.body, { model: 'text-embedding-3-small', input: texts, encoding_format: 'base64', dimensions: 4 });
  });

  it('a Gemini model goes to :batchEmbedContents; Herd counts the tokens (Gemini reports none)', async () => {
    const answer = await client.embeddings.create({ model: 'gemini-embedding-001', input: ['hello', 'world'], dimensions: 6 });
    answered++;
    assertClose(answer.data[0]!.embedding, fakeVector('hello', 6));
    assertClose(answer.data[1]!.embedding, fakeVector('world', 6));
    const upstream = gemini.requests[0]!;
    assert.equal(upstream.url, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(upstream.headers['x-goog-api-key'], 'sk-upstream-gemini');
    assert.deepEqual(upstream.body, {
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello' }] }, outputDimensionality: 6 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'world' }] }, outputDimensionality: 6 },
      ],
    });
    assert.equal(answer.usage.prompt_tokens, 2);
    const { row } = await ledgerRow(answered);
    assert.equal(row.provider, 'gemini');
    assert.equal(row.estimated, 1);
    assert.equal(row.cost_micros, 100, '2 tokens at $50 per million');
  });

  it('an upstream 500 is retried; when the model keeps failing its fallback answers, each attempt on record', async () => {
    relayFailures = [500];
    const retried = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'retry me' }).withResponse();
    answered++;
    assert.equal(retried.response.headers.get('x-herd-attempts'), '2');
    assert.equal(retried.data.model, 'text-embedding-3-small');

    relayFailures = [500, 500];
    const fellBack = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'fall back' }).withResponse();
    answered++;
    assert.equal(fellBack.response.headers.get('x-herd-model'), 'gemini-embedding-001');
    assert.equal(fellBack.response.headers.get('x-herd-attempts'), '3');
    assert.equal(fellBack.data.model, 'gemini-embedding-001');
    assertClose(fellBack.data.data[0]!.embedding, fakeVector('fall back', 8));
    const { row, attempts } = await ledgerRow(answered);
    assert.equal(row.model_requested, 'text-embedding-3-small');
    assert.equal(row.model, 'gemini-embedding-001');
    assert.equal(row.attempts, 3);
    assert.deepEqual(
      attempts.map((a) => a.outcome),
      ['server_error', 'server_error', 'ok'],
    );
    assert.equal(attempts[2]!.cost_micros, row.cost_micros);
  });

  it('refuses what it cannot serve with OpenAI-shaped errors', async () => {
    const post = (body: unknown, key = MASTER) =>
      fetch(`${server.httpUrl}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const expectError = async (res: Response, status: number, param: string | null, pattern: RegExp) => {
      assert.equal(res.status, status);
      const body = (await res.json()) as { error: { message: string; type: string; param: string | null } };
      assert.equal(body.error.param, param);
      assert.match(body.error.message, pattern);
    };
    await expectError(await post({ model: 'text-embedding-3-small', input: 'x' }, 'sk-wrong'), 401, null, /key/i);
    await expectError(await post({ model: 'no-such-model', input: 'x' }), 404, 'model', /does not exist/);
    await expectError(await post({ model: 'gpt-4.1', input: 'x' }), 400, 'model', /chat model: use POST \/v1\/chat\/completions/);
    await expectError(await post({ model: 'ada', input: 'x', dimensions: 4 }), 400, 'dimensions', /does not support 'dimensions'/);
    await expectError(await post({ model: 'text-embedding-3-small', input: 'x', dimensions: 9 }), 400, 'dimensions', /at most 8/);
    await expectError(await post({ model: 'text-embedding-3-small', input: [1, 2, 3] }), 400, 'input', /token ids is not supported/);
    await expectError(await post({ model: 'text-embedding-3-small', input: '' }), 400, 'input', /empty/);
    await expectError(await post({ model: 'text-embedding-3-small', input: 'x', encoding_format: 'int8' }), 400, 'encoding_format', /float' or 'base64/);
    await assert.rejects(client.embeddings.create({ model: 'gpt-4.1', input: 'x' }), (err: unknown) => err instanceof OpenAI.BadRequestError);

    const chat = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await expectError(chat, 400, 'model', /embedding model: use POST \/v1\/embeddings/);
    assert.equal(relay.requests.length, 0, 'nothing refused reached an upstream');
  });

  it('a plain body (the fast path) and a gzipped or chunked one (Fastify) get the same answer, errors included', async () => {
    const headers = { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' };
    const cases: Array<{ headers: Record<string, string>; body: unknown; status: number }> = [
      { headers, body: { model: 'text-embedding-3-small', input: ['one', 'two'], encoding_format: 'float' }, status: 200 },
      { headers, body: { model: 'text-embedding-3-small', input: 'one' }, status: 200 },
      { headers: { ...headers, authorization: 'Bearer sk-wrong' }, body: { model: 'text-embedding-3-small', input: 'x' }, status: 401 },
      { headers, body: { model: 'no-such-model', input: 'x' }, status: 404 },
    ];
    for (const c of cases) {
      const [plain, ...others] = await postThroughBothEntries(`${server.httpUrl}/v1/embeddings`, c.headers, JSON.stringify(c.body));
      assert.equal(plain!.status, c.status, plain!.text);
      assert.equal(plain!.contentType, 'application/json');
      for (const other of others) {
        assert.equal(other.status, plain!.status, `${other.entry}: ${other.text}`);
        assert.equal(other.contentType, plain!.contentType, other.entry);
        assert.equal(other.text, plain!.text, other.entry);
      }
    }
  });

  it("an embedding deployment's breaker is the one GET /health shows: it opens after its failures", async () => {
    type Breaker = { key: string; models: string[]; breaker: string; requests: number; failures: number };
    const breakers = async () => ((await (await fetch(`${server.httpUrl}/health`)).json()) as { breakers: Breaker[] }).breakers;
    const before = await breakers();
    // Earlier tests' answers count in the breaker /health reads: one registry for every flow.
    const used = before.find((b) => b.key === 'relay/text-embedding-3-small');
    assert.ok(used !== undefined && used.requests > 0, JSON.stringify(used));
    assert.deepEqual(
      before.find((b) => b.key === 'flaky/always-fails'),
      {
        key: 'flaky/always-fails',
        provider: 'flaky',
        upstreamModel: 'always-fails',
        models: ['flaky-embedding'],
        breaker: 'closed',
        requests: 0,
        failures: 0,
        inFlight: 0,
        latencyMs: {},
      },
    );

    for (let i = 0; i < 2; i++) await assert.rejects(client.embeddings.create({ model: 'flaky-embedding', input: 'x' }), (err: unknown) => err instanceof OpenAI.APIError);
    assert.equal(relay.requests.length, 2);
    const flaky = (await breakers()).find((b) => b.key === 'flaky/always-fails');
    assert.equal(flaky?.breaker, 'open');
    assert.equal(flaky?.failures, 2);
    // Open: the next request is refused without reaching the upstream.
    await assert.rejects(client.embeddings.create({ model: 'flaky-embedding', input: 'x' }), (err: unknown) => err instanceof OpenAI.APIError);
    assert.equal(relay.requests.length, 2);
    // Each failure is settled on the flow's one path: an error row in the embeddings dialect, its route on record.
    for (let i = 0; ; i++) {
      const sqlite = new Database(db, { readonly: true });
      const rows = sqlite
        .prepare("SELECT status, http_status, dialect, route_rule FROM ledger_requests WHERE model_requested = 'flaky-embedding' ORDER BY started_at")
        .all() as Pick<RequestRow, 'status' | 'http_status' | 'dialect' | 'route_rule'>[];
      sqlite.close();
      if (rows.length === 3 || i === 200) {
        assert.equal(rows.length, 3);
        for (const row of rows) assert.deepEqual([row.dialect, row.route_rule], ['openai-embeddings', 'model:flaky-embedding']);
        assert.ok(
          rows.every((row) => row.status !== 'ok' && row.http_status >= 500),
          JSON.stringify(rows),
        );
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  });
});
