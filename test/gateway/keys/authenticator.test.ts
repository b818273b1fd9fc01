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
import { SqliteKeyStore } from '../../../src/gateway/keys/sqlite-key-store.ts';

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
  const store = SqliteKeyStore.open(tempDb());
  try {
    await store.create({ name: 'someone', allowedModels: '*' });
    const auth = new Authenticator({ store });
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
    store.close();
  }
});

test('a stored key authenticates; its model list is enforced with PERMISSION_DENIED naming the model', async () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    const { secret } = await store.create({ name: 'ci-bot', allowedModels: ['gpt-4.1', 'deepseek-v3.2'] });
    const auth = new Authenticator({ store });
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
    store.close();
  }
});

test('the master key is an admin key valid for every model; other keys are not admins', async () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    const { secret } = await store.create({ name: 'user', allowedModels: ['m'] });
    const auth = new Authenticator({ store, masterKey: MASTER, masterKeyEnv: 'MY_ADMIN_KEY' });
    const master = expectKey(auth.authenticate(`Bearer ${MASTER}`));
    assert.equal(master.role, 'admin');
    assert.equal(master.name, 'master ($MY_ADMIN_KEY)');
    assert.equal(auth.authorizeModel(master, 'anything-at-all'), undefined);
    assert.equal(expectKey(auth.authenticate(`Bearer ${secret}`)).role, 'client');
    assert.equal(expectError(auth.authenticate(`Bearer ${MASTER}x`)).code, 'UNAUTHENTICATED');
    assert.equal(expectError(auth.authenticate(`Bearer ${MASTER.slice(0, -1)}`)).code, 'UNAUTHENTICATED');
  } finally {
    store.close();
  }
});

test('a master key alone (no stored keys) closes the gateway', () => {
  const store = SqliteKeyStore.open(tempDb());
  try {
    const auth = new Authenticator({ store, masterKey: MASTER });
    assert.equal(auth.isOpen(), false);
    assert.equal(expectError(auth.authenticate(undefined)).message, MISSING_KEY_MESSAGE);
  } finally {
    store.close();
  }
});

test('open mode: no master key and no keys lets local clients in with any header, refuses remote ones, and latches shut once a key exists', async () => {
  const path = tempDb();
  const store = SqliteKeyStore.open(path);
  const cli = SqliteKeyStore.open(path);
  try {
    const auth = new Authenticator({ store });
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
    store.close();
    cli.close();
  }
});

test('a key store that fails answers UNAVAILABLE (fail closed), never a key', async () => {
  const store = SqliteKeyStore.open(tempDb());
  const { secret } = await store.create({ name: 'x', allowedModels: '*' });
  const auth = new Authenticator({ store });
  store.close();
  const err = expectError(auth.authenticate(`Bearer ${secret}`));
  assert.equal(err.code, 'UNAVAILABLE');
  assert.match(err.message, /key store .* is closed/);
});

test('createGatewayAuth reads the master key from the variable named in config and warns when open', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-auth-'));
  const open = createGatewayAuth({ db: `sqlite:${join(dir, 'a', 'herd.db')}` }, {});
  try {
    assert.equal(open.authenticator.isOpen(), true);
    assert.match(open.openWarning ?? '', /no gateway keys exist and HERD_MASTER_KEY is not set: .*127\.0\.0\.1 only/);
    assert.ok(!open.openWarning?.includes(MASTER));
  } finally {
    open.close();
  }
  const closed = createGatewayAuth({ db: join(dir, 'b.db'), master_key_env: 'ADMIN' }, { ADMIN: ` ${MASTER}\n`, HERD_MASTER_KEY: 'ignored-because-not-named' });
  try {
    assert.equal(closed.openWarning, undefined);
    assert.equal(expectKey(closed.authenticator.authenticate(`Bearer ${MASTER}`)).role, 'admin');
    assert.equal(expectError(closed.authenticator.authenticate('Bearer ignored-because-not-named')).code, 'UNAUTHENTICATED');
  } finally {
    closed.close();
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
