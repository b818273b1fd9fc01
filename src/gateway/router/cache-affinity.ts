// Prompt-cache affinity: which deployment of a model last served a session, remembered for as long as
// the upstream keeps the session's prompt cache, so its next request lands where the cache is warm.
import type { Clock } from '../../core/clock.ts';

/** Where a request's session identity came from, in the order they are looked for. */
export type SessionSource = 'header' | 'claude-code' | 'prompt-cache-key' | 'prefix';

/** A request's session, computed once per request by the flow (resolve-session-identity.ts). */
export interface SessionIdentity {
  source: SessionSource;
  /** A digest of the source and its value: the store key's stable part, whatever the client sent. */
  key: string;
  /** How long the choice outlives this request: the prompt cache's own lifetime. */
  ttlMs: number;
}

/** Where choices are kept: this process (memory) or every replica (Redis). */
export interface AffinityStore {
  readonly shared: boolean;
  /** The deployment key remembered for `key`; undefined when none, expired, or the store cannot answer. Never rejects. */
  get(key: string): Promise<string | undefined>;
  /** Remembers `deployment` for `ttlMs` from now, replacing and refreshing any earlier choice; never throws. */
  set(key: string, deployment: string, ttlMs: number): void;
  /** True once the store can answer (at once for memory), false after timeoutMs; lookups answer none meanwhile. */
  ready?(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** The store key of a session on one model: sessions are pinned per model, since each model has its own deployments. */
export function createAffinityKey(model: string, session: SessionIdentity): string {
  return `${model}:${session.key}`;
}

// Sessions are short-lived and small (a key and a deployment name); this bounds a replica that sees
// a flood of one-off identities, forgetting the least recently used first.
const DEFAULT_MAX_ENTRIES = 100_000;

export class MemoryAffinityStore implements AffinityStore {
  readonly shared = false;
  /** Insertion order is recency order: set() moves an entry to the end. */
  private readonly entries = new Map<string, { deployment: string; expiresAt: number }>();
  private readonly clock: Pick<Clock, 'now'>;
  private readonly maxEntries: number;

  constructor(clock: Pick<Clock, 'now'>, maxEntries = DEFAULT_MAX_ENTRIES) {
    this.clock = clock;
    this.maxEntries = maxEntries;
  }

  get(key: string): Promise<string | undefined> {
    const entry = this.entries.get(key);
    if (entry === undefined) return Promise.resolve(undefined);
    if (entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return Promise.resolve(undefined);
    }
    return Promise.resolve(entry.deployment);
  }

  set(key: string, deployment: string, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { deployment, expiresAt: this.clock.now() + ttlMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }
}
