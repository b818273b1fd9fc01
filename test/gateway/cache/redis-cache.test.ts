// The Redis tier against a real Redis (REDIS_URL; CI always sets it): replicas share answers, a
// Redis hit fills memory without outliving Redis, bad entries are misses. And with Redis down
// (no server needed): every lookup is a quick miss, nothing throws, the outage is logged once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { cacheConfigSchema } from '../../../src/config/cache-config-schema.ts';
import { ManualClock } from '../../../src/core/clock.ts';
import { createResponseCache } from '../../../src/gateway/cache/create-response-cache.ts';
import type { ResponseCache } from '../../../src/gateway/cache/response-cache.ts';
import { answerInput, textResponse } from './cache-fixtures.ts';

const REDIS_URL = process.env.REDIS_URL;
const PREFIX = `herd:test:cache:${process.pid}:${Date.now()}:`;

describe('redis cache tier', { skip: REDIS_URL ? false : 'redis cache tier: REDIS_URL is not set (CI sets it; locally e.g. REDIS_URL=redis://127.0.0.1:6379)' }, () => {
  let admin: Redis;
  const caches: ResponseCache[] = [];
  const open = async (options: { ttl_s?: number; clock?: ManualClock; wallClock?: () => number; log?: (line: string) => void } = {}) => {
    const config = cacheConfigSchema.parse({ redis: { url: REDIS_URL, key_prefix: PREFIX, ttl_s: options.ttl_s ?? 60 }, memory: { ttl_s: 300 } });
    const cache = await createResponseCache({
      config,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.wallClock ? { wallClock: options.wallClock } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
    caches.push(cache);
    assert.equal(await cache.ready(5000), true, `Redis at ${REDIS_URL} did not become ready`);
    return cache;
  };

  before(() => {
    admin = new Redis(REDIS_URL!);
  });
  after(async () => {
    await Promise.all(caches.map((c) => c.close()));
    const keys = await admin.keys(`${PREFIX}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  });

  it("two instances sharing Redis see each other's writes; a Redis hit fills memory", async () => {
    const a = await open();
    const b = await open();
    assert.equal(await b.lookup('shared'), undefined);
    await a.store('shared', answerInput(textResponse('from replica a'), 777));
    const first = await b.lookup('shared');
    assert.equal(first?.tier, 'redis');
    assert.equal(first?.answer.response.choices[0]?.message.content, 'from replica a');
    assert.equal(first?.answer.costMicros, 777);
    const second = await b.lookup('shared');
    assert.equal(second?.tier, 'memory');
    assert.deepEqual(
      { redisHits: b.stats.redisHits, memoryHits: b.stats.memoryHits, misses: b.stats.misses, saved: b.stats.savedCostMicros, errors: b.stats.redisErrors },
      { redisHits: 1, memoryHits: 1, misses: 1, saved: 1554, errors: 0 },
    );
    assert.equal(a.stats.writes, 1);
  });

  it('stores under key_prefix with the Redis TTL', async () => {
    const cache = await open({ ttl_s: 42 });
    await cache.store('ttl', answerInput());
    const pttl = await admin.pttl(`${PREFIX}v2:ttl`);
    assert.ok(pttl > 40_000 && pttl <= 42_000, `pttl ${pttl}`);
  });

  it("a memory copy filled from Redis never outlives the entry's Redis lifetime", async () => {
    const writer = await open({ ttl_s: 60 });
    await writer.store('capped', answerInput());
    const clock = new ManualClock();
    // This replica's wall clock is 59.9 s later: 100 ms of the entry's life are left.
    const reader = await open({ clock, wallClock: () => Date.now() + 59_900 });
    assert.equal((await reader.lookup('capped'))?.tier, 'redis');
    clock.advance(50);
    assert.equal((await reader.lookup('capped'))?.tier, 'memory');
    clock.advance(100);
    // Expired from memory (not after memory's own 300 s): asked Redis again, which still has it.
    assert.equal((await reader.lookup('capped'))?.tier, 'redis');
  });

  it('an entry Redis holds in another shape is a miss, counted as a Redis error', async () => {
    const lines: string[] = [];
    const cache = await open({ log: (line) => lines.push(line) });
    await admin.set(`${PREFIX}v2:junk`, '{"v":2,"model":7}');
    assert.equal(await cache.lookup('junk'), undefined);
    assert.equal(cache.stats.redisErrors, 1);
    assert.equal(cache.stats.misses, 1);
    assert.match(lines.join('\n'), /cache entry rejected: model is not a string/);
  });

  it("another version's entries are plain misses: under their own keys, and quiet if found under this version's", async () => {
    const lines: string[] = [];
    const cache = await open({ log: (line) => lines.push(line) });
    // What Herd before version 2 wrote: the same key without the version segment, bytes as a string.
    const v1 = JSON.stringify({
      ...JSON.parse(JSON.stringify(answerInput())),
      v: 1,
      bytes: '{"id":"chatcmpl-original"}',
      model: 'gpt-4.1',
      storedAt: 0,
      expiresAt: Date.now() + 60_000,
    });
    await admin.set(`${PREFIX}old`, v1);
    assert.equal(await cache.lookup('old'), undefined);
    await admin.set(`${PREFIX}v2:odd`, v1);
    assert.equal(await cache.lookup('odd'), undefined);
    assert.deepEqual({ misses: cache.stats.misses, errors: cache.stats.redisErrors, lines }, { misses: 2, errors: 0, lines: [] });
    await cache.store('old', answerInput());
    assert.equal(await admin.get(`${PREFIX}old`), v1, "the old version's entry is left to its own replicas");
  });
});

describe('redis cache tier with Redis down', () => {
  it('misses at once, never throws, keeps serving from memory, logs the outage once and counts each failure', async () => {
    const port = await findClosedPort();
    const lines: string[] = [];
    const cache = await createResponseCache({
      config: cacheConfigSchema.parse({ redis: { url: `redis://127.0.0.1:${port}`, timeout_ms: 100 } }),
      log: (line) => lines.push(line),
    });
    try {
      assert.equal(await cache.ready(300), false);
      const started = performance.now();
      for (let i = 0; i < 5; i++) assert.equal(await cache.lookup(`missing-${i}`), undefined);
      const perLookupMs = (performance.now() - started) / 5;
      // Not a speed target: a lookup that waited for the 100 ms command timeout would take that long; these fail at once.
      assert.ok(perLookupMs < 50, `a lookup with Redis down took ${perLookupMs.toFixed(2)} ms: it waited for the command timeout`);
      await cache.store('k', answerInput()); // resolves: the Redis write failure is swallowed and counted
      assert.equal((await cache.lookup('k'))?.tier, 'memory');
      assert.equal(cache.stats.redisErrors, 6); // 5 lookups + 1 write
      assert.equal(cache.stats.misses, 5);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /^cache: Redis (lookup|connection) failed/);
    } finally {
      await cache.close();
    }
  });
});

/** A local port nothing listens on (bound, then released). */
async function findClosedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}
