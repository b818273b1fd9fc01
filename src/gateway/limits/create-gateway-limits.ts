// One call for the composition root: from herd.yaml's `limits` section, the store (memory, or
// Redis shared by every replica), the per-key limiter and the chat service's admission hook.
import type { Redis } from 'ioredis';
import type { LimitsConfig } from '../../config/limits-config-schema.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import { GatewayAdmission } from './admission.ts';
import { KeyLimiter } from './key-limiter.ts';
import type { LimitStore } from './limit-store.ts';
import { MemoryLimitStore } from './memory-limit-store.ts';
import { PriorityAdmission } from './priority-admission.ts';
import { ProviderLimiter } from './provider-limiter.ts';
import { waitUntilRedisReady } from './wait-until-redis-ready.ts';

export interface GatewayLimits {
  store: LimitStore;
  /** Per-key RPM, TPM, concurrency: called by the request flow, outside the chat service. */
  keys: KeyLimiter;
  /** ChatServiceOptions.admission: model admission + provider account limits per attempt. */
  admission: GatewayAdmission;
  /** True once Redis is connected (at once without Redis), false after timeoutMs; limits apply on_error meanwhile. */
  ready(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface GatewayLimitsOptions {
  clock?: Clock;
  /** A client to share (e.g. the cache's); by default one is opened from limits.redis.url. */
  redisClient?: Redis;
  /** Redis failures (the request goes on as limits.redis.on_error says). */
  onError?: (err: Error) => void;
}

// Without Redis leases never lapse (a dead process takes its counts with it) and only this process
// frees slots (it wakes its queues itself): both values are then unused.
const MEMORY_LEASE_MS = 30_000;
const MEMORY_POLL_MS = 50;

/** Async because the Redis store's client library (tens of MB resident) is imported only when configured. */
export async function createGatewayLimits(config: LimitsConfig, options: GatewayLimitsOptions = {}): Promise<GatewayLimits> {
  const clock = options.clock ?? systemClock;
  const onError = options.onError ?? (() => undefined);
  const redis = config.redis;
  let store: LimitStore;
  let client: Redis | undefined;
  if (redis) {
    const { createLimitsRedisClient, RedisLimitStore } = await import('./redis-limit-store.ts');
    client = options.redisClient ?? createLimitsRedisClient(redis.url, redis.timeout_ms, onError);
    store = new RedisLimitStore({ client, keyPrefix: redis.key_prefix, onRedisError: redis.on_error, onError, ownsClient: options.redisClient === undefined });
  } else {
    store = new MemoryLimitStore(clock);
  }
  const leaseMs = redis?.lease_ms ?? MEMORY_LEASE_MS;
  const pollMs = redis?.poll_ms ?? MEMORY_POLL_MS;
  const { admission } = config;
  const models = new PriorityAdmission({ store, clock, config: admission, leaseMs, pollMs });
  const providers = new ProviderLimiter({ store, clock, agingMs: admission.aging_ms, maxQueue: admission.max_queue, leaseMs, pollMs });
  return {
    store,
    keys: new KeyLimiter({ store, clock, leaseMs }),
    admission: new GatewayAdmission({ models, providers, clock }),
    ready: (timeoutMs) => (client ? waitUntilRedisReady(client, timeoutMs) : Promise.resolve(true)),
    close: () => store.close(),
  };
}
