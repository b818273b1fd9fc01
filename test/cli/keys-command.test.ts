// `herd keys` round trip: create → list → authenticate → revoke, through the run functions, through
// commander, and (once herd.ts registers the command) as a real process with its exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { registerKeysCommand, resolveKeyStoreLocation, runKeysCreate, runKeysList, runKeysRevoke, type KeysIo } from '../../src/cli/keys-command.ts';
import type { HerdError } from '../../src/core/errors.ts';
import { hashKeySecret } from '../../src/gateway/keys/create-key-secret.ts';
import { SqliteKeyStore } from '../../src/gateway/keys/sqlite-key-store.ts';

function captureIo(): KeysIo & { out: string[]; err: string[]; text(): string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    env: {},
    stdout: (t) => {
      out.push(t);
    },
    stderr: (t) => {
      err.push(t);
    },
    text: () => [...out, ...err].join(''),
  };
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'herd-keys-cli-'));

test('create prints the key once on stdout, list shows it without the secret, revoke stops it', async () => {
  const db = join(tempDir(), 'data', 'herd.db');
  const created = captureIo();
  await runKeysCreate({ name: 'ci-bot', models: 'gpt-4.1, deepseek-v3.2', db }, created);
  assert.equal(created.out.length, 1, 'stdout carries the key alone, so KEY=$(herd keys create …) works');
  const secret = (created.out[0] as string).trim();
  assert.match(secret, /^sk-herd-[0-9A-Za-z]{43}$/);
  assert.match(created.err.join(''), /^Created key key_[0-9a-f]{12} 'ci-bot' \(models: gpt-4\.1,deepseek-v3\.2\) in .*herd\.db:\n/);
  assert.match(created.err.join(''), /Store this key now: it is shown only once/);

  // A server's view of the same file, re-checking on every call so the revoke shows at once.
  const store = SqliteKeyStore.open(db);
  try {
    const key = store.authenticate(secret);
    assert.ok(key);
    const listed = captureIo();
    await runKeysList({ db }, listed);
    const table = listed.text();
    assert.match(table, /\| ID +\| Name +\| Prefix +\| Models +\| Created +\| Revoked +\|/);
    assert.ok(table.includes(key.id) && table.includes('ci-bot') && table.includes(`${key.prefix}…`) && table.includes('gpt-4.1,deepseek-v3.2'));
    assert.match(table, /\| \d{4}-\d\d-\d\d \d\d:\d\d UTC \| - +\|/);
    const json = captureIo();
    await runKeysList({ db, json: true }, json);
    assert.deepEqual(
      JSON.parse(json.text()).map((k: { name: string; models: unknown; revoked: unknown }) => [k.name, k.models, k.revoked]),
      [['ci-bot', ['gpt-4.1', 'deepseek-v3.2'], null]],
    );

    const revoked = captureIo();
    await runKeysRevoke(key.prefix, { db }, revoked);
    assert.match(revoked.text(), new RegExp(`^Revoked key ${key.id} 'ci-bot' \\(${key.prefix}…\\)\\. Running servers refuse it from their next request on\\.\n$`));
    assert.equal(store.authenticate(secret), undefined, "the revoke reached the server's store");
    const again = captureIo();
    await runKeysRevoke(key.id, { db }, again);
    assert.match(again.text(), /was already revoked on \d{4}-/);
    const after = captureIo();
    await runKeysList({ db }, after);
    assert.match(after.text(), /UTC \| \d{4}-\d\d-\d\d \d\d:\d\d UTC \|/);

    for (const output of [listed, json, revoked, again, after]) {
      assert.ok(!output.text().includes(secret) && !output.text().includes(hashKeySecret(secret)) && !output.text().includes(secret.slice(12, 20)));
    }
  } finally {
    store.close();
  }
});

test('clear errors: unknown id, bad models, missing or unreadable store; list on a fresh install is not an error', async () => {
  const dir = tempDir();
  const db = join(dir, 'herd.db');
  await runKeysCreate({ name: 'a', db }, captureIo());
  await assert.rejects(
    runKeysRevoke('key_ffffffffffff', { db }, captureIo()),
    (err: HerdError) => err.code === 'NOT_FOUND' && /no key has the id or prefix 'key_ffffffffffff'/.test(err.message),
  );
  await assert.rejects(runKeysCreate({ name: 'b', models: 'a,,b', db }, captureIo()), (err: HerdError) => err.code === 'INVALID_ARG');
  await assert.rejects(runKeysCreate({ name: 'b', models: '*,a', db }, captureIo()), /'\*' already allows every model/);

  const missing = join(dir, 'none', 'herd.db');
  const list = captureIo();
  await runKeysList({ db: missing }, list);
  assert.match(list.text(), /^No keys yet \(.*none\/herd\.db does not exist\)\. Create one with: herd keys create --name NAME\n$/);
  await assert.rejects(runKeysRevoke('key_ffffffffffff', { db: missing }, captureIo()), (err: HerdError) => err.code === 'NOT_FOUND' && err.message.endsWith('does not exist'));

  const garbage = join(dir, 'garbage.db');
  writeFileSync(garbage, 'definitely not sqlite '.repeat(100));
  await assert.rejects(runKeysList({ db: garbage }, captureIo()), (err: HerdError) => err.message === `cannot open key store ${garbage}: file is not a database`);
});

test('commander wiring: herd keys create|list|revoke with --db, required --name', async () => {
  const db = join(tempDir(), 'herd.db');
  const io = captureIo();
  const program = () => {
    const p = new Command('herd').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    registerKeysCommand(p, io);
    return p;
  };
  await program().parseAsync(['keys', 'create', '--name', 'svc', '--models', '*', '--db', db], { from: 'user' });
  const secret = (io.out.pop() as string).trim();
  await program().parseAsync(['keys', 'list', '--db', db], { from: 'user' });
  assert.match(io.out.pop() as string, /\| svc +\| sk-herd-.{4}… \| \* +\|/);
  await program().parseAsync(['keys', 'revoke', secret, '--db', db], { from: 'user' });
  assert.match(io.out.pop() as string, /^Revoked key key_/);
  await assert.rejects(program().parseAsync(['keys', 'create', '--db', db], { from: 'user' }), /required option '--name <name>' not specified/);
});

test('the store location: --db wins, then herd.yaml (relative to it), then ./data/herd.db', () => {
  const dir = tempDir();
  const yaml = join(dir, 'herd.yaml');
  writeFileSync(yaml, 'server: { http_port: 8000 }\n');
  assert.equal(resolveKeyStoreLocation({ db: '/x/y.db', config: yaml }, {}), '/x/y.db');
  assert.equal(resolveKeyStoreLocation({ config: yaml }, {}), join(dir, 'data/herd.db'), 'relative to the config file');
  assert.throws(() => resolveKeyStoreLocation({ config: join(dir, 'nope.yaml') }, {}), /cannot read config file/);
});

test('auth.db and ${ENV} from herd.yaml', () => {
  const dir = tempDir();
  const yaml = join(dir, 'herd.yaml');
  writeFileSync(yaml, 'auth:\n  db: ${KEYS_DIR}/keys.db\n');
  assert.equal(resolveKeyStoreLocation({ config: yaml }, { KEYS_DIR: dir }), `${dir}/keys.db`);
});

test('as a real process: exit 0 on success, 1 with one clear line on failure', () => {
  const db = join(tempDir(), 'herd.db');
  const herd = (...args: string[]) => spawnSync(process.execPath, [resolve('bin/herd.mjs'), 'keys', ...args, '--db', db], { encoding: 'utf8' });
  const created = herd('create', '--name', 'proc');
  assert.equal(created.status, 0, created.stderr);
  const secret = created.stdout.trim();
  assert.match(secret, /^sk-herd-/);
  const listed = herd('list');
  assert.equal(listed.status, 0);
  assert.ok(!listed.stdout.includes(secret));
  const unknown = herd('revoke', 'key_000000000000');
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /^herd: no key has the id or prefix 'key_000000000000'/);
  assert.equal(herd('revoke', secret).status, 0);
});

test('limits: create with --rpm --tpm --max-concurrency --budget-day --budget-month --priority; list shows them', async () => {
  const db = join(tempDir(), 'herd.db');
  const io = captureIo();
  const program = () => {
    const p = new Command('herd').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    registerKeysCommand(p, io);
    return p;
  };
  await program().parseAsync(
    [
      'keys',
      'create',
      '--name',
      'batch-jobs',
      '--db',
      db,
      '--rpm',
      '60',
      '--tpm',
      '90000',
      '--max-concurrency',
      '4',
      '--budget-day',
      '12.5',
      '--budget-month',
      '200',
      '--priority',
      'batch',
    ],
    { from: 'user' },
  );
  assert.match(io.err.join(''), /^Created key key_[0-9a-f]{12} 'batch-jobs' \(models: \*; rpm 60, tpm 90000, 4 concurrent, 12\.50\/day, 200\.00\/month, priority batch\) in /);
  const secret = (io.out.pop() as string).trim();
  await runKeysCreate({ name: 'plain', db }, captureIo());

  const store = SqliteKeyStore.open(db);
  try {
    const key = store.authenticate(secret);
    assert.deepEqual(
      [key?.rpm, key?.tpm, key?.maxConcurrency, key?.budgetDayMicros, key?.budgetMonthMicros, key?.defaultPriority],
      [60, 90_000, 4, 12_500_000, 200_000_000, 'BATCH'],
    );
  } finally {
    store.close();
  }

  const listed = captureIo();
  await runKeysList({ db }, listed);
  const table = listed.text();
  assert.match(table, /\| Revoked +\| Priority \| RPM \| TPM +\| Concurrency \| Budget\/day \| Budget\/month \|/);
  assert.match(table, /\| batch-jobs \|.*\| - +\| batch +\| 60 +\| 90000 \| 4 +\| 12\.50 +\| 200\.00 +\|/);
  assert.match(table, /\| plain +\|.*\| - +\| normal +\| - +\| - +\| - +\| - +\| - +\|/, 'no default priority runs at normal, and says so');
  const json = captureIo();
  await runKeysList({ db, json: true }, json);
  const [limited, plain] = JSON.parse(json.text()) as Record<string, unknown>[];
  assert.deepEqual(
    [limited!.priority, limited!.rpm, limited!.tpm, limited!.max_concurrency, limited!.budget_day_micros, limited!.budget_month_micros],
    ['BATCH', 60, 90_000, 4, 12_500_000, 200_000_000],
  );
  assert.deepEqual([plain!.priority, plain!.rpm, plain!.budget_day_micros], [null, null, null]);
});

test('limit flags are checked before any store is opened', async () => {
  const dir = tempDir();
  const db = join(dir, 'herd.db');
  const cases: [Partial<Parameters<typeof runKeysCreate>[0]>, RegExp][] = [
    [{ rpm: '0' }, /^--rpm must be a whole number of at least 1, got '0'$/],
    [{ tpm: '1e5' }, /^--tpm must be a whole number of at least 1, got '1e5'$/],
    [{ maxConcurrency: '2.5' }, /^--max-concurrency must be a whole number/],
    [{ budgetDay: '1.2345678' }, /^--budget-day has more than 6 decimals/],
    [{ budgetMonth: '-5' }, /^--budget-month must be an amount such as 10 or 12\.50/],
    [{ priority: 'urgent' }, /^--priority must be one of high, normal, batch; got 'urgent'$/],
  ];
  for (const [flags, message] of cases) {
    await assert.rejects(runKeysCreate({ name: 'x', db, ...flags }, captureIo()), (err: HerdError) => err.code === 'INVALID_ARG' && message.test(err.message));
  }
  const listed = captureIo();
  await runKeysList({ db }, listed);
  assert.match(listed.text(), /^No keys yet/, 'no database was created');
});
