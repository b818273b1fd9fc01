// Builds the ResponseCache herd.yaml's `cache` section describes: the memory tier always, Redis
// when `cache.redis` is set (its client owned by the cache and closed with it).
import type { CacheConfig } from '../../config/cache-config-schema.ts';
import { MemoryCacheTier } from './memory-cache-tier.ts';
import type { RedisCacheTier } from './redis-cache-tier.ts';
import { ResponseCache } from './response-cache.ts';

export interface CreateResponseCacheOptions {
  /** Only `memory` and `redis` are read; default_mode belongs to evaluateCachePolicy. */
  config: Pick<CacheConfig, 'memory' | 'redis'>;
  log?: (line: string) => void;
  /** Monotonic ms for the memory tier's TTLs (tests). */
  clock?: { now(): number };
  /** Epoch ms for entries' storedAt / expiresAt (tests). */
  wallClock?: () => number;
}

/** Async because the Redis tier's client library (tens of MB resident) is imported only when configured. */
export async function createResponseCache(options: CreateResponseCacheOptions): Promise<ResponseCache> {
  const { memory, redis } = options.config;
  const memoryTier = new MemoryCacheTier({
    maxEntries: memory.max_entries,
    maxBytes: memory.max_bytes,
    ttlMs: memory.ttl_s * 1000,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  let cache: ResponseCache | undefined;
  let redisTier: RedisCacheTier | undefined;
  if (redis !== undefined) {
    const { createCacheRedisClient, RedisCacheTier } = await import('./redis-cache-tier.ts');
    redisTier = new RedisCacheTier({
      // ioredis connects asynchronously: no error event can arrive before `cache` is assigned below.
      client: createCacheRedisClient(redis, (err) => cache?.reportRedisConnectionError(err)),
      keyPrefix: redis.key_prefix,
      ttlMs: redis.ttl_s * 1000,
      ownsClient: true,
    });
  }
  cache = new ResponseCache({
    memory: memoryTier,
    ...(redisTier ? { redis: redisTier } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.wallClock ? { wallClock: options.wallClock } : {}),
  });
  return cache;
}
