// The Authenticator as the HTTP layer uses it: OpenAI's messages for a missing or wrong key, 403 for
// a model the key may not use, the master key, and the open (keyless, local-only) mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HerdError } from '../../../src/core/errors.ts';
import { readMasterKey, resolveAuthSettings } from '../../../src/gateway/keys/auth-settings.ts';
import { Authenticator, isLoopbackAddress, MISSING_KEY_MESSAGE, parseBearerToken, type AuthResult } from '../../../src/gateway/keys/authenticator.ts';
import { createGatewayAuth } from '../../../src/gateway/keys/create-gateway-auth.ts';
import { TEST_CHANGE, TestKeys } from '../../helpers/test-keys.ts';

const MASTER = 'master-key-for-tests-0123456789';
const tempDb = () => join(mkdtempSync(join(tmpdir(), 'herd-auth-')), 'herd.db');

function expectError(result: AuthResult): HerdError {
  assert.ok(result instanceof HerdError, `expected an error, got ${JSON.stringify(result)}`);
  return result;
}

function expectKey(result: AuthResult) {
  assert.ok(!(result instanceof HerdError), `expected a key, got ${result instanceof HerdError ? result.message : ''}`);
  return result.key;
}

test('missing, malformed and wrong keys get OpenAI-worded UNAUTHENTICATED errors', async () => {
  const store = await TestKeys.open(tempDb());
  try {
    await store.create({ name: 'someone', allowedModels: '*' });
    const auth = new Authenticator({ store: store.store });
    assert.equal(auth.isOpen(), false);
    for (const header of [undefined, '', 'Bearer', 'Bearer    ', 'Basic dXNlcjpwYXNz', 'sk-herd-no-scheme-given-here-at-all']) {
      const err = expectError(auth.authenticate(header));
      assert.equal(err.code, 'UNAUTHENTICATED');
      assert.equal(err.message, MISSING_KEY_MESSAGE);
    }
    assert.equal(
      MISSING_KEY_MESSAGE,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    );
    const wrong = expectError(auth.authenticate('Bearer sk-herd-abCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGwxyz'));
    assert.equal(wrong.code, 'UNAUTHENTICATED');
    assert.equal(wrong.message, 'Incorrect API key provided: sk-herd-ab****wxyz.');
    assert.equal(expectError(auth.authenticate('bearer hunter2')).message, 'Incorrect API key provided: ****.');
  } finally {
    await store.close();
  }
});

test('a stored key authenticates; its model list is enforced with PERMISSION_DENIED naming the model', async () => {
  const store = await TestKeys.open(tempDb());
  try {
    const { secret } = await store.create({ name: 'ci-bot', allowedModels: ['gpt-4.1', 'deepseek-v3.2'] });
    const auth = new Authenticator({ store: store.store });
    const key = expectKey(auth.authenticate(`Bearer ${secret}`));
    assert.equal(key.name, 'ci-bot');
    assert.equal(expectKey(auth.authenticate(`  BEARER   ${secret}  `)).name, 'ci-bot', 'scheme is case-insensitive, whitespace ignored');
    assert.equal(auth.authorizeModel(key, 'gpt-4.1'), undefined);
    const denied = auth.authorizeModel(key, 'claude-sonnet-4.5');
    assert.ok(denied);
    assert.equal(denied.code, 'PERMISSION_DENIED');
    assert.equal(denied.param, 'model');
    assert.equal(denied.message, "The API key 'ci-bot' is not allowed to use the model 'claude-sonnet-4.5'. Models it may use: gpt-4.1, deepseek-v3.2.");
  } finally {
    await store.close();
  }
});

test('the master key is an admin key valid for every model; other keys are not admins', async () => {
  const store = await TestKeys.open(tempDb());
  try {
    const { secret } = await store.create({ name: 'user', allowedModels: ['m'] });
    const auth = new Authenticator({ store: store.store, masterKey: MASTER, masterKeyEnv: 'MY_ADMIN_KEY' });
    const master = expectKey(auth.authenticate(`Bearer ${MASTER}`));
    assert.equal(master.role, 'admin');
    assert.equal(master.name, 'master ($MY_ADMIN_KEY)');
    assert.equal(auth.authorizeModel(master, 'anything-at-all'), undefined);
    assert.equal(expectKey(auth.authenticate(`Bearer ${secret}`)).role, 'client');
    assert.equal(expectError(auth.authenticate(`Bearer ${MASTER}x`)).code, 'UNAUTHENTICATED');
    assert.equal(expectError(auth.authenticate(`Bearer ${MASTER.slice(0, -1)}`)).code, 'UNAUTHENTICATED');
  } finally {
    await store.close();
  }
});

test('a master key alone (no stored keys) closes the gateway', async () => {
  const store = await TestKeys.open(tempDb());
  try {
    const auth = new Authenticator({ store: store.store, masterKey: MASTER });
    assert.equal(auth.isOpen(), false);
    assert.equal(expectError(auth.authenticate(undefined)).message, MISSING_KEY_MESSAGE);
  } finally {
    await store.close();
  }
});

test('open mode: no master key and no keys lets local clients in with any header, refuses remote ones, and latches shut once a key exists', async () => {
  const path = tempDb();
  const store = await TestKeys.open(path);
  const cli = await TestKeys.open(path);
  try {
    const auth = new Authenticator({ store: store.store });
    assert.equal(auth.isOpen(), true);
    assert.equal(expectKey(auth.authenticate(undefined)).id, 'anonymous');
    assert.equal(expectKey(auth.authenticate('Bearer EMPTY', '127.0.0.1')).id, 'anonymous', 'the openai SDK always sends some key');
    assert.equal(expectKey(auth.authenticate(undefined, '::ffff:127.0.0.1')).id, 'anonymous');
    assert.equal(expectError(auth.authenticate(undefined, '10.0.0.7')).code, 'UNAUTHENTICATED');

    const { key, secret } = await cli.create({ name: 'first', allowedModels: '*' });
    assert.equal(auth.isOpen(), false, 'a key created by the CLI closes the gateway at once');
    assert.equal(expectError(auth.authenticate(undefined)).message, MISSING_KEY_MESSAGE);
    assert.equal(expectKey(auth.authenticate(`Bearer ${secret}`)).id, key.id);

    await cli.revoke(key.id);
    assert.equal(auth.isOpen(), false, 'revoking every key does not reopen it');
    assert.equal(expectError(auth.authenticate(`Bearer ${secret}`)).code, 'UNAUTHENTICATED');
  } finally {
    await store.close();
    await cli.close();
  }
});

test('a key store that fails answers UNAVAILABLE (fail closed), never a key', async () => {
  const store = await TestKeys.open(tempDb());
  const { secret } = await store.create({ name: 'x', allowedModels: '*' });
  const auth = new Authenticator({ store: store.store });
  await store.close();
  const err = expectError(auth.authenticate(`Bearer ${secret}`));
  assert.equal(err.code, 'UNAVAILABLE');
  assert.match(err.message, /key store .* is closed/);
});

test('createGatewayAuth reads the master key from the variable named in config and warns when open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-auth-'));
  const open = await createGatewayAuth({ db: `sqlite:${join(dir, 'a', 'herd.db')}` }, {});
  try {
    assert.equal(open.authenticator.isOpen(), true);
    assert.match(open.openWarning ?? '', /no gateway keys exist and HERD_MASTER_KEY is not set: .*127\.0\.0\.1 only/);
    assert.ok(!open.openWarning?.includes(MASTER));
  } finally {
    await open.close();
  }
  const closed = await createGatewayAuth({ db: join(dir, 'b.db'), master_key_env: 'ADMIN' }, { ADMIN: ` ${MASTER}\n`, HERD_MASTER_KEY: 'ignored-because-not-named' });
  try {
    assert.equal(closed.openWarning, undefined);
    assert.equal(expectKey(closed.authenticator.authenticate(`Bearer ${MASTER}`)).role, 'admin');
    assert.equal(expectError(closed.authenticator.authenticate('Bearer ignored-because-not-named')).code, 'UNAUTHENTICATED');
  } finally {
    await closed.close();
  }
});

test('auth settings: defaults, blank master keys ignored, bearer parsing, loopback addresses', () => {
  const failureLimit = { maxFailures: 20, windowMs: 60_000 };
  assert.deepEqual(resolveAuthSettings(undefined), { masterKeyEnv: 'HERD_MASTER_KEY', keyStore: './data/herd.db', failureLimit });
  assert.deepEqual(resolveAuthSettings({ master_key_env: 'X', db: '/k.db' }), { masterKeyEnv: 'X', keyStore: '/k.db', failureLimit });
  assert.equal(readMasterKey({ K: '   ' }, 'K'), undefined);
  assert.equal(readMasterKey({}, 'K'), undefined);
  assert.equal(parseBearerToken('Bearer a b'), 'a b');
  assert.ok(isLoopbackAddress('::1') && isLoopbackAddress('127.0.0.2') && !isLoopbackAddress('10.1.2.3') && !isLoopbackAddress('::ffff:10.0.0.1'));
});

test('a key that cannot be used says why: rotated past its grace, expired, revoked, blocked, or used from outside its CIDRs', async () => {
  let now = Date.now();
  const keys = await TestKeys.open(tempDb());
  try {
    const store = keys.store;
    const auth = new Authenticator({ store, now: () => now });
    const { secret: old, key } = await keys.create({ name: 'ci-bot', allowedModels: '*' });
    const rotated = await store.rotateKey('ci-bot', { graceMs: 60_000 }, TEST_CHANGE);
    assert.equal(rotated.key.id, key.id, 'a rotation keeps the public id');
    assert.equal(expectKey(auth.authenticate(`Bearer ${old}`)).id, key.id, 'the old secret works through its grace');
    assert.equal(expectKey(auth.authenticate(`Bearer ${rotated.secret}`)).id, key.id);

    const blocked = await store.setBlocked(key.id, true, TEST_CHANGE);
    assert.equal(blocked.blocked, true);
    const refusal = expectError(auth.authenticate(`Bearer ${rotated.secret}`));
    assert.equal(refusal.code, 'PERMISSION_DENIED');
    assert.equal(refusal.reason, 'key_blocked');
    assert.match(refusal.message, /^The API key 'ci-bot' \(hk_\w+\) is blocked by an administrator\./);
    await store.setBlocked(key.id, false, TEST_CHANGE);

    const expiring = await keys.create({ name: 'temp', allowedModels: '*', expiresAt: now + 1000 });
    assert.ok(!(auth.authenticate(`Bearer ${expiring.secret}`) instanceof HerdError));
    const narrow = await keys.create({ name: 'office', allowedModels: '*', allowedCidrs: ['10.0.0.0/8', '2001:db8::/32'] });
    assert.ok(!(auth.authenticate(`Bearer ${narrow.secret}`, '10.1.2.3') instanceof HerdError));
    assert.ok(!(auth.authenticate(`Bearer ${narrow.secret}`, '::ffff:10.1.2.3') instanceof HerdError));
    assert.ok(!(auth.authenticate(`Bearer ${narrow.secret}`, '2001:db8::7') instanceof HerdError));
    const outside = expectError(auth.authenticate(`Bearer ${narrow.secret}`, '192.0.2.7'));
    assert.equal(outside.reason, 'address_not_allowed');
    assert.equal(outside.message, "The API key 'office' may only be used from 10.0.0.0/8, 2001:db8::/32; this request came from 192.0.2.7.");

    now += 61_000;
    const late = expectError(auth.authenticate(`Bearer ${old}`));
    assert.equal(late.reason, 'key_rotated');
    assert.match(late.message, /^The API key 'ci-bot' \(hk_\w+\) was rotated on \d{4}-\d\d-\d\d \d\d:\d\d UTC; this secret's grace period is over\. Use the new secret\.$/);
    assert.ok(!late.message.includes(old));
    const expired = expectError(auth.authenticate(`Bearer ${expiring.secret}`));
    assert.equal(expired.reason, 'key_expired');
    await keys.revoke(key.id);
    const revoked = expectError(auth.authenticate(`Bearer ${rotated.secret}`));
    assert.equal(revoked.reason, 'key_revoked');
    assert.equal(revoked.code, 'UNAUTHENTICATED');
  } finally {
    await keys.close();
  }
});

test("a team's allowed models bind its keys too, and the refusal names the team", async () => {
  const keys = await TestKeys.open(tempDb());
  try {
    await keys.store.createTeam({ name: 'research', allowedModels: ['gpt-4.1'] }, TEST_CHANGE);
    const { secret } = await keys.create({ name: 'alice', team: 'research', allowedModels: ['gpt-4.1', 'claude-sonnet-4.5'] });
    const auth = new Authenticator({ store: keys.store });
    const key = expectKey(auth.authenticate(`Bearer ${secret}`));
    assert.equal(key.team?.name, 'research');
    assert.equal(auth.authorizeModel(key, 'gpt-4.1'), undefined);
    const denied = auth.authorizeModel(key, 'claude-sonnet-4.5');
    assert.equal(denied?.reason, 'model_not_allowed');
    assert.equal(
      denied?.message,
      "The API key 'alice' is not allowed to use the model 'claude-sonnet-4.5' (its team 'research' allows: gpt-4.1). Models it may use: gpt-4.1, claude-sonnet-4.5.",
    );
  } finally {
    await keys.close();
  }
});
