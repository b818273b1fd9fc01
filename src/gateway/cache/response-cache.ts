// The two-tier exact-match cache: memory in front of Redis (when configured). A Redis hit fills
// memory; any Redis failure is a miss (counted, logged once per outage), never a failed request.
import { CACHED_ANSWER_VERSION, decodeCachedAnswer, encodeCachedAnswer, OtherVersionEntry, type CachedAnswer, type CachedAnswerInput } from './cached-answer.ts';
import type { MemoryCacheTier } from './memory-cache-tier.ts';
import type { RedisCacheTier } from './redis-cache-tier.ts';

export interface ResponseCacheOptions {
  memory: MemoryCacheTier;
  redis?: RedisCacheTier;
  /** Epoch ms for storedAt / expiresAt (shared across replicas, hence wall time). */
  wallClock?: () => number;
  log?: (line: string) => void;
}

/**
 * The entry format's version is part of the Redis key: replicas of two Herd versions sharing one Redis
 * during a rolling upgrade neither read nor overwrite each other's entries (each misses the other's).
 */
export function redisKeyOf(key: string): string {
  return `v${CACHED_ANSWER_VERSION}:${key}`;
}

export type CacheTierName = 'memory' | 'redis';

export interface CacheHit {
  /** Frozen: copy before changing anything (convertCachedToResponse does). */
  answer: Readonly<CachedAnswer>;
  tier: CacheTierName;
}

/** Counters for metrics; plain getters, cumulative since start (bytes and entries: current). */
export interface CacheStats {
  readonly hits: number;
  readonly memoryHits: number;
  readonly redisHits: number;
  readonly misses: number;
  /** Lookups that found an entry this request may not be served (e.g. tool calls without `use`); also counted as misses. */
  readonly rejected: number;
  readonly writes: number;
  readonly evictions: number;
  readonly expirations: number;
  /** Answers too big for the memory tier (stored in Redis only). */
  readonly oversize: number;
  readonly bytes: number;
  readonly entries: number;
  /** Sum of costMicros over hits: what the upstream calls would have cost. */
  readonly savedCostMicros: number;
  /** Redis commands that failed (each degraded a lookup or write to memory only), bad entries included. */
  readonly redisErrors: number;
}

export class ResponseCache {
  readonly stats: CacheStats;
  private readonly memory: MemoryCacheTier;
  private readonly redis: RedisCacheTier | undefined;
  private readonly wallClock: () => number;
  private readonly log: (line: string) => void;
  private readonly count = { memoryHits: 0, redisHits: 0, misses: 0, rejected: 0, writes: 0, saved: 0, redisErrors: 0 };
  private redisFailing = false;

  constructor(options: ResponseCacheOptions) {
    this.memory = options.memory;
    this.redis = options.redis;
    this.wallClock = options.wallClock ?? Date.now;
    this.log = options.log ?? (() => undefined);
    const count = this.count;
    const memory = this.memory;
    this.stats = {
      get hits() {
        return count.memoryHits + count.redisHits;
      },
      get memoryHits() {
        return count.memoryHits;
      },
      get redisHits() {
        return count.redisHits;
      },
      get misses() {
        return count.misses;
      },
      get rejected() {
        return count.rejected;
      },
      get writes() {
        return count.writes;
      },
      get evictions() {
        return memory.evictions;
      },
      get expirations() {
        return memory.expirations;
      },
      get oversize() {
        return memory.oversize;
      },
      get bytes() {
        return memory.bytes;
      },
      get entries() {
        return memory.entries;
      },
      get savedCostMicros() {
        return count.saved;
      },
      get redisErrors() {
        return count.redisErrors;
      },
    };
  }

  /**
   * The entry for a key, if any tier has one that `accept` allows (pass the answer policy for this
   * request: see evaluateCachedAnswer). Never rejects.
   */
  async lookup(key: string, accept: (answer: Readonly<CachedAnswer>) => boolean = () => true): Promise<CacheHit | undefined> {
    const local = this.memory.get(key);
    if (local !== undefined) return this.hitOrReject(local, 'memory', accept);
    if (this.redis === undefined) return this.miss();
    let json: string | null;
    try {
      json = await this.redis.get(redisKeyOf(key));
      this.redisRecovered();
    } catch (err) {
      this.redisFailed('lookup', err);
      return this.miss();
    }
    if (json === null) return this.miss();
    const decoded = decodeCachedAnswer(json);
    if (decoded instanceof OtherVersionEntry) return this.miss();
    if (decoded instanceof Error) {
      this.redisFailed('lookup', decoded);
      return this.miss();
    }
    const left = decoded.answer.expiresAt - this.wallClock();
    // Redis's TTL decides whether it exists; expiresAt only caps how long memory may keep it.
    if (left > 0) this.memory.set(key, decoded, left);
    return this.hitOrReject(decoded.answer, 'redis', accept);
  }

  /**
   * Stores an answer in memory at once and in Redis before the promise settles. Callers on the
   * request path need not await it; it never rejects.
   */
  async store(key: string, input: CachedAnswerInput): Promise<void> {
    // With Redis, its TTL is the entry's lifetime everywhere: no replica's memory serves it longer.
    const ttlMs = this.redis?.ttlMs ?? this.memory.ttlMs;
    const encoded = encodeCachedAnswer(input, this.wallClock(), ttlMs);
    this.count.writes++;
    this.memory.set(key, encoded, ttlMs);
    if (this.redis === undefined) return;
    try {
      await this.redis.set(redisKeyOf(key), encoded.json);
      this.redisRecovered();
    } catch (err) {
      this.redisFailed('write', err);
    }
  }

  /** Resolves true once Redis is connected (or there is none); false after timeoutMs. */
  async ready(timeoutMs = 2000): Promise<boolean> {
    return this.redis === undefined ? true : this.redis.waitUntilReady(timeoutMs);
  }

  /** For the Redis client's connection errors: logged with the command failures, once per outage. */
  reportRedisConnectionError(err: Error): void {
    this.logRedisOutage('connection', err);
  }

  async close(): Promise<void> {
    this.memory.clear();
    await this.redis?.close();
  }

  private hitOrReject(answer: Readonly<CachedAnswer>, tier: CacheTierName, accept: (a: Readonly<CachedAnswer>) => boolean): CacheHit | undefined {
    if (!accept(answer)) {
      this.count.rejected++;
      return this.miss();
    }
    if (tier === 'memory') this.count.memoryHits++;
    else this.count.redisHits++;
    this.count.saved += answer.costMicros;
    return { answer, tier };
  }

  private miss(): undefined {
    this.count.misses++;
    return undefined;
  }

  private redisFailed(operation: string, err: unknown): void {
    this.count.redisErrors++;
    this.logRedisOutage(operation, err);
  }

  private logRedisOutage(operation: string, err: unknown): void {
    if (this.redisFailing) return;
    this.redisFailing = true;
    const message = err instanceof Error ? err.message : String(err);
    this.log(`cache: Redis ${operation} failed (${message}); serving from memory only until it answers again (further errors are counted, not logged)`);
  }

  private redisRecovered(): void {
    if (!this.redisFailing) return;
    this.redisFailing = false;
    this.log('cache: Redis answers again');
  }
}
