// Which keys and values the Settings page masks, and which it must not (names of variables, ordinary settings).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { looksSecretKey, looksSecretVariable, maskConfigValue, maskUrlSecrets, namesVariable } from '../../src/config/mask-config-secrets.ts';

test('secret-looking keys, and keys that only look alike', () => {
  for (const key of [
    'key',
    'api_key',
    'apiKey',
    'x-api-key',
    'secret',
    'client_secret',
    'password',
    'password_hash',
    'token',
    'x-auth-token',
    'authorization',
    'proxy-authorization',
    'credentials',
    'private_key',
  ]) {
    assert.equal(looksSecretKey(key), true, key);
  }
  for (const key of [
    'key_prefix',
    'max_tokens',
    'max_prompt_tokens',
    'failed_keys',
    'auth',
    'master_key_env',
    'secret_env',
    'password_env',
    'api_key_env',
    'http_port',
    'tokenizer',
  ]) {
    assert.equal(looksSecretKey(key), false, key);
  }
  assert.equal(namesVariable('api_key_env'), true);
  assert.equal(namesVariable('environment'), false);
});

test('URLs: the password and secret-looking query parameters are masked, the rest shown', () => {
  assert.equal(maskUrlSecrets('postgres://u:p@h:5432/db'), 'postgres://u:••••@h:5432/db');
  assert.equal(maskUrlSecrets('redis://:hunter2@cache:6379/0'), 'redis://:••••@cache:6379/0');
  assert.equal(maskUrlSecrets('postgres://u@h/db'), 'postgres://u@h/db');
  assert.equal(maskUrlSecrets('postgres://h/db?user=u&password=p&sslmode=require'), 'postgres://h/db?user=u&password=••••&sslmode=require');
  // An unencoded @ or / in a password: masked whole, never in part.
  assert.equal(maskUrlSecrets('postgres://u:p@ss/w@h/db'), 'postgres://u:••••@h/db');
  assert.equal(maskUrlSecrets('./data/herd.db'), './data/herd.db');
  assert.equal(maskUrlSecrets('user:pass@host'), 'user:pass@host');
});

test('a value under a secret key is masked whole, an *_env field is not, arrays of strings item by item', () => {
  assert.equal(maskConfigValue(['credentials', 'user'], 'credentials.user', 'bob'), '••••');
  assert.equal(maskConfigValue(['credentials', 'password_env'], 'credentials.password_env', 'PW'), 'PW');
  assert.equal(maskConfigValue(['a', 'token'], 'a.token', 42), '••••');
  assert.deepEqual(maskConfigValue(['server', 'http_restricted_api'], 'server.http_restricted_api', ['inference:x-k=v', 'health:a=b=c']), ['inference:x-k=••••', 'health:a=••••']);
  assert.equal(maskConfigValue(['server', 'restricted_api', 'logging'], 'server.restricted_api.logging', 'master'), 'master');
  assert.deepEqual(maskConfigValue(['cache', 'redis', 'url'], 'cache.redis.url', 'rediss://u:p@r:6380'), 'rediss://u:••••@r:6380');
  assert.equal(maskConfigValue(['server', 'http_port'], 'server.http_port', 8000), 8000);
});

test('variables named like secrets, wherever the secret word stands', () => {
  for (const name of ['RELAY_TOKEN', 'PG_PASSWORD_PROD', 'HELICONE_AUTH', 'OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY']) assert.equal(looksSecretVariable(name), true, name);
  for (const name of ['HOST', 'DATABASE_URL', 'HERD_PORT', 'REGION']) assert.equal(looksSecretVariable(name), false, name);
  assert.equal(maskConfigValue(['providers', 'p', 'headers', 'x-team'], 'providers.p.headers.x-team', 'v', ['TEAM_TOKEN']), '••••');
  assert.equal(maskConfigValue(['billing', 'ledger'], 'billing.ledger', 'postgres://u:p@h/db', ['PG_PASSWORD']), 'postgres://u:••••@h/db');
});
