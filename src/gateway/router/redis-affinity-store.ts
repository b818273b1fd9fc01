// AffinityStore shared by every replica through Redis: one GET before choosing a deployment and one SET
// (with the session's TTL) after it answered. Redis trouble never fails a request: a lookup that fails
// is "no choice remembered" and the strategy picks; a failed write is forgotten.
import type { Redis } from 'ioredis';
import { waitUntilRedisReady } from '../limits/wait-until-redis-ready.ts';
import type { AffinityStore } from './cache-affinity.ts';

// One line per outage and then one per this long, not one per request.
const ERROR_REPORT_MS = 10_000;

export interface RedisAffinityStoreOptions {
  client: Redis;
  /** Prepended to every key, e.g. `herd:affinity:`; tests use a unique one per run. */
  keyPrefix: string;
  /** Told about Redis failures: the first of an outage at once, then one per 10 s. */
  onError?: (err: Error) => void;
  /** Whether close() quits the client. */
  ownsClient?: boolean;
  /** Epoch ms, for spacing the error reports. */
  now?: () => number;
}

export class RedisAffinityStore implements AffinityStore {
  readonly shared = true;
  private readonly client: Redis;
  private readonly keyPrefix: string;
  private readonly onError: (err: Error) => void;
  private readonly ownsClient: boolean;
  private readonly now: () => number;
  private lastReport = Number.NEGATIVE_INFINITY;

  constructor(options: RedisAffinityStoreOptions) {
    this.client = options.client;
    this.keyPrefix = options.keyPrefix;
    this.onError = options.onError ?? (() => undefined);
    this.ownsClient = options.ownsClient ?? false;
    this.now = options.now ?? Date.now;
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const value = await this.client.get(this.keyPrefix + key);
      this.lastReport = Number.NEGATIVE_INFINITY;
      return value ?? undefined;
    } catch (err) {
      this.report(err);
      return undefined;
    }
  }

  set(key: string, deployment: string, ttlMs: number): void {
    try {
      this.client.set(this.keyPrefix + key, deployment, 'PX', Math.max(1, Math.round(ttlMs))).catch((err: unknown) => this.report(err));
    } catch (err) {
      this.report(err);
    }
  }

  ready(timeoutMs: number): Promise<boolean> {
    return waitUntilRedisReady(this.client, timeoutMs);
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private report(err: unknown): void {
    const now = this.now();
    if (now - this.lastReport < ERROR_REPORT_MS) return;
    this.lastReport = now;
    this.onError(new Error(`prompt-cache affinity: Redis did not answer, the strategy picks meanwhile (${err instanceof Error ? err.message : String(err)})`));
  }
}
