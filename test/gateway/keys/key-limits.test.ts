// Per-key limits in the key store (migration 2): stored and read back with the key, keys from a
// version-1 file keep working without limits, bad values refused before SQLite sees them, and
// values edited by hand into nonsense limit the most; budget amounts converted to micros exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { HerdError } from '../../../src/core/errors.ts';
import { applySqliteMigrations } from '../../../src/gateway/storage/apply-sqlite-migrations.ts';
import { formatBudgetAmount, parseBudgetAmount } from '../../../src/gateway/keys/budget-amount.ts';
import { hashKeySecret } from '../../../src/gateway/keys/create-key-secret.ts';
import { KEY_STORE_SCOPE, keyStoreMigrations } from '../../../src/gateway/keys/key-store-migrations.ts';
import type { CreateKeyInput } from '../../../src/gateway/keys/key-store.ts';
import { SqliteKeyStore } from '../../../src/gateway/keys/sqlite-key-store.ts';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'herd-key-limits-')), 'herd.db');

test('limits are stored with the key and come back on authenticate and list', async () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    const limits = { budgetDayMicros: 12_500_000, budgetMonthMicros: 200_000_000, rpm: 60, tpm: 90_000, maxConcurrency: 4, defaultPriority: 'BATCH' as const };
    const { key, secret } = await store.create({ name: 'batch-jobs', allowedModels: '*', ...limits });
    const plain = await store.create({ name: 'plain', allowedModels: '*' });
    assert.deepEqual({ ...store.authenticate(secret) }, { id: key.id, name: 'batch-jobs', prefix: key.prefix, allowedModels: '*', role: 'client', ...limits });
    const [listed, other] = await store.list();
    assert.equal(listed?.tpm, 90_000);
    assert.equal(listed?.defaultPriority, 'BATCH');
    assert.deepEqual(Object.keys(store.authenticate(plain.secret)!).sort(), ['allowedModels', 'id', 'name', 'prefix', 'role'], 'no limit: no field');
    assert.equal(other?.rpm, undefined);
    const zero = await store.create({ name: 'frozen', allowedModels: '*', budgetDayMicros: 0 });
    assert.equal(store.authenticate(zero.secret)?.budgetDayMicros, 0, 'a zero budget is a limit, not "none"');
  } finally {
    store.close();
  }
});

test('a key created before migration 2 keeps working, with no limits', () => {
  const path = tempDb();
  const db = new Database(path);
  applySqliteMigrations(db, KEY_STORE_SCOPE, keyStoreMigrations.slice(0, 1));
  const secret = 'sk-herd-OldKeyOldKeyOldKeyOldKeyOldKeyOldKeyOldKey0';
  db.prepare("INSERT INTO gateway_keys (id, name, key_hash, prefix, allowed_models, created_at) VALUES ('key_000000000001', 'old', ?, 'sk-herd-OldK', '[\"gpt-4.1\"]', 0)").run(
    hashKeySecret(secret),
  );
  db.close();

  const store = SqliteKeyStore.open(path);
  try {
    const key = store.authenticate(secret);
    assert.deepEqual({ ...key }, { id: 'key_000000000001', name: 'old', prefix: 'sk-herd-OldK', allowedModels: ['gpt-4.1'], role: 'client' });
  } finally {
    store.close();
  }
  const check = new Database(path, { readonly: true });
  assert.deepEqual(check.prepare("SELECT version FROM schema_migrations WHERE scope = 'keys' ORDER BY version").all(), [{ version: 1 }, { version: 2 }]);
  check.close();
});

test('invalid limits are refused, naming the field; nothing is stored', async () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    const bad: [Partial<CreateKeyInput>, string][] = [
      [{ rpm: 0 }, 'rpm'],
      [{ tpm: 1.5 }, 'tpm'],
      [{ maxConcurrency: -1 }, 'maxConcurrency'],
      [{ budgetDayMicros: -1 }, 'budgetDayMicros'],
      [{ budgetMonthMicros: 2 ** 53 }, 'budgetMonthMicros'],
      [{ defaultPriority: 'URGENT' as 'HIGH' }, 'defaultPriority'],
    ];
    for (const [limits, param] of bad) {
      await assert.rejects(store.create({ name: 'x', allowedModels: '*', ...limits }), (err: HerdError) => err.code === 'INVALID_ARG' && err.param === param, param);
    }
    assert.deepEqual(await store.list(), []);
  } finally {
    store.close();
  }
});

test('the database refuses out-of-range limits too, and reads edited nonsense as the strictest limit', async () => {
  const path = tempDb();
  const store = SqliteKeyStore.open(path);
  try {
    const { key, secret } = await store.create({ name: 'x', allowedModels: '*' });
    const db = new Database(path);
    assert.throws(() => db.prepare('UPDATE gateway_keys SET rpm = 0 WHERE id = ?').run(key.id), /CHECK constraint failed/);
    assert.throws(() => db.prepare("UPDATE gateway_keys SET default_priority = 'high' WHERE id = ?").run(key.id), /CHECK constraint failed/);
    // Text and fractions slip past the CHECKs (SQLite compares text above any number).
    db.prepare("UPDATE gateway_keys SET rpm = 'lots', tpm = 2.5, budget_day_micros = 1.5 WHERE id = ?").run(key.id);
    db.close();
    const read = store.authenticate(secret);
    assert.deepEqual([read?.rpm, read?.tpm, read?.budgetDayMicros], [0, 0, 0]);
  } finally {
    store.close();
  }
});

test('budget amounts: decimal text to integer micros exactly, and back', () => {
  assert.equal(parseBudgetAmount('12.5', '--budget-day'), 12_500_000);
  assert.equal(parseBudgetAmount('0.1', '--budget-day'), 100_000, 'not 0.1 × 1e6 in floating point');
  assert.equal(parseBudgetAmount(' 200 ', '--budget-month'), 200_000_000);
  assert.equal(parseBudgetAmount('0.000001', '--budget-day'), 1);
  assert.equal(parseBudgetAmount('9007199254.740991', '--budget-day'), Number.MAX_SAFE_INTEGER);
  for (const text of ['', '-1', '1e3', '¥10', '1,000', '.5', '1.', '0.0000001', '9007199254.740992']) {
    assert.throws(
      () => parseBudgetAmount(text, '--budget-day'),
      (err: HerdError) => err.code === 'INVALID_ARG' && err.param === '--budget-day',
      text,
    );
  }
  assert.throws(() => parseBudgetAmount('0.1234567', '--budget-day'), /more than 6 decimals \(0\.1234567\)/);
  assert.deepEqual([12_500_000, 100_000, 0, 1, 200_000_000, 1_234_567].map(formatBudgetAmount), ['12.50', '0.10', '0.00', '0.000001', '200.00', '1.234567']);
});
