// The gateway-key contract: plain data for a key and the KeyStore interface that SQLite implements
// today and Postgres can implement later. No secret ever appears in these shapes after creation.
import type { Priority } from '../limits/priority.ts';

/** '*' means every model; otherwise the names (or aliases) a key may call. */
export type AllowedModels = readonly string[] | '*';

/** 'admin' is the master key from the environment; stored keys are always 'client'. */
export type KeyRole = 'admin' | 'client';

/** Per-key limits; an absent field means no limit (the column is NULL). */
export interface KeyLimits {
  /** Spend per UTC day, settlement currency in integer micro-units (1e-6). */
  budgetDayMicros?: number;
  /** Spend per UTC calendar month, settlement currency micro-units. */
  budgetMonthMicros?: number;
  /** Requests per minute. */
  rpm?: number;
  /** Tokens per minute (prompt + completion). */
  tpm?: number;
  /** Requests in flight at once. */
  maxConcurrency?: number;
  /** Admission class when the request sends no x-herd-priority header. */
  defaultPriority?: Priority;
}

/** What a request is authenticated as: who, which models, and its limits. */
export interface KeyInfo extends KeyLimits {
  id: string;
  name: string;
  /** First characters of the key, e.g. `sk-herd-Ab3x`: enough to recognise it, not to use it. */
  prefix: string;
  allowedModels: AllowedModels;
  role: KeyRole;
}

/** A key as the store keeps it: KeyInfo plus its lifecycle. */
export interface StoredKey extends KeyInfo {
  createdAt: Date;
  /** Undefined while the key is active. */
  revokedAt: Date | undefined;
}

export interface CreateKeyInput extends KeyLimits {
  name: string;
  allowedModels: AllowedModels;
}

export interface CreatedKey {
  key: StoredKey;
  /** The full key: returned exactly once, here. The store keeps only its SHA-256 hash. */
  secret: string;
}

export interface RevokeResult {
  key: StoredKey;
  /** True when the key had been revoked before this call (revoke is idempotent). */
  alreadyRevoked: boolean;
}

/**
 * Where gateway keys live. Admin operations are async (a Postgres store needs the network);
 * `authenticate` and `hasActiveKeys` are synchronous on purpose: they run on every request, so an
 * implementation answers them from memory and refreshes that memory itself (SQLite: a cheap
 * change check at most once per interval; Postgres: a background poll or LISTEN/NOTIFY).
 */
export interface KeyStore {
  create(input: CreateKeyInput): Promise<CreatedKey>;
  /** Every key, revoked ones included, oldest first. Never includes secrets or hashes. */
  list(): Promise<StoredKey[]>;
  /** Revokes by id (`key_…`), by display prefix, or by the full key itself. */
  revoke(idOrPrefix: string): Promise<RevokeResult>;
  /** The active key whose secret is `token`, or undefined. Throws HerdError UNAVAILABLE when the store cannot be read. */
  authenticate(token: string): KeyInfo | undefined;
  /** Whether any key is active (decides whether the gateway may run open). */
  hasActiveKeys(): boolean;
  isModelAllowed(key: KeyInfo, model: string): boolean;
  close(): void;
}
