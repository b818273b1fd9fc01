// The ledger contract on SQLite, plus what only SQLite has: the file's WAL mode, a ledger sharing
// one file (and schema_migrations) with the key store, and store failures as UNAVAILABLE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openLedger, parseLedgerLocation, resolveLedgerLocation } from '../../../src/gateway/billing/open-ledger.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { openKeyStore } from '../../../src/gateway/keys/open-key-store.ts';
import { runLedgerContract, sampleRequest } from './ledger-contract.ts';

const tempDir = () => mkdtempSync(join(tmpdir(), 'herd-ledger-'));

test('SQLite ledger contract', async (t) => {
  const file = join(tempDir(), 'data', 'herd.db');
  await runLedgerContract(
    t,
    async (options) => SqliteLedger.open(file, options),
    async (sql) => {
      const db = new Database(file);
      db.exec(sql);
      db.close();
    },
  );
});

test('the ledger shares herd.db with the key store: WAL, one schema_migrations table, two scopes', async () => {
  const file = join(tempDir(), 'herd.db');
  const keys = await openKeyStore(`sqlite:${file}`);
  const ledger = await openLedger(`sqlite:${file}`);
  try {
    const db = new Database(file, { readonly: true });
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.deepEqual(
      db
        .prepare('SELECT scope, MAX(version) AS version FROM schema_migrations GROUP BY scope ORDER BY scope')
        .all()
        .map((r) => (r as { scope: string }).scope),
      ['keys', 'ledger'],
    );
    assert.deepEqual(db.prepare("SELECT version, name FROM schema_migrations WHERE scope = 'ledger'").all(), [
      { version: 1, name: 'requests, attempts, reservations, spend' },
      { version: 2, name: 'requests: origin' },
      { version: 3, name: 'requests: dialect' },
      { version: 4, name: 'requests: a single attempt inline; ledger_attempts_all' },
      { version: 5, name: 'requests: route rule, 1-hour cache writes, reported reasoning' },
      { version: 6, name: 'budget lines, settled spend, alert outbox; requests: team, tags, metadata' },
      { version: 7, name: 'requests: indexes for the console list filters' },
      { version: 8, name: 'requests: trace_id' },
      { version: 9, name: 'ledger_daily: the daily rollup of requests, backfilled' },
      { version: 10, name: 'batches: request batch id and realtime list price, rollup sums, reservation parts and expiry' },
      { version: 11, name: 'ledger_daily: batch lines and their saving, backfilled' },
    ]);
    db.close();
  } finally {
    await ledger.close();
    await keys.close();
  }
});

test('ledger locations: sqlite:PATH, bare paths relative to herd.yaml, postgres URLs kept; other schemes refused without echoing the URL', () => {
  assert.deepEqual(parseLedgerLocation('sqlite:./data/herd.db'), { kind: 'sqlite', path: './data/herd.db' });
  assert.deepEqual(parseLedgerLocation('/var/herd.db'), { kind: 'sqlite', path: '/var/herd.db' });
  assert.deepEqual(parseLedgerLocation('postgresql://u:p@h/db'), { kind: 'postgres', url: 'postgresql://u:p@h/db' });
  assert.equal(resolveLedgerLocation('sqlite:./data/herd.db', '/etc/herd'), 'sqlite:/etc/herd/data/herd.db');
  assert.equal(resolveLedgerLocation('data.db', '/etc/herd'), 'sqlite:/etc/herd/data.db');
  assert.equal(resolveLedgerLocation('postgres://h/db', '/etc/herd'), 'postgres://h/db');
  assert.throws(
    () => parseLedgerLocation('mysql://root:secret@h/db'),
    (err: Error) => /scheme 'mysql:'/.test(err.message) && !err.message.includes('secret'),
  );
});

test('a failing batch keeps its rows for the next flush and reports the error', async () => {
  const file = join(tempDir(), 'herd.db');
  const errors: unknown[] = [];
  const ledger = SqliteLedger.open(file, { flushIntervalMs: 5, onError: (e) => errors.push(e) });
  const other = new Database(file);
  try {
    other.exec('ALTER TABLE ledger_requests RENAME TO ledger_requests_away');
    ledger.record(sampleRequest({ requestId: 'f1' }), []);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(errors.length >= 1 && /ledger .* failed/.test(String(errors[0])));
    assert.equal(ledger.stats().queued, 1);
    other.exec('ALTER TABLE ledger_requests_away RENAME TO ledger_requests');
    await ledger.flush();
    assert.equal(ledger.stats().queued, 0);
    assert.equal((other.prepare('SELECT COUNT(*) AS n FROM ledger_requests').get() as { n: number }).n, 1);
  } finally {
    other.close();
    await ledger.close();
  }
});
