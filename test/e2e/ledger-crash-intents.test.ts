// Attempt intents survive SIGKILL: the real server (a child process) sends calls to a fake upstream that
// answers some and holds others, and is killed while calls are in flight; after a restart every upstream
// call the fake saw has exactly one attempt row (`interrupted` where the process died mid-call, `ok` for
// answered ones), every answered request its one row, and no reservation stays open. SQLite and PostgreSQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { TestKeys } from '../helpers/test-keys.ts';
import { skipWithoutPostgres } from '../gateway/billing/pg-test-schema.ts';
import { createTestDatabase } from './create-test-database.ts';
import { askMarker, markerOf, startMarkerUpstream } from './marker-upstream.ts';
import { killIfRunning, spawnHerd, stopHerd, type HerdProcess } from './spawn-herd.ts';

const MASTER = 'sk-herd-intents-test-master-0000000000000000000000';
/** Markers from here on are held by the upstream: in flight when the server dies. */
const HELD_FROM = 100_000;

interface LedgerDump {
  requests: { requestId: string; status: string; tokens: number }[];
  attempts: { requestId: string; attempt: number; outcome: string }[];
  openReservations: number;
}

interface Backend {
  /** herd.yaml's billing section. */
  billing: string;
  /** The spool folder, relative to herd.yaml's folder. */
  spool: string;
  read(): Promise<LedgerDump>;
}

async function runCrash(t: { after: (fn: () => unknown) => void }, dir: string, backend: Backend): Promise<void> {
  const upstream = await startMarkerUpstream((marker) => marker >= HELD_FROM);
  t.after(() => upstream.close());
  const config = join(dir, 'herd.yaml');
  writeFileSync(
    config,
    `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: INTENTS_MASTER, db: ./keys.db }
billing: ${backend.billing}
providers:
  fake: { type: openai, base_url: "${upstream.url}/v1", api_key_env: INTENTS_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: fake }]
`,
  );
  const store = await TestKeys.open(`sqlite:${join(dir, 'keys.db')}`);
  const { secret: budgeted } = await store.create({ name: 'with budget', allowedModels: '*', budgetDayMicros: 1_000_000_000_000 });
  await store.close();
  const env = { INTENTS_MASTER: MASTER, INTENTS_UPSTREAM_KEY: 'sk-upstream-secret' };
  let herd: HerdProcess = await spawnHerd(config, env);
  t.after(() => killIfRunning(herd));

  // 4 clients of answered calls in a closed loop, and a held call every 20 ms (4 in all), until the kill.
  const answered: number[] = [];
  const stop = new AbortController();
  let next = 0;
  const client = async () => {
    while (!stop.signal.aborted) {
      const marker = next++;
      const answer = await askMarker(herd.url, marker, marker % 2 === 1 ? budgeted : MASTER, marker % 3 === 0, stop.signal);
      if (answer.complete) answered.push(marker);
    }
  };
  const clients = Array.from({ length: 4 }, client);
  const holding: Promise<unknown>[] = [];
  let held = HELD_FROM;
  const feeder = setInterval(() => {
    // A few: each holds an admission slot on the upstream model until the kill.
    if (held >= HELD_FROM + 4) return;
    const marker = held++;
    holding.push(askMarker(herd.url, marker, marker % 2 === 1 ? budgeted : MASTER, marker % 3 === 0, stop.signal));
  }, 20);
  // The kill lands at a moment that varies from run to run.
  const target = 20 + (Date.now() % 30);
  for (let i = 0; i < 1000 && (answered.length < target || upstream.held().length < 4); i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(await stopHerd(herd, 'SIGKILL'), 'SIGKILL');
  clearInterval(feeder);
  stop.abort();
  await Promise.all([...clients, ...holding]);
  const heldCalls = upstream.held().length;
  assert.ok(answered.length >= 20 && heldCalls === 4, `the load ran: ${answered.length} answered, ${heldCalls} held at the kill`);
  assert.ok(
    readdirSync(join(dir, backend.spool)).some((f) => f.endsWith('.jsonl')),
    'the dead process left its spool',
  );

  herd = await spawnHerd(config, env);
  assert.ok((await askMarker(herd.url, next++, budgeted, true)).complete, 'the restarted server answers a budgeted key');
  assert.equal(await stopHerd(herd, 'SIGTERM'), null);
  assert.deepEqual(
    readdirSync(join(dir, backend.spool)).filter((f) => f.endsWith('.jsonl')),
    [],
    'nothing left spooled',
  );

  const dump = await backend.read();
  const calls = upstream.requests.length;
  // Every upstream call the fake saw has its attempt row (one attempt per request here: no failure to retry).
  // The intent is written just before the call leaves, so a client whose call was between the two at the kill
  // leaves an interrupted row the upstream never saw: at most one per client loop, never an ok one.
  const extra = dump.attempts.length - calls;
  assert.ok(extra >= 0 && extra <= 4, `${dump.attempts.length} attempt rows for ${calls} upstream calls`);
  assert.equal(new Set(dump.attempts.map((a) => a.requestId)).size, dump.attempts.length, 'no request has two attempt rows');
  assert.equal(dump.requests.length, dump.attempts.length, 'one request row per attempt');
  const interrupted = dump.attempts.filter((a) => a.outcome === 'interrupted');
  const ok = dump.attempts.filter((a) => a.outcome === 'ok');
  assert.equal(ok.length + interrupted.length, dump.attempts.length, 'every attempt is ok or interrupted');
  // The held calls never came back: interrupted, each of them; a call answered upstream but killed before its rows
  // were spooled is interrupted too, and so is each extra row above.
  assert.ok(interrupted.length >= heldCalls + extra, `${interrupted.length} interrupted attempts, ${heldCalls} calls held, ${extra} never sent`);
  const statusOf = new Map(dump.requests.map((r) => [r.requestId, r.status]));
  for (const a of interrupted) assert.equal(statusOf.get(a.requestId), 'interrupted', `request ${a.requestId}: an interrupted row`);
  // Every answer the client received in full: its row, once, ok.
  const okMarkers = dump.requests.filter((r) => r.status === 'ok').map((r) => r.tokens - 1000);
  const missing = answered.filter((m) => okMarkers.filter((x) => x === m).length !== 1);
  assert.deepEqual(missing, [], `answered requests without exactly one row (of ${answered.length})`);
  assert.equal(upstream.requests.filter((r) => markerOf(r) >= HELD_FROM).length, heldCalls);
  assert.equal(dump.openReservations, 0, 'no reservation left open');
}

test('SIGKILL with upstream calls in flight, SQLite ledger: every upstream call has exactly one attempt row after the restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-intents-sqlite-'));
  await runCrash(t, dir, {
    billing: '{ ledger: "sqlite:./ledger.db", stale_reservation_minutes: 0.0001, flush_interval_ms: 600000 }',
    spool: 'ledger.db.spool',
    async read() {
      const db = new Database(join(dir, 'ledger.db'), { readonly: true });
      try {
        return {
          requests: db.prepare('SELECT request_id AS requestId, status, completion_tokens AS tokens FROM ledger_requests').all() as LedgerDump['requests'],
          attempts: db.prepare('SELECT request_id AS requestId, attempt, outcome FROM ledger_attempts_all').all() as LedgerDump['attempts'],
          openReservations: (db.prepare("SELECT COUNT(*) AS n FROM ledger_reservations WHERE state = 'open'").get() as { n: number }).n,
        };
      } finally {
        db.close();
      }
    },
  });
});

test('SIGKILL with upstream calls in flight, PostgreSQL ledger: every upstream call has exactly one attempt row after the restart', {
  skip: skipWithoutPostgres('ledger-crash-intents.test.ts (PostgreSQL)'),
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-intents-pg-'));
  const database = await createTestDatabase('herd_intents');
  t.after(() => database.drop());
  await runCrash(t, dir, {
    billing: `{ currency: USD, ledger: "${database.url}", spool_dir: ./spool, stale_reservation_minutes: 0.0001, flush_interval_ms: 600000 }`,
    spool: 'spool',
    async read() {
      const c = new pg.Client({ connectionString: database.url });
      await c.connect();
      try {
        const requests = (
          await c.query<{ requestId: string; status: string; tokens: number }>('SELECT request_id AS "requestId", status, completion_tokens AS tokens FROM ledger_requests')
        ).rows;
        const attempts = (await c.query<{ requestId: string; attempt: number; outcome: string }>('SELECT request_id AS "requestId", attempt, outcome FROM ledger_attempts_all'))
          .rows;
        const open = (await c.query<{ n: string }>("SELECT COUNT(*) AS n FROM ledger_reservations WHERE state = 'open'")).rows[0]?.n;
        return { requests, attempts, openReservations: Number(open) };
      } finally {
        await c.end();
      }
    },
  });
});
