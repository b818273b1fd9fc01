// Limits shared through a real Redis (REDIS_URL; CI always sets it): two limiter instances stand in
// for two replicas and together enforce exactly one limit — RPM, TPM, concurrency with leases that
// lapse when a replica dies, and a provider queue fed by slots the other replica frees. Without a
// server: an unreachable Redis allows or denies as configured, quickly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { systemClock } from '../../../src/core/clock.ts';
import { HerdError } from '../../../src/core/errors.ts';
import { KeyLimiter, type KeyRateLimits } from '../../../src/gateway/limits/key-limiter.ts';
import { ProviderLimiter } from '../../../src/gateway/limits/provider-limiter.ts';
import { createLimitsRedisClient, RedisLimitStore } from '../../../src/gateway/limits/redis-limit-store.ts';

const REDIS_URL = process.env.REDIS_URL;
const PREFIX = `herd:test:limits:${process.pid}:${Date.now()}:`;
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
let keySeq = 0;
/** A fresh key id per test, so tests never share counters. */
const key = (limits: Omit<KeyRateLimits, 'id' | 'name'>): KeyRateLimits => ({ id: `key_test${keySeq++}`, name: 'ci-bot', ...limits });

describe('redis limits', { skip: REDIS_URL ? false : 'redis limits: REDIS_URL is not set (CI sets it; locally e.g. REDIS_URL=redis://127.0.0.1:6379)' }, () => {
  let admin: Redis;
  const stores: RedisLimitStore[] = [];
  const errors: Error[] = [];
  /** One "replica": its own connection, its own limiter objects. */
  const replica = async (options: { leaseMs?: number; windowMs?: number } = {}) => {
    const client = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 });
    const store = new RedisLimitStore({ client, keyPrefix: PREFIX, onRedisError: 'deny', onError: (e) => errors.push(e), ownsClient: true });
    stores.push(store);
    await client.ping();
    return { client, store, keys: new KeyLimiter({ store, clock: systemClock, leaseMs: options.leaseMs ?? 30_000, windowMs: options.windowMs ?? 60_000 }) };
  };

  before(() => {
    admin = new Redis(REDIS_URL!);
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    const leftovers = await admin.keys(`${PREFIX}*`);
    if (leftovers.length > 0) await admin.del(...leftovers);
    await admin.quit();
  });

  it('two replicas firing 30 requests at once against RPM 10: exactly 10 pass', async () => {
    const [a, b] = [await replica(), await replica()];
    const k = key({ rpm: 10 });
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).keys.reserve(k, 0)));
    const passed = results.filter((r) => r.status === 'fulfilled').length;
    assert.equal(passed, 10);
    for (const r of results) {
      if (r.status === 'fulfilled') continue;
      assert.ok(r.reason instanceof HerdError && r.reason.code === 'RATE_LIMITED', String(r.reason));
      assert.ok(r.reason.retryAfterSeconds! >= 59 && r.reason.retryAfterSeconds! <= 60, `Retry-After ${r.reason.retryAfterSeconds}`);
    }
    // Every counter expires on its own: nothing is left behind in Redis for ever.
    for (const redisKey of await admin.keys(`${PREFIX}*`)) assert.ok((await admin.pttl(redisKey)) > 0, `${redisKey} has a TTL`);
    assert.deepEqual(errors, []);
  });

  it('the window slides on Redis time: a slot comes back when the oldest request leaves it', async () => {
    const [a, b] = [await replica({ windowMs: 400 }), await replica({ windowMs: 400 })];
    const k = key({ rpm: 2 });
    await a.keys.reserve(k, 0);
    await b.keys.reserve(k, 0);
    await assert.rejects(a.keys.reserve(k, 0), (err: HerdError) => err.code === 'RATE_LIMITED' && err.retryAfterSeconds === 1);
    await pause(420);
    await b.keys.reserve(k, 0);
  });

  it("TPM across replicas: one replica's reservation and its correction are what the other sees", async () => {
    const [a, b] = [await replica(), await replica()];
    const k = key({ tpm: 1000 });
    const ticket = await a.keys.reserve(k, 800);
    await assert.rejects(b.keys.reserve(k, 300), /Used 800, Requested 300/);
    await ticket.settle(100);
    await b.keys.reserve(k, 300);
    await assert.rejects(a.keys.reserve(k, 601), /Used 400, Requested 601/);
    await a.keys.reserve(k, 600);
    await assert.rejects(b.keys.reserve(k, 1), /Used 1000/);
  });

  it("concurrency across replicas: exactly N in flight; a dead replica's slot lapses with its lease", async () => {
    const [a, b] = [await replica({ leaseMs: 300 }), await replica({ leaseMs: 300 })];
    const k = key({ maxConcurrency: 3 });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).keys.reserve(k, 0)));
    const held = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    assert.equal(held.length, 3);
    // Live holders renew their leases: still held well past the lease time.
    await pause(450);
    await assert.rejects(b.keys.reserve(k, 0), /on concurrent requests: Limit 3, In flight 3/);
    await held[0]!.settle(0);
    const replacement = await b.keys.reserve(k, 0);

    // A replica dies holding a slot: nobody releases or renews it, and it lapses after lease_ms.
    const doomed = await replica({ leaseMs: 300 });
    await Promise.all([held[1]!.settle(0), replacement.settle(0)]);
    const orphan = await doomed.keys.reserve(k, 0);
    await doomed.store.close(); // the process is gone: its renewals stop, its leases stay behind
    const third = await b.keys.reserve(k, 0);
    await assert.rejects(b.keys.reserve(k, 0), /In flight 3/, 'the dead replica still counts until its lease lapses');
    await pause(350);
    const fourth = await b.keys.reserve(k, 0);
    await Promise.all([orphan, held[2]!, third, fourth].map((t) => t.settle(0)));
  });

  it('a provider queue admits as the other replica frees slots (polling), in priority order', async () => {
    const [a, b] = [await replica(), await replica()];
    const limiter = (store: RedisLimitStore) => new ProviderLimiter({ store, clock: systemClock, agingMs: 10_000, maxQueue: 100, leaseMs: 30_000, pollMs: 10 });
    const [onA, onB] = [limiter(a.store), limiter(b.store)];
    const relay = { name: `relay${keySeq++}`, settings: { limits: { concurrency: 2 } } };
    const signal = new AbortController().signal;
    const first = await onA.acquire(relay, { priority: 'NORMAL', signal, maxWaitMs: 1000 });
    const second = await onA.acquire(relay, { priority: 'NORMAL', signal, maxWaitMs: 1000 });
    const order: string[] = [];
    const batch = onB.acquire(relay, { priority: 'BATCH', signal, maxWaitMs: 2000 }).then((p) => {
      order.push('batch');
      return p;
    });
    const high = onB.acquire(relay, { priority: 'HIGH', signal, maxWaitMs: 2000 }).then((p) => {
      order.push('high');
      return p;
    });
    await pause(50);
    assert.deepEqual(order, [], 'both slots are held on the other replica');
    first.release();
    const highPass = await high;
    assert.deepEqual(order, ['high']);
    second.release();
    (await batch).release();
    highPass.release();
    assert.deepEqual(order, ['high', 'batch']);
  });

  it('EVALSHA falls back to EVAL when Redis lost its script cache (restart, SCRIPT FLUSH)', async () => {
    const a = await replica();
    const k = key({ rpm: 5 });
    await a.keys.reserve(k, 0);
    await admin.script('FLUSH');
    await a.keys.reserve(k, 0);
    const counted = await admin.zcard(`${PREFIX}{key:${k.id}}:rpm`);
    assert.equal(counted, 2);
  });
});

describe('redis limits without a reachable Redis', () => {
  it('allow lets requests through and reports the failure; deny answers UNAVAILABLE at once', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const reported: Error[] = [];
    const client = createLimitsRedisClient(`redis://127.0.0.1:${port}`, 100, () => undefined);
    try {
      const allow = new KeyLimiter({ store: new RedisLimitStore({ client, keyPrefix: PREFIX, onRedisError: 'allow', onError: (e) => reported.push(e) }) });
      const startedAt = Date.now();
      const ticket = await allow.reserve(key({ rpm: 1 }), 0);
      await allow.reserve(key({ rpm: 1 }), 0);
      await ticket.settle(0);
      assert.equal(reported.length, 1, 'one report for the outage, not one per request');
      const deny = new KeyLimiter({ store: new RedisLimitStore({ client, keyPrefix: PREFIX, onRedisError: 'deny' }) });
      await assert.rejects(deny.reserve(key({ rpm: 1 }), 0), (err: HerdError) => err.code === 'UNAVAILABLE' && err.retryAfterSeconds === 1);
      assert.ok(Date.now() - startedAt < 500, 'no waiting on a reconnect');
    } finally {
      client.disconnect();
    }
  });
});
