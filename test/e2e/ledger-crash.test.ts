// The ledger survives SIGKILL: the real server runs as a child process in front of a local fake upstream,
// a client drives mixed streaming and JSON requests (a key without a budget and one with), the server is
// killed mid-load and restarted (its rows then only in the spool); then every answer the client received in full is in ledger_requests
// exactly once with its one attempt row, no reservation is left open, and no key is charged twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { TestKeys } from '../helpers/test-keys.ts';
import { askMarker, startMarkerUpstream } from './marker-upstream.ts';
import { killIfRunning, spawnHerd, stopHerd } from './spawn-herd.ts';

const MASTER = 'sk-herd-crash-test-master-0000000000000000000000';

const ENV = { CRASH_TEST_MASTER: MASTER, CRASH_UPSTREAM_KEY: 'sk-upstream-secret' };

interface Answered {
  marker: number;
  budgeted: boolean;
}

test('SIGKILL mid-load, restart: every answered request has its rows exactly once, no reservation stays open, nothing is charged twice', async (t) => {
  // Each request's prompt carries a marker; the upstream reports 1000 + marker completion tokens, so the ledger row names its request.
  const upstream = await startMarkerUpstream();
  t.after(() => upstream.close());

  const dir = mkdtempSync(join(tmpdir(), 'herd-ledger-crash-'));
  const config = join(dir, 'herd.yaml');
  writeFileSync(
    config,
    `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: CRASH_TEST_MASTER, db: ./herd.db }
billing: { ledger: "sqlite:./herd.db", stale_reservation_minutes: 0.0001, flush_interval_ms: 600000 }
providers:
  fake: { type: openai, base_url: "${upstream.url}/v1", api_key_env: CRASH_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: fake }]
`,
  );
  const store = await TestKeys.open(`sqlite:${join(dir, 'herd.db')}`);
  const { secret: budgeted } = await store.create({ name: 'with budget', allowedModels: '*', budgetDayMicros: 1_000_000_000_000 });
  await store.close();

  let herd = await spawnHerd(config, ENV);
  t.after(() => {
    killIfRunning(herd);
  });

  // Closed loop, 8 clients, until the kill; the kill lands at a moment that varies from run to run.
  const answered: Answered[] = [];
  let next = 0;
  let killed = false;
  const client = async () => {
    for (let i = 0; i < 100_000 && !killed; i++) {
      const marker = next++;
      const withBudget = marker % 2 === 1;
      if ((await askMarker(herd.url, marker, withBudget ? budgeted : MASTER, marker % 3 === 0)).complete) answered.push({ marker, budgeted: withBudget });
    }
  };
  const clients = Array.from({ length: 8 }, client);
  for (let i = 0; i < 600 && answered.length < 150 + (Date.now() % 150); i++) await new Promise((r) => setTimeout(r, 10));
  const killedAfter = answered.length;
  assert.equal(await stopHerd(herd, 'SIGKILL'), 'SIGKILL');
  killed = true;
  await Promise.all(clients);
  assert.ok(killedAfter >= 100, `the load ran (${killedAfter} answered before the kill)`);
  // With a 10-minute database interval, the answered rows were only in the spool when the process died.
  const spoolFiles = () => readdirSync(join(dir, 'herd.db.spool')).filter((f) => f.endsWith('.jsonl'));
  assert.ok(spoolFiles().length >= 1, 'the dead process left spooled rows');

  // Restart on the same files: start-up recovery settles or releases what the dead process left open.
  herd = await spawnHerd(config, ENV);
  const after = [];
  for (let i = 0; i < 6; i++) {
    const marker = next++;
    if ((await askMarker(herd.url, marker, i % 2 === 1 ? budgeted : MASTER, i % 3 === 0)).complete) after.push({ marker, budgeted: i % 2 === 1 });
  }
  assert.equal(after.length, 6, 'the restarted server answers');
  answered.push(...after);
  await stopHerd(herd, 'SIGTERM');
  assert.deepEqual(spoolFiles(), [], 'a clean stop leaves nothing spooled');

  const db = new Database(join(dir, 'herd.db'), { readonly: true });
  t.after(() => db.close());
  const rowsFor = db.prepare('SELECT request_id, key_id, status, cost_micros FROM ledger_requests WHERE completion_tokens = ?');
  const attemptsFor = db.prepare('SELECT COUNT(*) AS n FROM ledger_attempts_all WHERE request_id = ?');
  const reservationOf = db.prepare('SELECT state, actual_micros FROM ledger_reservations WHERE request_id = ?');
  const missing: number[] = [];
  for (const { marker, budgeted: withBudget } of answered) {
    const rows = rowsFor.all(1000 + marker) as { request_id: string; status: string; cost_micros: number }[];
    if (rows.length === 0) {
      missing.push(marker);
      continue;
    }
    assert.equal(rows.length, 1, `request ${marker}: one row`);
    const row = rows[0]!;
    assert.equal(row.status, 'ok');
    assert.equal((attemptsFor.get(row.request_id) as { n: number }).n, 1, `request ${marker}: one attempt row`);
    if (withBudget) {
      const reservation = reservationOf.get(row.request_id) as { state: string; actual_micros: number } | undefined;
      assert.deepEqual(reservation, { state: 'settled', actual_micros: row.cost_micros }, `request ${marker}: settled at its row's cost`);
    }
  }
  assert.deepEqual(missing, [], `answered requests without a ledger row (of ${answered.length})`);

  const open = db.prepare("SELECT COUNT(*) AS n FROM ledger_reservations WHERE state = 'open'").get() as { n: number };
  assert.equal(open.n, 0, 'no reservation left open');
  // The key's running day total is exactly its settled charges: nothing counted twice, no estimate left behind.
  const totals = db
    .prepare(`SELECT (SELECT COALESCE(SUM(micros), 0) FROM ledger_spend WHERE period LIKE 'd:%' AND key_id = r.key_id) AS spent, SUM(r.actual_micros) AS settled
    FROM ledger_reservations r WHERE r.state = 'settled' GROUP BY r.key_id`)
    .all() as { spent: number; settled: number }[];
  assert.ok(totals.length >= 1);
  for (const { spent, settled } of totals) assert.equal(spent, settled);
  // Every answered row stands for a real upstream call: no row without one. An attempt intent is spooled just
  // before its call leaves, so a kill in between leaves an interrupted row the upstream never saw: at most one
  // per client in flight at the kill.
  const count = (status: string) => (db.prepare('SELECT COUNT(*) AS n FROM ledger_requests WHERE status = ?').get(status) as { n: number }).n;
  assert.ok(count('ok') <= upstream.requests.length, `${count('ok')} answered rows for ${upstream.requests.length} upstream calls`);
  assert.ok(count('interrupted') <= clients.length, `${count('interrupted')} interrupted rows for ${clients.length} clients`);
  // No secret in a ledger row.
  const dump = JSON.stringify(db.prepare('SELECT * FROM ledger_requests').all()) + JSON.stringify(db.prepare('SELECT * FROM ledger_attempts').all());
  assert.ok(!dump.includes(MASTER) && !dump.includes(budgeted) && !dump.includes('sk-upstream-secret'));
});
