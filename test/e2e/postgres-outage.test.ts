// PostgreSQL unreachable under a serving gateway: the real server writes its ledger through a TCP proxy the
// test cuts (a network gone without a reset) and restores. Answers keep coming, /health and the metrics say
// the ledger is behind, and after the restore every row is in the database exactly once, in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startHerd } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { skipWithoutPostgres } from '../gateway/billing/pg-test-schema.ts';
import { sendJson, startMockUpstream, type RecordedRequest } from '../gateway/helpers/mock-upstream.ts';
import { startTcpFaultProxy, targetOf, throughProxy } from '../helpers/tcp-fault-proxy.ts';
import { parseExposition, sampleValue } from '../metrics/parse-exposition.ts';
import { createTestDatabase } from './create-test-database.ts';

const skip = skipWithoutPostgres('postgres-outage.test.ts');
const MASTER = 'sk-herd-outage-test-master-00000000000000000000000';
const markerOf = (req: RecordedRequest) => Number(/marker (\d+)/.exec(JSON.stringify(req.body))?.[1] ?? -1);

async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

test('PostgreSQL cut off: answers keep coming, /health says behind, the rows arrive once and in order after', { skip }, async (t) => {
  const upstream = await startMockUpstream(async (req, res) => {
    const marker = markerOf(req);
    const usage = { prompt_tokens: 10, completion_tokens: 1000 + marker, total_tokens: 1010 + marker };
    const body = req.body as { stream?: boolean };
    if (!body.stream) {
      sendJson(res, 200, {
        id: `c-${marker}`,
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4.1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = { id: `c-${marker}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1' };
    res.end(
      `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] })}\n\ndata: ${JSON.stringify({ ...chunk, choices: [], usage })}\n\ndata: [DONE]\n\n`,
    );
  });
  t.after(() => upstream.close());
  const database = await createTestDatabase('herd_outage');
  t.after(() => database.drop());
  const proxy = await startTcpFaultProxy(targetOf(database.url, 5432));
  t.after(() => proxy.close());

  const dir = mkdtempSync(join(tmpdir(), 'herd-pg-outage-'));
  const store = await TestKeys.open(join(dir, 'keys.db'));
  const budgeted = (await store.create({ name: 'with budget', allowedModels: '*', budgetDayMicros: 1_000_000_000_000 })).secret;
  await store.close();
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: OUTAGE_MASTER, db: ./keys.db }
billing: { currency: USD, ledger: "${throughProxy(database.url, proxy)}", spool_dir: ./spool, flush_interval_ms: 50 }
providers:
  fake: { type: openai, base_url: "${upstream.url}/v1", api_key_env: OUTAGE_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: fake }]
`,
    join(dir, 'herd.yaml'),
  );
  const lines: string[] = [];
  const server = await startHerd(config, { env: { OUTAGE_MASTER: MASTER, OUTAGE_UPSTREAM_KEY: 'sk-upstream' }, log: (line) => lines.push(line) });
  let closed = false;
  t.after(async () => {
    if (!closed) await server.close();
  });

  const ask = async (marker: number, secret = MASTER) => {
    const res = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: `marker ${marker}` }], max_tokens: 8, ...(marker % 2 === 0 ? { stream: true } : {}) }),
    });
    const text = await res.text();
    return { status: res.status, complete: res.status === 200 && (marker % 2 === 0 ? text.includes('data: [DONE]') : text.includes('"choices"')), text };
  };
  const health = async () => (await (await fetch(`${server.httpUrl}/health`)).json()) as { ledger?: { state: string; behind_rows: number; behind_seconds: number } };
  const reader = new pg.Client({ connectionString: database.url });
  reader.on('error', () => undefined); // the database is dropped (FORCE) by an earlier after-hook
  await reader.connect();
  t.after(() => reader.end());
  const rowsInDatabase = async () =>
    (await reader.query<{ tokens: number; tx: string }>("SELECT completion_tokens AS tokens, xmin::text AS tx FROM ledger_requests WHERE status = 'ok'")).rows.map((r) => ({
      marker: r.tokens - 1000,
      tx: Number(r.tx),
    }));

  let marker = 0;
  for (; marker < 4; marker++) assert.ok((await ask(marker)).complete, `request ${marker} before the cut`);
  await until('the first rows in the database', async () => ((await rowsInDatabase()).length === 4 ? true : undefined));
  assert.equal((await health()).ledger?.state, 'ok');

  proxy.cut('blackhole');
  const during: number[] = [];
  for (; marker < 14; marker++) {
    const answer = await ask(marker);
    assert.ok(answer.complete, `request ${marker} during the outage is answered: ${answer.status} ${answer.text.slice(0, 200)}`);
    during.push(marker);
  }
  // A key with a budget cannot be checked against its spend without the database: refused, and quickly.
  const refused = await ask(999, budgeted);
  assert.equal(refused.status, 503, refused.text);
  const behind = await until('/health says behind', async () => {
    const h = await health();
    return h.ledger?.state === 'behind' ? h.ledger : undefined;
  });
  assert.ok(behind.behind_rows >= during.length, `behind by ${behind.behind_rows} rows`);
  assert.ok(behind.behind_seconds > 0);
  const metrics = parseExposition(await (await fetch(`${server.metricsUrl}/metrics`)).text());
  assert.ok((sampleValue(metrics, 'herd_gateway_ledger_behind_rows', {}) ?? 0) >= during.length);
  assert.ok((sampleValue(metrics, 'herd_gateway_ledger_behind_seconds', {}) ?? 0) > 0);
  const spooled = readdirSync(join(dir, 'spool')).filter((f) => f.endsWith('.jsonl'));
  assert.ok(spooled.length >= 1, 'the rows wait in the local spool');

  proxy.restore();
  for (; marker < 18; marker++) assert.ok((await ask(marker)).complete, `request ${marker} after the restore`);
  await until('the ledger caught up', async () => {
    const h = await health();
    return h.ledger?.state === 'ok' && h.ledger.behind_rows === 0 ? true : undefined;
  });

  const rows = await rowsInDatabase();
  const markers = rows.map((r) => r.marker).sort((a, b) => a - b);
  assert.deepEqual(
    markers,
    Array.from({ length: 18 }, (_, i) => i),
    'every answered request exactly once',
  );
  // Committed in the order they were answered: a later request never in an earlier transaction.
  const txOf = new Map(rows.map((r) => [r.marker, r.tx]));
  for (let m = 1; m < 18; m++) assert.ok((txOf.get(m) as number) >= (txOf.get(m - 1) as number), `request ${m} committed after ${m - 1}`);
  const refusedRows = (await reader.query<{ status: string }>("SELECT status FROM ledger_requests WHERE status <> 'ok'")).rows;
  assert.deepEqual(refusedRows, [{ status: 'UNAVAILABLE' }], 'the refused request is recorded too');
  const attempts = (await reader.query<{ n: string }>('SELECT COUNT(*) AS n FROM ledger_attempts_all')).rows[0]?.n;
  assert.equal(Number(attempts), 18, 'one attempt row per upstream call');
  assert.equal(upstream.requests.filter((r) => markerOf(r) !== 999).length, 18);

  await server.close();
  closed = true;
  assert.deepEqual(
    readdirSync(join(dir, 'spool')).filter((f) => f.endsWith('.jsonl')),
    [],
    'a clean stop leaves nothing spooled',
  );
  assert.ok(!lines.join('\n').includes('sk-upstream'), 'no secret in the log');
});
