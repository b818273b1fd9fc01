// PostgreSQL unreachable when Herd starts (a TCP proxy in front of the real server, refusing): Herd starts
// and answers with the ledger behind, /health and the metrics say so from the first second, and once the
// database answers the spooled rows arrive exactly once and in order; a process killed before it ever
// reached the database leaves its spool (and its calls in flight) to the next start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startHerd } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { skipWithoutPostgres } from '../gateway/billing/pg-test-schema.ts';
import { startTcpFaultProxy, targetOf, throughProxy } from '../helpers/tcp-fault-proxy.ts';
import { parseExposition, sampleValue } from '../metrics/parse-exposition.ts';
import { createTestDatabase } from './create-test-database.ts';
import { askMarker, markerOf, startMarkerUpstream } from './marker-upstream.ts';
import { killIfRunning, spawnHerd, stopHerd, type HerdProcess } from './spawn-herd.ts';

const skip = skipWithoutPostgres('postgres-start-down.test.ts');
const MASTER = 'sk-herd-startdown-test-master-000000000000000000000';
/** In the URL only: the test server trusts local connections, so it is never checked, and must never be printed. */
const PASSWORD = 'hunter2-db-secret';

interface LedgerHealthBody {
  state: string;
  behind_rows: number;
  behind_seconds: number;
  database_unreachable?: string;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

const ledgerHealth = async (url: string) => ((await (await fetch(`${url}/health`)).json()) as { ledger: LedgerHealthBody }).ledger;

function withPassword(url: string): string {
  const u = new URL(url);
  u.password = PASSWORD;
  return u.toString();
}

async function readRows(url: string): Promise<{ requests: { marker: number; status: string; tx: number }[]; attempts: { outcome: string; n: number }[] }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const requests = (await c.query<{ tokens: number; status: string; tx: string }>('SELECT completion_tokens AS tokens, status, xmin::text AS tx FROM ledger_requests')).rows.map(
      (r) => ({
        marker: r.tokens - 1000,
        status: r.status,
        tx: Number(r.tx),
      }),
    );
    const attempts = (await c.query<{ outcome: string; n: string }>('SELECT outcome, COUNT(*) AS n FROM ledger_attempts_all GROUP BY outcome ORDER BY outcome')).rows.map((r) => ({
      outcome: r.outcome,
      n: Number(r.n),
    }));
    return { requests, attempts };
  } finally {
    await c.end();
  }
}

test('PostgreSQL unreachable at start-up: Herd starts and answers, the ledger is behind from the first second, the rows arrive once and in order when it answers', {
  skip,
}, async (t) => {
  const upstream = await startMarkerUpstream();
  t.after(() => upstream.close());
  const database = await createTestDatabase('herd_startdown');
  t.after(() => database.drop());
  const proxy = await startTcpFaultProxy(targetOf(database.url, 5432));
  t.after(() => proxy.close());
  proxy.cut('refuse');

  const dir = mkdtempSync(join(tmpdir(), 'herd-pg-startdown-'));
  const store = await TestKeys.open(join(dir, 'keys.db'));
  const budgeted = (await store.create({ name: 'with budget', allowedModels: '*', budgetDayMicros: 1_000_000_000_000 })).secret;
  await store.close();
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: STARTDOWN_MASTER, db: ./keys.db }
billing: { currency: USD, ledger: "${withPassword(throughProxy(database.url, proxy))}", spool_dir: ./spool, flush_interval_ms: 50 }
providers:
  fake: { type: openai, base_url: "${upstream.url}/v1", api_key_env: STARTDOWN_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: fake }]
`,
    join(dir, 'herd.yaml'),
  );
  const lines: string[] = [];
  const startedAt = Date.now();
  const server = await startHerd(config, { env: { STARTDOWN_MASTER: MASTER, STARTDOWN_UPSTREAM_KEY: 'sk-upstream' }, log: (line) => lines.push(line) });
  let closed = false;
  t.after(async () => {
    if (!closed) await server.close();
  });
  assert.ok(Date.now() - startedAt < 5000, 'the start does not wait for the database');
  const log = () => lines.join('\n');
  assert.match(
    log(),
    /ledger: PostgreSQL ledger postgres:\/\/postgres@127\.0\.0\.1:\d+\/herd_startdown_\S+ is unreachable \(.*ECONNRE.*\); serving anyway: rows spool to \S+spool/,
  );

  // From the first second, before any row: behind, and why.
  const first = await ledgerHealth(server.httpUrl);
  assert.equal(first.state, 'behind');
  assert.equal(first.behind_rows, 0);
  assert.match(first.database_unreachable ?? '', /ECONNRE/);
  const scrape = async () => parseExposition(await (await fetch(`${server.metricsUrl}/metrics`)).text());
  assert.equal(sampleValue(await scrape(), 'herd_gateway_ledger_ready', {}), 0);

  const answered: number[] = [];
  for (let marker = 0; marker < 10; marker++) {
    const answer = await askMarker(server.httpUrl, marker, MASTER, marker % 2 === 0);
    assert.ok(answer.complete, `request ${marker} is answered: ${answer.status} ${answer.text.slice(0, 200)}`);
    answered.push(marker);
  }
  // The outage rule: a budget cannot be checked without the database, so its key is refused, quickly.
  const refused = await askMarker(server.httpUrl, 999, budgeted, false);
  assert.equal(refused.status, 503, refused.text);
  const behind = await ledgerHealth(server.httpUrl);
  assert.equal(behind.state, 'behind');
  assert.ok(behind.behind_rows >= 20, `behind by ${behind.behind_rows} rows (a request and an attempt row each)`);
  assert.ok((sampleValue(await scrape(), 'herd_gateway_ledger_behind_rows', {}) ?? 0) >= 20);
  assert.ok(
    readdirSync(join(dir, 'spool')).some((f) => f.endsWith('.jsonl')),
    'the rows wait in the local spool',
  );

  proxy.restore();
  await until('the ledger caught up', async () => {
    const h = await ledgerHealth(server.httpUrl);
    return h.state === 'ok' && h.behind_rows === 0 && h.database_unreachable === undefined ? true : undefined;
  });
  assert.equal(sampleValue(await scrape(), 'herd_gateway_ledger_ready', {}), 1);
  assert.match(log(), /ledger: PostgreSQL ledger \S+ reached after \d+ attempts/);
  // The budget can be checked again.
  assert.equal((await askMarker(server.httpUrl, 10, budgeted, true)).status, 200);
  answered.push(10);
  await server.close();
  closed = true;

  const { requests, attempts } = await readRows(database.url);
  const ok = requests.filter((r) => r.status === 'ok');
  assert.deepEqual(
    ok.map((r) => r.marker).sort((a, b) => a - b),
    answered,
    'every answered request exactly once',
  );
  const txOf = new Map(ok.map((r) => [r.marker, r.tx]));
  for (let m = 1; m < answered.length; m++) assert.ok((txOf.get(m) as number) >= (txOf.get(m - 1) as number), `request ${m} committed after ${m - 1}`);
  assert.deepEqual(
    requests.filter((r) => r.status !== 'ok').map((r) => r.status),
    ['UNAVAILABLE'],
    'the refused request is recorded too',
  );
  assert.deepEqual(attempts, [{ outcome: 'ok', n: answered.length }], 'one attempt row per upstream call');
  assert.equal(upstream.requests.length, answered.length);
  assert.deepEqual(
    readdirSync(join(dir, 'spool')).filter((f) => f.endsWith('.jsonl')),
    [],
    'a clean stop leaves nothing spooled',
  );
  assert.ok(!log().includes(PASSWORD) && !log().includes('sk-upstream'), 'no secret in the log');
});

test('killed (SIGKILL) before it ever reached PostgreSQL: the next start, with the database back, writes the dead spool exactly once, calls in flight as interrupted', {
  skip,
}, async (t) => {
  // Markers from 100 on are held by the upstream: calls in flight at the kill.
  const upstream = await startMarkerUpstream((marker) => marker >= 100);
  t.after(() => upstream.close());
  const database = await createTestDatabase('herd_startkill');
  t.after(() => database.drop());
  const proxy = await startTcpFaultProxy(targetOf(database.url, 5432));
  t.after(() => proxy.close());
  proxy.cut('refuse');

  const dir = mkdtempSync(join(tmpdir(), 'herd-pg-startkill-'));
  const config = join(dir, 'herd.yaml');
  writeFileSync(
    config,
    `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: STARTKILL_MASTER, db: ./keys.db }
billing: { currency: USD, ledger: "${withPassword(throughProxy(database.url, proxy))}", spool_dir: ./spool, flush_interval_ms: 50 }
providers:
  fake: { type: openai, base_url: "${upstream.url}/v1", api_key_env: STARTKILL_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: fake }]
`,
  );
  const env = { STARTKILL_MASTER: MASTER, STARTKILL_UPSTREAM_KEY: 'sk-upstream' };
  let herd: HerdProcess | undefined = await spawnHerd(config, env);
  t.after(() => killIfRunning(herd));
  for (let marker = 0; marker < 6; marker++) assert.ok((await askMarker(herd.url, marker, MASTER, marker % 2 === 0)).complete, `request ${marker}`);
  const inFlight = new AbortController();
  const pending = [100, 101, 102].map((marker) => askMarker((herd as HerdProcess).url, marker, MASTER, marker % 2 === 0, inFlight.signal));
  await until('the held calls reached the upstream', async () => (upstream.held().length === 3 ? true : undefined));
  assert.equal((await ledgerHealth(herd.url)).state, 'behind');
  assert.equal(await stopHerd(herd, 'SIGKILL'), 'SIGKILL');
  inFlight.abort();
  await Promise.all(pending);
  const deadOutput = herd.output();
  assert.ok(
    readdirSync(join(dir, 'spool')).some((f) => f.endsWith('.jsonl')),
    'the dead process left its spool',
  );

  proxy.restore();
  herd = await spawnHerd(config, env);
  // The replay is part of the start-up, which now reaches the database at once.
  assert.equal((await ledgerHealth(herd.url)).database_unreachable, undefined);
  assert.ok((await askMarker(herd.url, 6, MASTER, false)).complete);
  const restartedOutput = () => (herd as HerdProcess).output();
  assert.equal(await stopHerd(herd, 'SIGTERM'), null);
  assert.deepEqual(
    readdirSync(join(dir, 'spool')).filter((f) => f.endsWith('.jsonl')),
    [],
    'nothing left spooled',
  );

  const { requests, attempts } = await readRows(database.url);
  assert.deepEqual(
    requests
      .filter((r) => r.status === 'ok')
      .map((r) => r.marker)
      .sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6],
    'every answered request exactly once',
  );
  // Interrupted rows carry no tokens: their marker reads as -1000.
  assert.deepEqual(
    requests.filter((r) => r.status !== 'ok').map((r) => r.status),
    ['interrupted', 'interrupted', 'interrupted'],
    'the calls in flight at the kill',
  );
  assert.deepEqual(attempts, [
    { outcome: 'interrupted', n: 3 },
    { outcome: 'ok', n: 7 },
  ]);
  assert.equal(upstream.requests.length, 10, 'one attempt row per upstream call');
  assert.deepEqual(upstream.requests.map(markerOf).filter((m) => m >= 100).length, 3);
  assert.ok(!deadOutput.includes(PASSWORD) && !restartedOutput().includes(PASSWORD), 'no password in the output');
});
