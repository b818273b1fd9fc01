// Triton's 'local' cache: a fixed byte budget in this process, least recently used entries evicted first.
import { LRUCache } from 'lru-cache';
import type { InferenceResponseCache } from './inference-response-cache.ts';

export class LocalResponseCache implements InferenceResponseCache {
  readonly kind = 'local';
  private readonly entries: LRUCache<string, Buffer>;

  constructor(readonly sizeBytes: number) {
    // The key is stored too: count it, so the budget bounds what the cache really holds.
    this.entries = new LRUCache<string, Buffer>({ maxSize: sizeBytes, sizeCalculation: (entry, key) => entry.length + key.length });
  }

  async lookup(key: string): Promise<Buffer | undefined> {
    return this.entries.get(key);
  }

  async insert(key: string, entry: Buffer): Promise<boolean> {
    // An entry over the whole budget is refused (lru-cache would skip it silently): the caller logs nothing, counts a miss.
    if (entry.length + key.length > this.sizeBytes) return false;
    this.entries.set(key, entry);
    return this.entries.has(key);
  }

  /** Bytes held now (keys and entries). */
  get usedBytes(): number {
    return this.entries.calculatedSize;
  }

  get entryCount(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    this.entries.clear();
  }
}
