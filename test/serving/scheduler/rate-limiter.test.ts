import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { RateLimiter } from '../../../src/serving/scheduler/rate-limiter.ts';

const tick = () => new Promise((r) => setImmediate(r));

test('an instance holds its resources while executing; others wait, none is dropped', async () => {
  const limiter = new RateLimiter(new Map([['gpu_memory_mb', 40960]]));
  const needs = [{ name: 'gpu_memory_mb', count: 24576 }];
  limiter.register(needs, 'a_0');
  const first = await limiter.acquire(needs, 1, 'a_0');
  assert.deepEqual(limiter.snapshot(), { gpu_memory_mb: 16384 });
  const granted: (() => void)[] = [];
  void limiter.acquire(needs, 1, 'a_1').then((release) => {
    granted.push(release);
  });
  await tick();
  assert.equal(granted.length, 0, 'not enough left for a second instance');
  first();
  await tick();
  assert.equal(granted.length, 1, 'granted once the first released');
  granted[0]?.();
  assert.deepEqual(limiter.snapshot(), { gpu_memory_mb: 40960 });
});

test('resources not configured size themselves to the largest single need (Triton default)', () => {
  const limiter = new RateLimiter(new Map());
  limiter.register([{ name: 'R1', count: 4 }], 'a_0');
  limiter.register([{ name: 'R1', count: 10 }], 'b_0');
  assert.deepEqual(limiter.snapshot(), { R1: 10 });
});

test('a configured pool too small for an instance is a load error that says what to raise', () => {
  const limiter = new RateLimiter(new Map([['gpu_memory_mb', 1024]]));
  assert.throws(
    () => limiter.register([{ name: 'gpu_memory_mb', count: 4096 }], 'big_0'),
    (e: unknown) =>
      e instanceof HerdError && /needs 4096 of resource 'gpu_memory_mb' but the rate limiter only has 1024; raise --rate-limit-resource gpu_memory_mb:N/.test(e.message),
  );
});

test('priority weights turns: with both waiting, priority 2 gets half the turns of priority 1', async () => {
  const limiter = new RateLimiter(new Map([['slot', 1]]));
  const needs = [{ name: 'slot', count: 1 }];
  const holder = await limiter.acquire(needs, 1, 'holder');
  const grants: string[] = [];
  const waiting = [
    ...Array.from({ length: 20 }, () =>
      limiter.acquire(needs, 1, 'fast').then((release) => {
        grants.push('fast');
        release();
      }),
    ),
    ...Array.from({ length: 20 }, () =>
      limiter.acquire(needs, 2, 'slow').then((release) => {
        grants.push('slow');
        release();
      }),
    ),
  ];
  holder();
  await Promise.all(waiting);
  const first15 = grants.slice(0, 15);
  assert.equal(first15.filter((g) => g === 'fast').length, 10, first15.join(','));
  assert.equal(grants.length, 40, 'every waiter is served');
});
