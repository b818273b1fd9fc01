// A key store file from before #28 (migrations 1 and 2) opened by this Herd: migration 3 keeps every key,
// its secret, limits and budgets (as rules), renames later active duplicates of a name, and leaves revoked keys revoked.
// Also: validation of key and team fields, and budget amounts converted to micros exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { HerdError } from '../../../src/core/errors.ts';
import { formatBudgetAmount, parseBudgetAmount } from '../../../src/gateway/keys/budget-amount.ts';
import { hashKeySecret } from '../../../src/gateway/keys/create-key-secret.ts';
import { KEY_STORE_SCOPE, keyStoreMigrations } from '../../../src/gateway/keys/key-store-migrations.ts';
import type { KeyFields } from '../../../src/gateway/keys/key-store.ts';
import { openKeyStore } from '../../../src/gateway/keys/open-key-store.ts';
import { validateKeyFields, validateTeamFields } from '../../../src/gateway/keys/validate-key-fields.ts';
import { applySqliteMigrations } from '../../../src/gateway/storage/apply-sqlite-migrations.ts';
import { ctx } from './key-store-harness.ts';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'herd-key-migration-')), 'herd.db');
const legacySecret = (c: string) => `sk-herd-${c.repeat(43)}`;

test('keys from a version-2 file keep working after migration 3: secrets, limits, budgets as rules', async () => {
  const path = tempDb();
  const db = new Database(path);
  applySqliteMigrations(db, KEY_STORE_SCOPE, keyStoreMigrations.slice(0, 2));
  const insert = db.prepare(
    `INSERT INTO gateway_keys (id, name, key_hash, prefix, allowed_models, created_at, revoked_at, budget_day_micros, budget_month_micros, rpm, default_priority)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  insert.run('key_000000000001', 'ci', hashKeySecret(legacySecret('a')), 'sk-herd-aaaa', '["gpt-4.1"]', 1, null, 5_000_000, 90_000_000, 60, 'BATCH');
  insert.run('key_000000000002', 'ci', hashKeySecret(legacySecret('b')), 'sk-herd-bbbb', '"*"', 2, null, null, null, null, null);
  insert.run('key_000000000003', 'ci', hashKeySecret(legacySecret('c')), 'sk-herd-cccc', '"*"', 3, 10, null, 1, null, null);
  insert.run('key_000000000004', 'broken', hashKeySecret(legacySecret('d')), 'sk-herd-dddd', 'not json', 4, null, null, null, null, null);
  db.close();

  const store = await openKeyStore(path);
  try {
    const a = store.lookup(legacySecret('a'));
    assert.equal(a.state, 'active');
    if (a.state !== 'active') return;
    assert.equal(a.key.id, 'key_000000000001');
    assert.deepEqual(a.key.allowedModels, ['gpt-4.1']);
    assert.deepEqual(a.key.budgets, [
      { period: 'day', amountMicros: 5_000_000 },
      { period: 'month', amountMicros: 90_000_000 },
    ]);
    assert.equal(a.key.timezone, 'UTC');
    assert.equal(a.key.rpm, 60);
    assert.equal(a.key.defaultPriority, 'BATCH');
    assert.equal(a.key.role, 'client');
    const b = store.lookup(legacySecret('b'));
    assert.equal(b.state === 'active' && b.key.name, 'ci-key_000000000002', 'a later active duplicate is renamed');
    assert.equal(b.state === 'active' && b.key.allowedModels, '*');
    assert.equal(store.lookup(legacySecret('c')).state, 'revoked');
    const broken = store.lookup(legacySecret('d'));
    assert.deepEqual(broken.state === 'active' && broken.key.allowedModels, [], 'unreadable models allow nothing');
    assert.equal((await store.findKey('ci')).id, 'key_000000000001');
    assert.equal((await store.findKey('sk-herd-aaaa')).id, 'key_000000000001', 'by legacy display prefix');

    const rotated = await store.rotateKey('ci', { graceMs: 0 }, ctx);
    assert.ok(rotated.secret.startsWith('sk-herd-key_000000000001-'), 'a legacy key keeps its id through rotation');
    assert.equal(store.lookup(rotated.secret).state, 'active');
    assert.equal(store.lookup(legacySecret('a')).state, 'rotated');
  } finally {
    await store.close();
  }
  const check = new Database(path, { readonly: true });
  assert.deepEqual(check.prepare("SELECT version FROM schema_migrations WHERE scope = 'keys' ORDER BY version").all(), [
    { version: 1 },
    { version: 2 },
    { version: 3 },
    { version: 4 },
  ]);
  check.close();
});

test('invalid fields are refused, naming the field', () => {
  const now = Date.now();
  const bad: [Partial<KeyFields>, string][] = [
    [{ rpm: 0 }, 'rpm'],
    [{ tpm: 1.5 }, 'tpm'],
    [{ maxConcurrency: -1 }, 'maxConcurrency'],
    [{ budgets: [{ period: 'day', amountMicros: -1 }] }, 'budgets[0]'],
    [{ budgets: [{ period: 'year' as 'day', amountMicros: 1 }] }, 'budgets[0]'],
    [
      {
        budgets: [
          { period: 'day', amountMicros: 1 },
          { period: 'day', amountMicros: 2 },
        ],
      },
      'budgets[1]',
    ],
    [{ defaultPriority: 'URGENT' as 'HIGH' }, 'defaultPriority'],
    [{ timezone: 'Nowhere/Special' }, 'timezone'],
    [{ allowedCidrs: ['300.0.0.0/8'] }, 'allowedCidrs'],
    [{ allowedCidrs: ['::1/129'] }, 'allowedCidrs'],
    [{ alertThresholds: [0] }, 'alertThresholds'],
    [{ role: 'root' as 'admin' }, 'role'],
    [{ role: 'manager' }, 'role'],
    [{ expiresAt: now - 1 }, 'expiresAt'],
    [{ allowedModels: ['*', 'gpt-4o'] }, 'allowedModels'],
    [{ name: 'team/x' }, 'name'],
    [{ name: 'hk_lookalike' }, 'name'],
    [{ tags: [''] }, 'tags'],
  ];
  for (const [fields, param] of bad) {
    assert.throws(
      () => validateKeyFields({ name: 'x', ...fields }, now),
      (err: HerdError) => err.code === 'INVALID_ARG' && err.param === param,
      param,
    );
  }
  const good = validateKeyFields({ name: ' x ', allowedModels: ['gpt-4o*', 'gpt-4o*'], allowedCidrs: ['10.1.0.0/16', '::1'], alertThresholds: [100, 50, 80, 50] }, now);
  assert.deepEqual(good.policy.allowedModels, ['gpt-4o*']);
  assert.deepEqual(good.policy.allowedCidrs, ['10.1.0.0/16', '::1/128']);
  assert.deepEqual(good.policy.alertThresholds, [50, 80, 100]);
  assert.equal(good.name, 'x');
  assert.throws(
    () => validateTeamFields({ name: '' }),
    (err: HerdError) => err.param === 'name',
  );
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
