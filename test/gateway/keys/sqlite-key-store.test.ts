// SqliteKeyStore on real files in a temp dir: lifecycle, cross-process revocation within the
// re-check interval, migrations, and clear errors for missing or unreadable databases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { HerdError } from '../../../src/core/errors.ts';
import { SqliteKeyStore } from '../../../src/gateway/keys/sqlite-key-store.ts';
import { openKeyStore, parseKeyStoreLocation } from '../../../src/gateway/keys/open-key-store.ts';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'herd-keys-')), 'nested', 'dir', 'herd.db');

test('create, list, authenticate, revoke', async () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    assert.equal(store.hasActiveKeys(), false);
    const a = await store.create({ name: ' ci-bot ', allowedModels: ['gpt-4.1', 'deepseek-v3.2', 'gpt-4.1'] });
    const b = await store.create({ name: 'analytics', allowedModels: '*' });
    assert.match(a.key.id, /^key_[0-9a-f]{12}$/);
    assert.equal(a.key.name, 'ci-bot');
    assert.deepEqual(a.key.allowedModels, ['gpt-4.1', 'deepseek-v3.2']);
    assert.equal(a.key.prefix, a.secret.slice(0, 12));
    assert.equal(a.key.revokedAt, undefined);

    const listed = await store.list();
    assert.deepEqual(
      listed.map((k) => k.id),
      [a.key.id, b.key.id],
    );
    assert.deepEqual(
      listed.map((k) => k.allowedModels),
      [['gpt-4.1', 'deepseek-v3.2'], '*'],
    );
    assert.ok(!JSON.stringify(listed).includes(a.secret));

    const info = store.authenticate(a.secret);
    assert.equal(info?.id, a.key.id);
    assert.equal(info?.role, 'client');
    assert.equal(store.authenticate(`${a.secret}x`), undefined);
    assert.equal(store.authenticate(''), undefined);
    assert.ok(store.isModelAllowed(info!, 'gpt-4.1'));
    assert.ok(!store.isModelAllowed(info!, 'claude-sonnet-4.5'));
    assert.ok(store.isModelAllowed(store.authenticate(b.secret)!, 'anything'));

    const revoked = await store.revoke(a.key.id);
    assert.equal(revoked.alreadyRevoked, false);
    assert.ok(revoked.key.revokedAt instanceof Date);
    assert.equal(store.authenticate(a.secret), undefined, 'a local revoke is seen at once');
    assert.equal(store.authenticate(b.secret)?.id, b.key.id);
    assert.equal((await store.revoke(a.key.id)).alreadyRevoked, true, 'revoke is idempotent');
    assert.ok((await store.list())[0]?.revokedAt instanceof Date);
  } finally {
    store.close();
  }
});

test('revoke by display prefix or by the full key; an ambiguous prefix asks for the id', async () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    const a = await store.create({ name: 'a', allowedModels: '*' });
    const b = await store.create({ name: 'b', allowedModels: '*' });
    assert.equal((await store.revoke(a.key.prefix)).key.id, a.key.id);
    assert.equal((await store.revoke(b.secret)).key.id, b.key.id);
    assert.equal(store.hasActiveKeys(), false);

    const c = await store.create({ name: 'c', allowedModels: '*' });
    const d = await store.create({ name: 'd', allowedModels: '*' });
    const db = new Database(store.path);
    db.prepare('UPDATE gateway_keys SET prefix = ? WHERE id = ?').run(c.key.prefix, d.key.id);
    db.close();
    await assert.rejects(store.revoke(c.key.prefix), (err: HerdError) => err.code === 'INVALID_ARG' && err.message.includes('revoke by id') && err.message.includes(c.key.id));
    await assert.rejects(store.revoke('key_000000000000'), (err: HerdError) => err.code === 'NOT_FOUND' && err.message.includes("'key_000000000000'"));
    await assert.rejects(store.revoke('  '), (err: HerdError) => err.code === 'INVALID_ARG');
  } finally {
    store.close();
  }
});

test("a key created or revoked by another process counts from the running store's next request on", async () => {
  const path = tempDb();
  const server = SqliteKeyStore.open(path);
  const cli = SqliteKeyStore.open(path);
  try {
    assert.equal(server.hasActiveKeys(), false);
    const { key, secret } = await cli.create({ name: 'late', allowedModels: '*' });
    assert.equal(server.hasActiveKeys(), true, 'the first key ends open mode at once');
    assert.equal(server.authenticate(secret)?.id, key.id, 'and works on its first request');
    await cli.revoke(key.id);
    assert.equal(server.authenticate(secret), undefined);
    assert.equal(server.hasActiveKeys(), false);
    const created = await cli.create({ name: 'new', allowedModels: '*' });
    assert.equal(server.authenticate(created.secret)?.name, 'new', 'keys created elsewhere appear too');
  } finally {
    server.close();
    cli.close();
  }
});

test('a change made by hand with sqlite3 is noticed too (triggers bump the revision)', async () => {
  const path = tempDb();
  const store = SqliteKeyStore.open(path);
  try {
    const { secret } = await store.create({ name: 'x', allowedModels: '*' });
    assert.ok(store.authenticate(secret));
    const db = new Database(path);
    db.exec('DELETE FROM gateway_keys');
    db.close();
    assert.equal(store.authenticate(secret), undefined);
  } finally {
    store.close();
  }
});

test('migrations are recorded once and reopening applies nothing; keys survive', async () => {
  const path = tempDb();
  const first = SqliteKeyStore.open(path);
  const { secret } = await first.create({ name: 'x', allowedModels: ['m'] });
  first.close();
  for (let i = 0; i < 3; i++) {
    const again = SqliteKeyStore.open(path);
    assert.deepEqual(again.authenticate(secret)?.allowedModels, ['m']);
    again.close();
  }
  const db = new Database(path, { readonly: true });
  assert.deepEqual(db.prepare('SELECT scope, version, name FROM schema_migrations').all(), [
    { scope: 'keys', version: 1, name: 'gateway keys' },
    { scope: 'keys', version: 2, name: 'per-key limits' },
  ]);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  const columns = (db.prepare('PRAGMA table_info(gateway_keys)').all() as { name: string }[]).map((c) => c.name);
  assert.deepEqual(columns, [
    'id',
    'name',
    'key_hash',
    'prefix',
    'allowed_models',
    'created_at',
    'revoked_at',
    'budget_day_micros',
    'budget_month_micros',
    'rpm',
    'tpm',
    'max_concurrency',
    'default_priority',
  ]);
  const stored = JSON.stringify(db.prepare('SELECT * FROM gateway_keys').all());
  assert.ok(!stored.includes(secret), 'the key itself is never stored');
  db.close();
});

test('a database from a newer Herd is refused rather than misread', () => {
  const path = tempDb();
  SqliteKeyStore.open(path).close();
  const db = new Database(path);
  db.prepare("INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES ('keys', 99, 'future', 0)").run();
  db.close();
  assert.throws(
    () => SqliteKeyStore.open(path),
    (err: HerdError) => err.code === 'UNAVAILABLE' && /version 99, newer than this Herd knows \(2\)/.test(err.message),
  );
});

test('missing and unreadable files give clear errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-keys-'));
  assert.throws(
    () => SqliteKeyStore.open(join(dir, 'none.db'), { mustExist: true }),
    (err: HerdError) => err.code === 'NOT_FOUND' && err.message.includes('does not exist'),
  );
  const garbage = join(dir, 'garbage.db');
  writeFileSync(garbage, 'not a database '.repeat(200));
  assert.throws(
    () => SqliteKeyStore.open(garbage),
    (err: HerdError) => err.code === 'UNAVAILABLE' && err.message === `cannot open key store ${garbage}: file is not a database`,
  );
});

test('invalid names and model lists are refused', async () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    for (const input of [
      { name: '  ', allowedModels: '*' as const },
      { name: 'x'.repeat(101), allowedModels: '*' as const },
      { name: 'bad\nname', allowedModels: '*' as const },
      { name: 'ok', allowedModels: [] },
      { name: 'ok', allowedModels: ['a', ''] },
      { name: 'ok', allowedModels: ['*', 'a'] },
    ]) {
      await assert.rejects(store.create(input), (err: HerdError) => err.code === 'INVALID_ARG', JSON.stringify(input));
    }
    assert.equal((await store.create({ name: 'star', allowedModels: ['*'] })).key.allowedModels, '*');
  } finally {
    store.close();
  }
});

test('key store locations: sqlite:PATH, bare paths, and a clear word for postgres', () => {
  assert.deepEqual(parseKeyStoreLocation('sqlite:./data/herd.db'), { kind: 'sqlite', path: './data/herd.db' });
  assert.deepEqual(parseKeyStoreLocation('sqlite:///var/lib/herd.db'), { kind: 'sqlite', path: '/var/lib/herd.db' });
  assert.deepEqual(parseKeyStoreLocation('/tmp/x.db'), { kind: 'sqlite', path: '/tmp/x.db' });
  assert.throws(
    () => openKeyStore('postgres://u:secretpw@db/herd'),
    (err: HerdError) => err.code === 'UNSUPPORTED' && !err.message.includes('secretpw'),
  );
  assert.throws(
    () => parseKeyStoreLocation('mysql://u:secretpw@db'),
    (err: HerdError) => err.code === 'INVALID_ARG' && !err.message.includes('secretpw'),
  );
});
