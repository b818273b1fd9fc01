// Per-key RPM, TPM and concurrency on one replica (memory store, ManualClock): sliding windows
// with exact Retry-After, token reservations corrected on settle, slots freed on settle, and one
// atomic decision (a request refused by one limit consumes none of the others).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/core/clock.ts';
import { HerdError } from '../../../src/core/errors.ts';
import { estimateTokenReservation, KeyLimiter, type KeyRateLimits } from '../../../src/gateway/limits/key-limiter.ts';
import { MemoryLimitStore } from '../../../src/gateway/limits/memory-limit-store.ts';

function setup() {
  const clock = new ManualClock();
  const store = new MemoryLimitStore(clock);
  return { clock, store, limiter: new KeyLimiter({ store, clock }) };
}

const key = (limits: Partial<KeyRateLimits>): KeyRateLimits => ({ id: 'key_0123456789ab', name: 'ci-bot', ...limits });

async function refusal(promise: Promise<unknown>): Promise<HerdError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof HerdError, String(err));
    return err;
  }
  assert.fail('expected RATE_LIMITED');
}

test('RPM is a sliding window: the 11th request waits until the oldest one is a minute old', async () => {
  const { clock, limiter } = setup();
  const k = key({ rpm: 10 });
  for (let i = 0; i < 10; i++) {
    await limiter.reserve(k, 0);
    clock.advance(1000); // requests at t = 0 s … 9 s
  }
  const err = await refusal(limiter.reserve(k, 0));
  assert.equal(err.code, 'RATE_LIMITED');
  assert.equal(err.retryAfterSeconds, 50, 'the first request (t = 0) leaves the window at t = 60 s; now is 10 s');
  assert.equal(err.message, "Rate limit reached for key 'ci-bot' on requests per min (RPM): Limit 10, Used 10, Requested 1. Please try again in 50.0s.");

  clock.advance(49_999);
  await assert.rejects(limiter.reserve(k, 0), (e: HerdError) => e.retryAfterSeconds === 1);
  clock.advance(1);
  await limiter.reserve(k, 0); // t = 60 s: exactly one slot came back
  await assert.rejects(limiter.reserve(k, 0), (e: HerdError) => e.retryAfterSeconds === 1, 'the t = 1 s request leaves at 61 s');
  // No boundary burst as with fixed windows: at most 10 in any 60 s span.
});

test('TPM holds the estimate, then settle corrects it to what was used', async () => {
  const { clock, limiter } = setup();
  const k = key({ tpm: 1000 });
  const first = await limiter.reserve(k, 800);
  assert.equal(first.reservedTokens, 800);
  const err = await refusal(limiter.reserve(k, 300));
  assert.match(err.message, /on tokens per min \(TPM\): Limit 1000, Used 800, Requested 300\. Please try again in 60\.0s\./);
  assert.equal(err.retryAfterSeconds, 60);

  await first.settle(150); // the answer was short
  const second = await limiter.reserve(k, 300);
  await limiter.reserve(k, 550); // 150 + 300 + 550 = 1000: exactly at the limit is allowed
  await assert.rejects(limiter.reserve(k, 1));
  await second.settle(400); // more than reserved: counted as used
  clock.advance(10_000);
  const later = await refusal(limiter.reserve(k, 100));
  assert.match(later.message, /Used 1100, Requested 100/);
  assert.equal(later.retryAfterSeconds, 50);
  await second.settle(0); // settle is once: the second call changes nothing
  await assert.rejects(limiter.reserve(k, 100));
});

test('a request larger than the TPM limit is refused without a Retry-After: waiting cannot help', async () => {
  const { limiter } = setup();
  const err = await refusal(limiter.reserve(key({ tpm: 1000 }), 4096));
  assert.equal(err.code, 'RATE_LIMITED');
  assert.equal(err.retryAfterSeconds, undefined);
  assert.equal(err.param, 'max_tokens');
  assert.match(err.message, /^Request too large for key 'ci-bot' on tokens per min \(TPM\): Limit 1000, Requested 4096\./);
});

test('max concurrency: a slot is held until settle, whatever the request did', async () => {
  const { limiter } = setup();
  const k = key({ maxConcurrency: 2 });
  const a = await limiter.reserve(k, 10);
  const b = await limiter.reserve(k, 10);
  const err = await refusal(limiter.reserve(k, 10));
  assert.equal(err.retryAfterSeconds, 1);
  assert.match(err.message, /on concurrent requests: Limit 2, In flight 2\./);
  await a.settle(0);
  const c = await limiter.reserve(k, 10);
  await a.settle(0); // idempotent: does not free c's or b's slot
  await assert.rejects(limiter.reserve(k, 10));
  await Promise.all([b.settle(5), c.settle(5)]);
  await limiter.reserve(k, 10);
});

test('one atomic decision: a refusal by one limit records nothing against the others', async () => {
  const { limiter } = setup();
  const k = key({ rpm: 3, tpm: 100, maxConcurrency: 5 });
  await limiter.reserve(k, 90);
  for (let i = 0; i < 5; i++) await assert.rejects(limiter.reserve(k, 50), /tokens per min/);
  // Had the refused requests counted, RPM (3) would long be exhausted.
  await limiter.reserve(k, 10);
  await limiter.reserve(k, 0);
  const err = await refusal(limiter.reserve(k, 0));
  assert.match(err.message, /requests per min/);
});

test('the refusal reported is the one that makes the client wait longest', async () => {
  const { clock, limiter } = setup();
  const k = key({ rpm: 2, tpm: 100 });
  await limiter.reserve(k, 0); // t = 0
  clock.advance(30_000);
  await limiter.reserve(k, 100); // t = 30 s
  clock.advance(10_000);
  // RPM frees at 60 s (20 s away), TPM only at 90 s (50 s away): the client hears 50.
  const err = await refusal(limiter.reserve(k, 10));
  assert.equal(err.retryAfterSeconds, 50);
  assert.match(err.message, /tokens per min/);
});

test('a key without limits never touches the store', async () => {
  const { limiter, store } = setup();
  store.acquire = () => assert.fail('no limits, no store call');
  const ticket = await limiter.reserve(key({}), 1_000_000);
  assert.equal(ticket.reservedTokens, 0);
  await ticket.settle(5);
});

test('token reservation: prompt + max tokens, else the prompt again (the router forecast)', () => {
  assert.equal(estimateTokenReservation(120, { max_completion_tokens: 500, max_tokens: 9 }), 620);
  assert.equal(estimateTokenReservation(120, { max_tokens: 300 }), 420);
  assert.equal(estimateTokenReservation(120, {}), 240);
});

test("a team's limits apply across its keys, and a team refusal gives back what the key's step took", async () => {
  const { limiter } = setup();
  const team = { id: 'tm_research', name: 'research', rpm: 3, maxConcurrency: 2 };
  const a = key({ id: 'hk_a', name: 'alice', rpm: 10, maxConcurrency: 1, team });
  const b = key({ id: 'hk_b', name: 'bob', rpm: 10, team });
  const held = await limiter.reserve(a, 0);
  const held2 = await limiter.reserve(b, 0);
  const err = await refusal(limiter.reserve(b, 0));
  assert.match(err.message, /^Rate limit reached for team 'research' on concurrent requests: Limit 2, In flight 2\./);
  await held.settle(0);
  // alice's own slot is free again and bob's refused request took none of his RPM: the team's RPM (3) decides next.
  await limiter.reserve(a, 0);
  const rpm = await refusal(limiter.reserve(b, 0));
  assert.match(rpm.message, /for team 'research' on concurrent requests|for team 'research' on requests per min/);
  await held2.settle(0);
  const third = await refusal(limiter.reserve(b, 0));
  assert.match(third.message, /^Rate limit reached for team 'research' on requests per min \(RPM\): Limit 3, Used 3/);
});
