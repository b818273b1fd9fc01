// The per-address count of incorrect keys: refusal at the limit for the rest of the window, other
// addresses untouched, the Authenticator refusing even a right key from a refused address, bounded memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HerdError } from '../../../src/core/errors.ts';
import { AuthFailureLimiter } from '../../../src/gateway/keys/auth-failure-limiter.ts';
import { resolveAuthSettings } from '../../../src/gateway/keys/auth-settings.ts';
import { Authenticator } from '../../../src/gateway/keys/authenticator.ts';
import { constantTimeEqualHex, hashKeySecret } from '../../../src/gateway/keys/create-key-secret.ts';
import { TestKeys } from '../../helpers/test-keys.ts';

test('an address is refused once it reaches the limit, until its window ends; others are not', () => {
  let now = 1_000_000;
  const limiter = new AuthFailureLimiter({ maxFailures: 3, windowMs: 60_000 }, () => now);
  for (let i = 0; i < 3; i++) {
    assert.equal(limiter.refusal('10.0.0.1'), undefined);
    limiter.recordFailure('10.0.0.1');
  }
  assert.equal(limiter.refusal('10.0.0.1'), 60);
  assert.equal(limiter.refusal('10.0.0.2'), undefined);
  now += 59_500;
  assert.equal(limiter.refusal('10.0.0.1'), 1);
  now += 500;
  assert.equal(limiter.refusal('10.0.0.1'), undefined);
  assert.equal(limiter.trackedAddresses, 0);
});

test('max_failures 0 turns the limit off', () => {
  const limiter = new AuthFailureLimiter({ maxFailures: 0, windowMs: 1000 });
  for (let i = 0; i < 100; i++) limiter.recordFailure('10.0.0.1');
  assert.equal(limiter.refusal('10.0.0.1'), undefined);
  assert.equal(limiter.trackedAddresses, 0);
});

test('a spray of addresses keeps memory bounded', () => {
  const limiter = new AuthFailureLimiter({ maxFailures: 5, windowMs: 60_000 }, () => 0);
  for (let i = 0; i < 25_000; i++) limiter.recordFailure(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
  assert.ok(limiter.trackedAddresses <= 10_000, `${limiter.trackedAddresses} addresses tracked`);
});

test('the Authenticator refuses every key from a guessing address with RATE_LIMITED and Retry-After, not the same key from elsewhere', async () => {
  const store = await TestKeys.open(join(mkdtempSync(join(tmpdir(), 'herd-auth-limit-')), 'herd.db'));
  try {
    const { secret } = await store.create({ name: 'someone', allowedModels: '*' });
    const auth = new Authenticator({ store: store.store, failureLimit: { maxFailures: 2, windowMs: 30_000 }, now: () => 5 });
    for (let i = 0; i < 2; i++) {
      const result = auth.authenticate('Bearer sk-herd-wrong-guess-000000000000', '203.0.113.9');
      assert.ok(result instanceof HerdError && result.code === 'UNAUTHENTICATED');
    }
    const refused = auth.authenticate(`Bearer ${secret}`, '203.0.113.9');
    assert.ok(refused instanceof HerdError);
    assert.equal(refused.code, 'RATE_LIMITED');
    assert.equal(refused.retryAfterSeconds, 30);
    assert.ok(!refused.message.includes(secret));
    const elsewhere = auth.authenticate(`Bearer ${secret}`, '203.0.113.10');
    assert.ok(!(elsewhere instanceof HerdError), 'another address is not affected');
  } finally {
    await store.close();
  }
});

test('herd.yaml auth.failed_keys reaches the settings; the default limit is on', () => {
  assert.deepEqual(resolveAuthSettings({ failed_keys: { max_per_address: 5, window_s: 10 } }).failureLimit, { maxFailures: 5, windowMs: 10_000 });
  assert.deepEqual(resolveAuthSettings(undefined).failureLimit, { maxFailures: 20, windowMs: 60_000 });
});

test('key digests are compared in constant time, whatever the lengths', () => {
  const a = hashKeySecret('sk-herd-a');
  assert.equal(constantTimeEqualHex(a, hashKeySecret('sk-herd-a')), true);
  assert.equal(constantTimeEqualHex(a, hashKeySecret('sk-herd-b')), false);
  assert.equal(constantTimeEqualHex(a, a.slice(0, 10)), false);
});
