// Triton's 'redis' cache served from ioredis: entries under `<key_prefix><sha256>`, shared by every replica
// pointing at the same Redis. A Redis that fails or is away counts as a miss; inference goes on.
import { Redis } from 'ioredis';
import type { InferenceResponseCache } from './inference-response-cache.ts';

export interface RedisResponseCacheOptions {
  host: string;
  port: number;
  user?: string;
  password?: string;
  db: number;
  connectTimeoutMs: number;
  socketTimeoutMs: number;
  tls: boolean;
  keyPrefix: string;
  /** Receives connection and command errors (without a listener ioredis prints each one). */
  onError: (err: Error) => void;
}

export class RedisResponseCache implements InferenceResponseCache {
  readonly kind = 'redis';
  private readonly client: Redis;
  private readonly keyPrefix: string;
  private readonly onError: (err: Error) => void;

  constructor(options: RedisResponseCacheOptions) {
    this.keyPrefix = options.keyPrefix;
    this.onError = options.onError;
    this.client = new Redis({
      host: options.host,
      port: options.port,
      db: options.db,
      ...(options.user ? { username: options.user } : {}),
      ...(options.password ? { password: options.password } : {}),
      ...(options.tls ? { tls: {} } : {}),
      ...(options.connectTimeoutMs > 0 ? { connectTimeout: options.connectTimeoutMs } : {}),
      ...(options.socketTimeoutMs > 0 ? { commandTimeout: options.socketTimeoutMs } : {}),
      // A request must not wait for a reconnect to learn it has to execute anyway.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
    });
    this.client.on('error', (err: Error) => this.onError(err));
  }

  /** Connects once at start; a Redis that cannot be reached fails the start, as Triton's redis cache does. */
  async connect(): Promise<void> {
    await this.client.connect();
  }

  async lookup(key: string): Promise<Buffer | undefined> {
    if (this.client.status !== 'ready') return undefined;
    try {
      return (await this.client.getBuffer(this.keyPrefix + key)) ?? undefined;
    } catch (err) {
      this.onError(err as Error);
      return undefined;
    }
  }

  async insert(key: string, entry: Buffer): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    try {
      await this.client.set(this.keyPrefix + key, entry);
      return true;
    } catch (err) {
      this.onError(err as Error);
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.client.status === 'ready') await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }
}
