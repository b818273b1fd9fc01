// Builds the AffinityStore herd.yaml describes: none when routes.affinity is off; Redis, shared by every
// replica, when limits.redis (else cache.redis) is set; this process's memory otherwise.
import type { AffinityConfig } from '../../config/affinity-config-schema.ts';
import type { CacheConfig } from '../../config/cache-config-schema.ts';
import type { LimitsConfig } from '../../config/limits-config-schema.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import { MemoryAffinityStore, type AffinityStore } from './cache-affinity.ts';

export interface AffinityStoreConfig {
  routes: { affinity: AffinityConfig };
  limits: Pick<LimitsConfig, 'redis'>;
  cache: Pick<CacheConfig, 'redis'>;
}

export interface CreateAffinityStoreOptions {
  /** Expiry in the memory store (tests drive it). */
  clock?: Pick<Clock, 'now'>;
  /** Redis failures (requests go on with the strategy's choice). */
  onError?: (err: Error) => void;
}

/** Async because the Redis client library (tens of MB resident) is imported only when configured. */
export async function createAffinityStore(config: AffinityStoreConfig, options: CreateAffinityStoreOptions = {}): Promise<AffinityStore | undefined> {
  const affinity = config.routes.affinity;
  if (!affinity.enabled) return undefined;
  const redis = config.limits.redis ?? config.cache.redis;
  if (redis === undefined) return new MemoryAffinityStore(options.clock ?? systemClock);
  const onError = options.onError ?? (() => undefined);
  const [{ createLimitsRedisClient }, { RedisAffinityStore }] = await Promise.all([import('../limits/redis-limit-store.ts'), import('./redis-affinity-store.ts')]);
  const client = createLimitsRedisClient(redis.url, redis.timeout_ms, onError);
  return new RedisAffinityStore({ client, keyPrefix: affinity.key_prefix, onError, ownsClient: true });
}
