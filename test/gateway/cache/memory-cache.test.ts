// The memory tier's bounds (entries, bytes, TTL on a manual clock) and the ResponseCache's counters
// with memory only.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cacheConfigSchema } from '../../../src/config/cache-config-schema.ts';
import { ManualClock } from '../../../src/core/clock.ts';
import { decodeCachedAnswer, encodeCachedAnswer, OtherVersionEntry, type CachedAnswer } from '../../../src/gateway/cache/cached-answer.ts';
import { evaluateCachedAnswer } from '../../../src/gateway/cache/cache-policy.ts';
import { createResponseCache } from '../../../src/gateway/cache/create-response-cache.ts';
import { MemoryCacheTier } from '../../../src/gateway/cache/memory-cache-tier.ts';
import { answerInput, textResponse, toolCallResponse } from './cache-fixtures.ts';

const encode = (text = 'x', ttlMs = 60_000) => encodeCachedAnswer(answerInput(textResponse(text)), 0, ttlMs);

describe('memory cache tier', () => {
  it('keeps at most max_entries, evicting the least recently used', () => {
    const tier = new MemoryCacheTier({ maxEntries: 2, maxBytes: 1e6, ttlMs: 60_000 });
    tier.set('a', encode('a'));
    tier.set('b', encode('b'));
    assert.ok(tier.get('a')); // a is now the most recently used
    tier.set('c', encode('c'));
    assert.equal(tier.get('b'), undefined);
    assert.ok(tier.get('a'));
    assert.ok(tier.get('c'));
    assert.equal(tier.entries, 2);
    assert.equal(tier.evictions, 1);
  });

  it('keeps the total JSON size under max_bytes and counts bytes exactly', () => {
    const one = encode('y'.repeat(500));
    const tier = new MemoryCacheTier({ maxEntries: 100, maxBytes: one.bytes * 8 + 10, ttlMs: 60_000 });
    for (let i = 0; i < 20; i++) tier.set(`k${i}`, encode('y'.repeat(500)));
    assert.equal(tier.entries, 8);
    assert.equal(tier.bytes, one.bytes * 8);
    assert.equal(tier.evictions, 12);
    assert.ok(tier.get('k19'));
    assert.equal(tier.get('k11'), undefined);
  });

  it('keeps an answer bigger than an eighth of max_bytes out (and counts it)', () => {
    const big = encode('z'.repeat(2000));
    const tier = new MemoryCacheTier({ maxEntries: 100, maxBytes: big.bytes * 4, ttlMs: 60_000 });
    assert.equal(tier.set('big', big), false);
    assert.equal(tier.get('big'), undefined);
    assert.equal(tier.oversize, 1);
    assert.equal(tier.set('small', encode('s')), true);
  });

  it('expires entries ttl after the write, however often they are read', () => {
    const clock = new ManualClock();
    const tier = new MemoryCacheTier({ maxEntries: 10, maxBytes: 1e6, ttlMs: 1000, clock });
    tier.set('a', encode());
    clock.advance(600);
    assert.ok(tier.get('a'));
    clock.advance(400);
    assert.ok(tier.get('a'), 'still fresh at exactly the TTL');
    clock.advance(1);
    assert.equal(tier.get('a'), undefined);
    assert.equal(tier.expirations, 1);
    assert.equal(tier.evictions, 0);
    assert.equal(tier.bytes, 0);
  });

  it('takes a shorter TTL per entry (Redis fills with less time left) but never a longer one', () => {
    const clock = new ManualClock();
    const tier = new MemoryCacheTier({ maxEntries: 10, maxBytes: 1e6, ttlMs: 1000, clock });
    tier.set('short', encode(), 100);
    tier.set('long', encode(), 10_000);
    clock.advance(101);
    assert.equal(tier.get('short'), undefined);
    assert.ok(tier.get('long'));
    clock.advance(900);
    assert.equal(tier.get('long'), undefined);
  });
});

describe('cached answer encoding', () => {
  it("round-trips through JSON, frozen, independent of the caller's object", () => {
    const response = textResponse('original');
    const encoded = encodeCachedAnswer(answerInput(response), 1000, 5000);
    response.choices[0]!.message.content = 'changed by the caller afterwards';
    assert.equal(encoded.answer.response.choices[0]!.message.content, 'original');
    assert.equal(encoded.answer.expiresAt, 6000);
    assert.equal(encoded.answer.model, 'gpt-4.1');
    assert.ok(Object.isFrozen(encoded.answer.response.choices[0]!.message));
    const decoded = decodeCachedAnswer(encoded.json);
    assert.ok(!(decoded instanceof Error));
    assert.deepEqual(decoded.answer, encoded.answer);
  });

  it('rejects what is not an entry of this version', () => {
    assert.match(String(decodeCachedAnswer('{nope')), /not JSON/);
    assert.match(String(decodeCachedAnswer('"text"')), /not an object/);
    const entry = JSON.parse(encode().json) as Record<string, unknown>;
    const older = decodeCachedAnswer(JSON.stringify({ ...entry, v: 1, bytes: '{"id":"x"}' }));
    assert.ok(older instanceof OtherVersionEntry, 'an entry of another version is told apart from a malformed one');
    assert.match(String(older), /version 1, expected 2/);
    assert.match(String(decodeCachedAnswer(JSON.stringify({ ...entry, bytes: '{"id":"x"}' }))), /bytes: not an object/);
    assert.match(String(decodeCachedAnswer(JSON.stringify({ ...entry, response: { object: 'x' } }))), /not a chat.completion/);
  });
});

describe('response cache, memory only', () => {
  const config = cacheConfigSchema.parse({ memory: { max_entries: 100, ttl_s: 60 } });

  it('counts misses, writes, hits and the saved cost', async () => {
    const cache = await createResponseCache({ config });
    assert.equal(await cache.lookup('k'), undefined);
    await cache.store('k', answerInput(textResponse(), 1500));
    const first = await cache.lookup('k');
    const second = await cache.lookup('k');
    assert.equal(first?.tier, 'memory');
    assert.equal(second?.answer, first?.answer, 'a memory hit is the same frozen object, no parse');
    const s = cache.stats;
    assert.deepEqual(
      {
        hits: s.hits,
        memoryHits: s.memoryHits,
        redisHits: s.redisHits,
        misses: s.misses,
        writes: s.writes,
        saved: s.savedCostMicros,
        entries: s.entries,
        redisErrors: s.redisErrors,
      },
      { hits: 2, memoryHits: 2, redisHits: 0, misses: 1, writes: 1, saved: 3000, entries: 1, redisErrors: 0 },
    );
    assert.ok(s.bytes > 0);
    assert.equal(await cache.ready(), true, 'no Redis: ready at once');
    await cache.close();
  });

  it('does not serve an entry the request may not have (tool calls stored under `use`)', async () => {
    const cache = await createResponseCache({ config });
    await cache.store('k', answerInput(toolCallResponse()));
    const accept = (optedIn: boolean) => (answer: Readonly<CachedAnswer>) => evaluateCachedAnswer(answer.response, { model: 'gpt-4.1', optedIn }).cacheable;
    assert.equal(await cache.lookup('k', accept(false)), undefined);
    assert.ok(await cache.lookup('k', accept(true)));
    assert.equal(cache.stats.rejected, 1);
    assert.equal(cache.stats.misses, 1);
    assert.equal(cache.stats.hits, 1);
    await cache.close();
  });

  it('follows the memory TTL from config on an injected clock', async () => {
    const clock = new ManualClock();
    const cache = await createResponseCache({ config: cacheConfigSchema.parse({ memory: { ttl_s: 2 } }), clock });
    await cache.store('k', answerInput());
    clock.advance(2000);
    assert.ok(await cache.lookup('k'));
    clock.advance(1);
    assert.equal(await cache.lookup('k'), undefined);
    assert.equal(cache.stats.expirations, 1);
    await cache.close();
  });
});

describe('cache config schema', () => {
  it('defaults to a memory-only cache for deterministic requests, partitioned per key', () => {
    assert.deepEqual(cacheConfigSchema.parse({}), {
      memory: { max_entries: 10_000, ttl_s: 300, max_bytes: 64 * 1024 * 1024 },
      default_mode: 'deterministic',
      scope: 'key',
    });
    assert.equal(cacheConfigSchema.parse({ scope: 'shared' }).scope, 'shared');
    assert.throws(() => cacheConfigSchema.parse({ scope: 'everyone' }));
  });

  it('fills Redis defaults and rejects what is not a Redis URL or a known key', () => {
    const parsed = cacheConfigSchema.parse({ redis: { url: 'redis://127.0.0.1:6379' } });
    assert.deepEqual(parsed.redis, { url: 'redis://127.0.0.1:6379', ttl_s: 3600, key_prefix: 'herd:cache:', timeout_ms: 250 });
    assert.throws(() => cacheConfigSchema.parse({ redis: { url: 'http://x' } }), /redis:\/\/ or rediss:\/\//);
    assert.throws(() => cacheConfigSchema.parse({ memory: { max_entires: 5 } }));
    assert.throws(() => cacheConfigSchema.parse({ default_mode: 'always' }));
  });
});
