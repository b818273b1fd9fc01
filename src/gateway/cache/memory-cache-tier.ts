// This replica's cache tier: an LRU (lru-cache) bounded by entry count, total bytes and TTL, holding
// frozen decoded answers so a hit costs a map lookup, not a JSON parse.
import { LRUCache } from 'lru-cache';
import type { CachedAnswer, EncodedAnswer } from './cached-answer.ts';

export interface MemoryTierOptions {
  maxEntries: number;
  /** Sum of the entries' JSON sizes. */
  maxBytes: number;
  ttlMs: number;
  /** Monotonic ms for TTLs (tests pass a ManualClock). Default: performance.now. */
  clock?: { now(): number };
}

export class MemoryCacheTier {
  readonly ttlMs: number;
  /**
   * An answer over an eighth of the tier would push out many others for one hit; it is kept in
   * Redis only (and counted in `oversize`).
   */
  readonly maxEntryBytes: number;
  private readonly lru: LRUCache<string, EncodedAnswer>;
  private evicted = 0;
  private expired = 0;
  private tooBig = 0;

  constructor(options: MemoryTierOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntryBytes = Math.max(1, Math.floor(options.maxBytes / 8));
    this.lru = new LRUCache<string, EncodedAnswer>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      maxEntrySize: this.maxEntryBytes,
      ttl: options.ttlMs,
      // A fixed lifetime from the write: a hot entry must still expire, or it would never be refreshed.
      updateAgeOnGet: false,
      allowStale: false,
      // lru-cache otherwise caches now() for 1 ms behind a real timer, which a manual clock cannot move.
      ttlResolution: 0,
      // Shifted by 1 ms: lru-cache reads a start time of 0 as "no TTL", and a manual clock starts at 0.
      ...(options.clock ? { perf: { now: () => options.clock!.now() + 1 } } : {}),
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') this.evicted++;
        else if (reason === 'expire') this.expired++;
      },
    });
  }

  get(key: string): Readonly<CachedAnswer> | undefined {
    return this.lru.get(key)?.answer;
  }

  /** ttlMs: shorter than the tier's own when the entry came from Redis with less time left. */
  set(key: string, entry: EncodedAnswer, ttlMs: number = this.ttlMs): boolean {
    if (entry.bytes > this.maxEntryBytes) {
      this.tooBig++;
      return false;
    }
    this.lru.set(key, entry, { size: entry.bytes, ttl: Math.min(ttlMs, this.ttlMs) });
    return true;
  }

  delete(key: string): void {
    this.lru.delete(key);
  }

  clear(): void {
    this.lru.clear();
  }

  get entries(): number {
    return this.lru.size;
  }
  get bytes(): number {
    return this.lru.calculatedSize;
  }
  /** Entries pushed out by the count or byte bound (not expirations). */
  get evictions(): number {
    return this.evicted;
  }
  /** Entries found expired (removed lazily, when looked up or pushed out). */
  get expirations(): number {
    return this.expired;
  }
  get oversize(): number {
    return this.tooBig;
  }
}
