// The shared cache tier: answers as JSON strings in Redis under `<key_prefix>v<version>:<sha256>`, with a TTL,
// through one ioredis client that fails fast instead of queueing while Redis is away.
import { Redis } from 'ioredis';
import type { RedisCacheConfig } from '../../config/cache-config-schema.ts';
import { waitUntilRedisReady } from '../limits/wait-until-redis-ready.ts';

export interface RedisTierOptions {
  client: Redis;
  keyPrefix: string;
  ttlMs: number;
  /** Whether close() quits the client (false when the client is shared with other features). */
  ownsClient: boolean;
}

export class RedisCacheTier {
  readonly ttlMs: number;
  readonly client: Redis;
  private readonly keyPrefix: string;
  private readonly ownsClient: boolean;

  constructor(options: RedisTierOptions) {
    this.client = options.client;
    this.keyPrefix = options.keyPrefix;
    this.ttlMs = options.ttlMs;
    this.ownsClient = options.ownsClient;
  }

  /** Rejects when Redis is not connected or fails; the caller turns that into a miss. */
  async get(key: string): Promise<string | null> {
    this.assertConnected();
    return this.client.get(this.keyPrefix + key);
  }

  async set(key: string, json: string, ttlMs: number = this.ttlMs): Promise<void> {
    this.assertConnected();
    await this.client.set(this.keyPrefix + key, json, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  get connected(): boolean {
    return this.client.status === 'ready';
  }

  /** Resolves when connected, or false after timeoutMs (the cache works meanwhile, memory only). */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    return this.connected ? Promise.resolve(true) : waitUntilRedisReady(this.client, timeoutMs);
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    if (this.connected) await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }

  private assertConnected(): void {
    // Commands are not queued while disconnected (enableOfflineQueue: false): a request must not wait
    // for a reconnect to learn it has to go upstream anyway.
    if (!this.connected) throw new Error(`Redis is not connected (${this.client.status})`);
  }
}

/**
 * A client for the cache: no offline queue, no per-command retries, a command timeout, and endless
 * reconnects with capped backoff (Redis coming back should need no restart). `onError` receives
 * connection errors — without a listener ioredis would print each one.
 */
export function createCacheRedisClient(config: RedisCacheConfig, onError: (err: Error) => void): Redis {
  const client = new Redis(config.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: config.timeout_ms,
    connectTimeout: Math.max(1000, config.timeout_ms * 4),
    // A connection the network dropped silently answers nothing and never errors: destroy it once a command
    // has waited this long for a byte, so the client reconnects when the network is back.
    socketTimeout: Math.max(5000, config.timeout_ms * 20),
    retryStrategy: (times: number) => Math.min(times * 200, 5000),
  });
  client.on('error', onError);
  return client;
}
