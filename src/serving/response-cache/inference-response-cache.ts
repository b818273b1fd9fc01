// The contract of Triton's server-wide response cache as the inference service uses it: look a key up,
// insert an answer; both implementations (local LRU, Redis) store the same encoded entries.

export interface InferenceResponseCache {
  /** 'local' or 'redis', as named in --cache-config. */
  readonly kind: string;
  /** Undefined on a miss, and when the store fails (a failing cache must not fail inference). */
  lookup(key: string): Promise<Buffer | undefined>;
  /** Resolves false when the entry was not stored (too large, or the store failed). */
  insert(key: string, entry: Buffer): Promise<boolean>;
  close(): Promise<void>;
}
