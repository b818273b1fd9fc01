// `herd migrate` on SQLite and PostgreSQL: applies the ledger's, the batch store's and the key store's migrations once, says so,
// is a no-op the second time, and refuses a database newer than this build, as the servers then refuse to start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { runMigrate } from '../../src/cli/migrate-command.ts';
import { batchStoreMigrations } from '../../src/gateway/batch/batch-store-migrations.ts';
import { ledgerMigrations } from '../../src/gateway/billing/ledger-migrations.ts';
import { openLedger } from '../../src/gateway/billing/open-ledger.ts';
import { keyStoreMigrations, postgresKeyStoreMigrations } from '../../src/gateway/keys/key-store-migrations.ts';
import { SchemaNewerError } from '../../src/gateway/storage/apply-sqlite-migrations.ts';
import { createTestDatabase } from '../e2e/create-test-database.ts';

const LEDGER_LATEST = ledgerMigrations.length;
const NEWER = `database schema ledger v${LEDGER_LATEST + 1} is newer than this Herd (v${LEDGER_LATEST}): upgrade Herd, never migrate backwards`;

function configWith(billing: string, extra = ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-migrate-'));
  const file = join(dir, 'herd.yaml');
  writeFileSync(file, `billing: { ledger: "${billing}" }\n${extra}`);
  return file;
}

async function migrate(config: string): Promise<{ lines: string[]; versions: [string, number, number][] }> {
  const lines: string[] = [];
  const reports = await runMigrate({ config }, (line) => lines.push(line), {});
  return { lines, versions: reports.map((r) => [r.scope, r.from, r.to]) };
}

test('SQLite: applies every migration once, then is up to date; a newer schema is refused by migrate and by serve', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-migrate-'));
  const config = configWith(`sqlite:${join(dir, 'ledger.db')}`, `auth: { db: "${join(dir, 'keys.db')}" }\n`);
  const first = await migrate(config);
  assert.deepEqual(first.versions, [
    ['ledger', 0, LEDGER_LATEST],
    ['batch', 0, batchStoreMigrations.length],
    ['keys', 0, keyStoreMigrations.length],
  ]);
  assert.match(first.lines[0] as string, new RegExp(`^ledger at ${join(dir, 'ledger.db')}: schema v0 -> v${LEDGER_LATEST}, applied v1 \\(`));
  assert.match(first.lines[1] as string, new RegExp(`^batch store at ${join(dir, 'ledger.db')}: schema v0 -> v${batchStoreMigrations.length}, applied v1 \\(`));
  assert.match(first.lines[2] as string, /^key store at .*keys\.db: schema v0 -> v\d+, applied v1 \(/);
  const again = await migrate(config);
  assert.deepEqual(again.lines, [
    `ledger at ${join(dir, 'ledger.db')}: schema v${LEDGER_LATEST}, up to date`,
    `batch store at ${join(dir, 'ledger.db')}: schema v${batchStoreMigrations.length}, up to date`,
    `key store at ${join(dir, 'keys.db')}: schema v${keyStoreMigrations.length}, up to date`,
  ]);

  // A newer Herd migrated the file: this one neither migrates it backwards nor serves on it.
  const db = new Database(join(dir, 'ledger.db'));
  db.prepare("INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES ('ledger', ?, 'from the future', 0)").run(LEDGER_LATEST + 1);
  db.close();
  await assert.rejects(migrate(config), (err: unknown) => err instanceof SchemaNewerError && err.message === NEWER);

  const cli = spawn(process.execPath, [resolve('bin/herd.mjs'), 'migrate', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  cli.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  assert.equal(await new Promise((r) => cli.on('exit', r)), 1);
  assert.equal(stderr, `herd: ${NEWER}\n`);
  await assert.rejects(openLedger(`sqlite:${join(dir, 'ledger.db')}`, { spool: true }), (err: unknown) => err instanceof Error && err.message.endsWith(NEWER));
});

test('PostgreSQL: the ledger and the key store (on the ledger database by default) migrate once; a newer schema is refused by migrate and by a serving ledger', async (t) => {
  const database = await createTestDatabase('herd_drain_migrate');
  t.after(() => database.drop());
  const config = configWith(database.url);
  const first = await migrate(config);
  assert.deepEqual(first.versions, [
    ['ledger', 0, LEDGER_LATEST],
    ['batch', 0, batchStoreMigrations.length],
    ['keys', 0, postgresKeyStoreMigrations.length],
  ]);
  assert.match(first.lines[0] as string, /^ledger at postgres:\/\/.*: schema v0 -> v\d+, applied v1 \(/);
  const again = await migrate(config);
  assert.deepEqual(
    again.versions.map(([scope, from, to]) => [scope, from === to]),
    [
      ['ledger', true],
      ['batch', true],
      ['keys', true],
    ],
  );
  assert.match(again.lines.join('\n'), /up to date\n.*up to date\n.*up to date$/);

  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query("INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES ('ledger', $1, 'from the future', 0)", [LEDGER_LATEST + 1]);
  await client.end();
  await assert.rejects(migrate(config), (err: unknown) => err instanceof SchemaNewerError && err.message === NEWER);
  // A serving process (spooled ledger) used to start and spool forever on such a database; it now refuses.
  const spoolDir = mkdtempSync(join(tmpdir(), 'herd-migrate-spool-'));
  await assert.rejects(openLedger(database.url, { spool: true, spoolDir }), (err: unknown) => err instanceof SchemaNewerError);
});
