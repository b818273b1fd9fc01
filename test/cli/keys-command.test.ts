// `herd keys` through the AdminService: create → list → show → update → block → rotate → revoke, through
// the run functions, through commander, and as a real process with its exit codes; the old limit flags
// (--budget-day, --rpm, …) and the new ones (--budget, --team, --expires, --tag, --meta, --role).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import {
  type KeysIo,
  registerKeysCommand,
  resolveKeyStoreLocation,
  runKeysBlock,
  runKeysCreate,
  runKeysList,
  runKeysRevoke,
  runKeysRotate,
  runKeysShow,
  runKeysUpdate,
} from '../../src/cli/keys-command.ts';
import { runTeamsCreate } from '../../src/cli/teams-command.ts';
import type { HerdError } from '../../src/core/errors.ts';
import { hashKeySecret } from '../../src/gateway/keys/create-key-secret.ts';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';

function captureIo(): KeysIo & { out: string[]; err: string[]; text(): string; exitCode?: number } {
  const out: string[] = [];
  const err: string[] = [];
  const io: KeysIo & { out: string[]; err: string[]; text(): string; exitCode?: number } = {
    out,
    err,
    env: {},
    stdout: (t) => {
      out.push(t);
    },
    stderr: (t) => {
      err.push(t);
    },
    setExitCode: (code) => {
      io.exitCode = code;
    },
    text: () => [...out, ...err].join(''),
  };
  return io;
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'herd-keys-cli-'));

test('create prints the key once on stdout, list shows it without the secret, revoke stops it', async () => {
  const db = join(tempDir(), 'data', 'herd.db');
  const created = captureIo();
  await runKeysCreate({ name: 'ci-bot', models: 'gpt-4.1, deepseek-v3.2', db }, created);
  assert.equal(created.out.length, 1, 'stdout carries the key alone, so KEY=$(herd keys create …) works');
  const secret = (created.out[0] as string).trim();
  assert.match(secret, /^sk-herd-hk_[0-9A-Za-z]+-[0-9A-Za-z]{43}$/);
  assert.match(created.err.join(''), /^Created key hk_[0-9A-Za-z]+ 'ci-bot' \(models: gpt-4\.1,deepseek-v3\.2\) in .*herd\.db:\n/);
  assert.match(created.err.join(''), /Store this key now: it is shown only once/);

  // A server's view of the same file.
  const store = await openKeyStore(db);
  try {
    const found = store.lookup(secret);
    assert.equal(found.state, 'active');
    const key = (found as { key: { id: string; prefix: string } }).key;
    const listed = captureIo();
    await runKeysList({ db }, listed);
    const table = listed.text();
    assert.match(table, /\| ID +\| Name +\| Team \| Role +\| State +\| Spend this period \| Last used \| Expires \|/);
    assert.ok(table.includes(key.id) && table.includes('ci-bot'));
    assert.match(table, /\| ci-bot \| - +\| client \| active \| \? +\| - +\| - +\|/, 'no ledger was read (no herd.yaml): spend is ?');
    const json = captureIo();
    await runKeysList({ db, json: true }, json);
    assert.deepEqual(
      JSON.parse(json.text()).map((k: { name: string; allowed_models: unknown; revoked_at: unknown }) => [k.name, k.allowed_models, k.revoked_at]),
      [['ci-bot', ['gpt-4.1', 'deepseek-v3.2'], null]],
    );

    const revoked = captureIo();
    await runKeysRevoke('ci-bot', { db }, revoked);
    assert.equal(revoked.text(), `Revoked key ${key.id} 'ci-bot' (${key.prefix}…). Running servers refuse it within a second.\n`);
    await store.refresh();
    assert.equal(store.lookup(secret).state, 'revoked', "the revoke reached the server's store");
    const again = captureIo();
    await runKeysRevoke(key.id, { db }, again);
    assert.match(again.text(), /was already revoked on \d{4}-/);
    const after = captureIo();
    await runKeysList({ db }, after);
    assert.match(after.text(), /No keys in .* \(revoked ones are left out: --all shows them\)/);
    const all = captureIo();
    await runKeysList({ db, all: true }, all);
    assert.match(all.text(), /\| ci-bot \| - +\| client \| revoked \|/);

    for (const output of [listed, json, revoked, again, after, all]) {
      assert.ok(!output.text().includes(secret) && !output.text().includes(hashKeySecret(secret)) && !output.text().includes(secret.slice(-20)));
    }
  } finally {
    await store.close();
  }
});

test('show, update, block, unblock and rotate address a key by name; rotation keeps the id', async () => {
  const db = join(tempDir(), 'herd.db');
  await runTeamsCreate({ name: 'team-a', db }, captureIo());
  const created = captureIo();
  await runKeysCreate(
    {
      name: 'svc',
      db,
      team: 'team-a',
      budget: ['day=100', 'month=2000', 'day=10:gpt-4o*'],
      timezone: 'Asia/Shanghai',
      expires: '30d',
      tag: ['prod'],
      meta: ['owner=ops'],
      alert: '50,80,100',
      cidr: ['10.0.0.0/8'],
    },
    created,
  );
  assert.match(created.err.join(''), /'svc' \(team team-a; models: \*; 100\.00\/day, 2000\.00\/month, 10\.00\/day on gpt-4o\*\)/);
  const secret = (created.out[0] as string).trim();
  const shown = captureIo();
  await runKeysShow('svc', { db }, shown);
  for (const line of [
    /^team +team-a \(tm_/m,
    /^time zone +Asia\/Shanghai$/m,
    /^alerts +50%, 80%, 100%$/m,
    /^tags +prod$/m,
    /^metadata +owner=ops$/m,
    /^client CIDRs +10\.0\.0\.0\/8$/m,
    /^expires +\d{4}-/m,
  ]) {
    assert.match(shown.text(), line);
  }
  const updated = captureIo();
  await runKeysUpdate('svc', { db, rpm: '60', budget: ['none'], expires: 'never', name: 'svc-2' }, updated);
  assert.match(updated.text(), /^Updated key hk_\w+ 'svc-2' \(team team-a; models: \*; rpm 60\)/);
  const json = captureIo();
  await runKeysShow('team-a/svc-2', { db, json: true }, json);
  const key = JSON.parse(json.text());
  assert.deepEqual([key.rpm, key.budgets, key.expires_at], [60, [], null]);

  const blocked = captureIo();
  await runKeysBlock('svc-2', true, { db }, blocked);
  assert.match(blocked.text(), /^Blocked key hk_\w+ 'svc-2'/);
  await runKeysBlock('svc-2', false, { db }, captureIo());
  const rotated = captureIo();
  await runKeysRotate(key.id, { db, grace: '1h' }, rotated);
  const fresh = (rotated.out[0] as string).trim();
  assert.notEqual(fresh, secret);
  assert.match(rotated.err.join(''), /the old secret works until \d{4}-/);
  const store = await openKeyStore(db);
  try {
    assert.equal(store.lookup(secret).state, 'grace');
    const now = store.lookup(fresh);
    assert.equal(now.state, 'active');
    assert.equal((now as { key: { id: string } }).key.id, key.id, 'the same public id');
  } finally {
    await store.close();
  }
});

test('clear errors: unknown key, bad models, missing or unreadable store; list on a fresh install is not an error', async () => {
  const dir = tempDir();
  const db = join(dir, 'herd.db');
  await runKeysCreate({ name: 'a', db }, captureIo());
  await assert.rejects(
    runKeysRevoke('hk_ffffffffffff', { db }, captureIo()),
    (err: HerdError) => err.code === 'NOT_FOUND' && /no key has the id, name or prefix/.test(err.message),
  );
  await assert.rejects(runKeysCreate({ name: 'b', models: 'a,,b', db }, captureIo()), (err: HerdError) => err.code === 'INVALID_ARG');

  const missing = join(dir, 'none', 'herd.db');
  const list = captureIo();
  await runKeysList({ db: missing }, list);
  assert.match(list.text(), /^No keys yet \(.*none\/herd\.db does not exist\)\. Create one with: herd keys create --name NAME\n$/);
  await assert.rejects(runKeysRevoke('hk_ffffffffffff', { db: missing }, captureIo()), (err: HerdError) => err.code === 'NOT_FOUND' && err.message.endsWith('does not exist'));

  const garbage = join(dir, 'garbage.db');
  writeFileSync(garbage, 'definitely not sqlite '.repeat(100));
  await assert.rejects(runKeysList({ db: garbage }, captureIo()), (err: HerdError) => /file is not a database/.test(err.message) && err.message.includes(garbage));
});

test('commander wiring: herd keys create|list|revoke with --db, repeated --budget, required --name', async () => {
  const db = join(tempDir(), 'herd.db');
  const io = captureIo();
  const program = () => {
    const p = new Command('herd').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    registerKeysCommand(p, io);
    return p;
  };
  await program().parseAsync(['keys', 'create', '--name', 'svc', '--models', '*', '--budget', 'day=5', '--budget', 'week=20', '--db', db], { from: 'user' });
  const secret = (io.out.pop() as string).trim();
  await program().parseAsync(['keys', 'list', '--db', db, '--json'], { from: 'user' });
  const [listed] = JSON.parse(io.out.pop() as string);
  assert.deepEqual(
    listed.budgets.map((b: { period: string; amount: string }) => `${b.period}=${b.amount}`),
    ['day=5.00', 'week=20.00'],
  );
  await program().parseAsync(['keys', 'revoke', secret, '--db', db], { from: 'user' });
  assert.match(io.out.pop() as string, /^Revoked key hk_/);
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
  assert.equal(listed.status, 0, listed.stderr);
  assert.ok(!listed.stdout.includes(secret));
  const unknown = herd('revoke', 'hk_000000000000');
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /^herd: no key has the id, name or prefix/);
  assert.equal(herd('show', 'proc').status, 0);
  assert.equal(herd('revoke', 'proc').status, 0);
});

test('the old limit flags still work: --rpm --tpm --max-concurrency --budget-day --budget-month --priority', async () => {
  const db = join(tempDir(), 'herd.db');
  const io = captureIo();
  await runKeysCreate({ name: 'batch-jobs', db, rpm: '60', tpm: '90000', maxConcurrency: '4', budgetDay: '12.5', budgetMonth: '200', priority: 'batch' }, io);
  assert.match(io.err.join(''), /^Created key hk_\w+ 'batch-jobs' \(models: \*; rpm 60, tpm 90000, 4 concurrent, 12\.50\/day, 200\.00\/month, priority batch\) in /);
  const json = captureIo();
  await runKeysList({ db, json: true }, json);
  const [limited] = JSON.parse(json.text()) as Record<string, unknown>[];
  assert.deepEqual(
    [limited?.priority, limited?.rpm, limited?.tpm, limited?.max_concurrency, limited?.budgets],
    [
      'batch',
      60,
      90_000,
      4,
      [
        { period: 'day', amount_micros: 12_500_000, amount: '12.50', model: null },
        { period: 'month', amount_micros: 200_000_000, amount: '200.00', model: null },
      ],
    ],
  );
});

test('flags are checked before any store is opened', async () => {
  const dir = tempDir();
  const db = join(dir, 'herd.db');
  const cases: [Partial<Parameters<typeof runKeysCreate>[0]>, RegExp][] = [
    [{ rpm: '0' }, /^--rpm must be a whole number of at least 1, got '0'$/],
    [{ tpm: '1e5' }, /^--tpm must be a whole number of at least 1, got '1e5'$/],
    [{ maxConcurrency: '2.5' }, /^--max-concurrency must be a whole number/],
    [{ budgetDay: '1.2345678' }, /^--budget-day has more than 6 decimals/],
    [{ budgetMonth: '-5' }, /^--budget-month must be an amount such as 10 or 12\.50/],
    [{ budget: ['hour=5'] }, /^--budget must look like day=100/],
    [{ priority: 'urgent' }, /^--priority must be one of high, normal, batch; got 'urgent'$/],
    [{ role: 'root' }, /^--role must be one of admin, viewer, manager, client/],
    [{ expires: 'tomorrow' }, /^expires_at must be a duration from now/],
    [{ meta: ['novalue'] }, /^--meta must look like key=value/],
  ];
  for (const [flags, message] of cases) {
    await assert.rejects(runKeysCreate({ name: 'x', db, ...flags }, captureIo()), (err: HerdError) => err.code === 'INVALID_ARG' && message.test(err.message));
  }
  const listed = captureIo();
  await runKeysList({ db }, listed);
  assert.match(listed.text(), /^No keys yet/, 'no database was created');
});
