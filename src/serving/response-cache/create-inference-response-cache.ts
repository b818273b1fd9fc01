// Builds the configured response cache (herd.yaml serving.cache, or --cache-config), or none.
import type { ServingCacheConfig } from '../../config/serving-cache-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import type { InferenceResponseCache } from './inference-response-cache.ts';
import { LocalResponseCache } from './local-response-cache.ts';

export interface CreateCacheOptions {
  config: ServingCacheConfig | undefined;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

export async function createInferenceResponseCache(options: CreateCacheOptions): Promise<InferenceResponseCache | undefined> {
  const { config, env, log } = options;
  if (config?.local) return new LocalResponseCache(config.local.size);
  const redis = config?.redis;
  if (!redis) return undefined;
  let password: string | undefined;
  if (redis.password_env !== undefined) {
    password = env[redis.password_env];
    if (!password) throw new HerdError('INVALID_ARG', `serving.cache.redis.password_env names ${redis.password_env}, which is not set`);
  }
  const { RedisResponseCache } = await import('./redis-response-cache.ts');
  let lastError = '';
  const cache = new RedisResponseCache({
    host: redis.host,
    port: redis.port,
    db: redis.db,
    tls: redis.tls_enabled,
    keyPrefix: redis.key_prefix,
    connectTimeoutMs: redis.connect_timeout,
    socketTimeoutMs: redis.socket_timeout,
    ...(redis.user ? { user: redis.user } : {}),
    ...(password ? { password } : {}),
    onError: (err) => {
      // One line per distinct problem: a Redis that is away would otherwise log every retry.
      if (err.message === lastError) return;
      lastError = err.message;
      log(`response cache (redis ${redis.host}:${redis.port}): ${err.message}`);
    },
  });
  try {
    await cache.connect();
  } catch (err) {
    await cache.close();
    throw new HerdError('UNAVAILABLE', `response cache: cannot connect to Redis at ${redis.host}:${redis.port}: ${(err as Error).message}`);
  }
  return cache;
}
