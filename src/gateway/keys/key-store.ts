// The key-store contract: keys, teams and the audit log as plain data, and the KeyStore interface that
// SQLite (the embedded default) and PostgreSQL (several replicas) implement on one schema.
// docs/keys-and-teams.md is the user's view of the same model.
import type { Priority } from '../limits/priority.ts';

/** '*' means every model; otherwise names, aliases or `*` patterns (`gpt-4o*`) a key may call. */
export type AllowedModels = readonly string[] | '*';

/**
 * `admin`: everything (the master key is one). `viewer`: read-only admin API, never secrets.
 * `manager`: its own team's keys. `client`: the gateway only. Every role may call models.
 */
export type KeyRole = 'admin' | 'viewer' | 'manager' | 'client';
export const KEY_ROLES: readonly KeyRole[] = ['admin', 'viewer', 'manager', 'client'];

export type BudgetPeriod = 'day' | 'week' | 'month';

/** A spend cap per calendar period (aligned in the owner's time zone), for every model or those matching `model`. */
export interface BudgetRule {
  period: BudgetPeriod;
  /** Settlement currency, integer micro-units (1e-6). */
  amountMicros: number;
  /** A model name or `*` pattern the rule is limited to; undefined: all models. */
  model?: string | undefined;
}

/** Rate limits; an absent field means no limit. */
export interface RateLimits {
  /** Requests per minute. */
  rpm?: number | undefined;
  /** Tokens per minute (prompt + completion). */
  tpm?: number | undefined;
  /** Requests in flight at once. */
  maxConcurrency?: number | undefined;
}

/** What keys and teams share: who may call what, how fast and for how much. */
export interface AccessPolicy extends RateLimits {
  allowedModels: AllowedModels;
  budgets: readonly BudgetRule[];
  /** IANA zone the budget periods align to ('UTC' unless set). */
  timezone: string;
  /** Budget alert thresholds in percent of each budget (e.g. [50, 80, 100]); empty: the server's default. */
  alertThresholds: readonly number[];
}

export interface TeamInfo extends AccessPolicy {
  /** Stable public id, `tm_…`. */
  id: string;
  name: string;
}

export interface StoredTeam extends TeamInfo {
  createdAt: Date;
  updatedAt: Date;
}

/** What a request is authenticated as. Frozen; replaced wholesale when the store changes. */
export interface KeyInfo extends AccessPolicy {
  /** Stable public id (`hk_…`; keys made before #28 keep their `key_…`): safe to log, kept across rotations. */
  id: string;
  name: string;
  /** First characters of the current secret, for recognising it in a list. */
  prefix: string;
  role: KeyRole;
  /** The team whose limits also apply (the tighter of the two wins); undefined: no team. */
  team?: TeamInfo | undefined;
  /** Admission class when the request sends no x-herd-priority header. */
  defaultPriority?: Priority | undefined;
  /** Client addresses the key may be used from (CIDR); empty: anywhere. */
  allowedCidrs: readonly string[];
  /** Copied into the key's ledger rows. */
  tags: readonly string[];
  metadata: Readonly<Record<string, string>>;
  /** Epoch ms after which the key is refused; undefined: never. */
  expiresAt?: number | undefined;
  /** When no max_tokens is sent and the budget cannot cover the model's maximum output: cap max_tokens to what it covers instead of refusing. */
  capMaxTokens: boolean;
}

/** A key as the store keeps it: KeyInfo plus its lifecycle. */
export interface StoredKey extends KeyInfo {
  createdAt: Date;
  updatedAt: Date;
  blocked: boolean;
  /** Undefined while not revoked. */
  revokedAt: Date | undefined;
  /** The last rotation, if any. */
  rotatedAt: Date | undefined;
  /** Last request seen (written in batches: may lag by up to a minute). */
  lastUsedAt: Date | undefined;
}

/** The result of looking a presented secret up: the key, and why it may not be used if it may not. */
export type KeyLookup =
  | { state: 'active'; key: KeyInfo }
  /** The secret was replaced by a rotation but is inside its grace window: it still works. */
  | { state: 'grace'; key: KeyInfo; rotatedAt: number; graceUntil: number }
  | { state: 'rotated'; key: KeyInfo; rotatedAt: number }
  | { state: 'blocked'; key: KeyInfo }
  | { state: 'expired'; key: KeyInfo; expiredAt: number }
  | { state: 'revoked'; key: KeyInfo; revokedAt: number }
  | { state: 'unknown' };

/** Who made a change: a key (admin API) or a person at a terminal (`cli@host`). Lands in the audit row. */
export interface Actor {
  /** A key's public id, `master`, or `cli@host`. */
  id: string;
  name: string;
  role: KeyRole;
  /** The actor's team when role is `manager`. */
  teamId?: string | undefined;
}

/** Where a change came from, for its audit row. */
export interface ChangeContext {
  actor: Actor;
  requestId?: string | undefined;
  sourceIp?: string | undefined;
  /** The console session the call came through (its handle, never the cookie), when it did: the live tail closes with it. */
  sessionId?: string | undefined;
}

/** Fields of a key a caller may set; validation fills defaults. */
export interface KeyFields extends RateLimits {
  name: string;
  /** A team id, name, or undefined for none. */
  team?: string | undefined;
  role?: KeyRole | undefined;
  allowedModels?: AllowedModels | undefined;
  budgets?: readonly BudgetRule[] | undefined;
  timezone?: string | undefined;
  alertThresholds?: readonly number[] | undefined;
  defaultPriority?: Priority | undefined;
  allowedCidrs?: readonly string[] | undefined;
  tags?: readonly string[] | undefined;
  metadata?: Readonly<Record<string, string>> | undefined;
  /** Epoch ms; undefined: never expires. */
  expiresAt?: number | undefined;
  capMaxTokens?: boolean | undefined;
}

/** An update: only the fields present change; `null` clears a limit or the expiry. */
export type KeyPatch = { [F in keyof KeyFields]?: KeyFields[F] | null };

export interface CreatedKey {
  key: StoredKey;
  /** The full secret (`sk-herd-<public id>-<random>`): returned exactly once, here. The store keeps its SHA-256. */
  secret: string;
}

export interface RotateOptions {
  /** How long the old secret keeps working (default 24 h). */
  graceMs?: number | undefined;
  /** Client-supplied: the same id again returns the same new secret instead of minting another. */
  rotationId?: string | undefined;
}

export interface RotatedKey extends CreatedKey {
  /** When the previous secret stops working. */
  graceUntil: Date;
  /** True when rotationId had been used before: the secret is the one minted then. */
  replayed: boolean;
}

export interface RevokeResult {
  key: StoredKey;
  /** True when the key had been revoked before this call (revoke is idempotent). */
  alreadyRevoked: boolean;
}

export interface TeamFields extends RateLimits {
  name: string;
  allowedModels?: AllowedModels | undefined;
  budgets?: readonly BudgetRule[] | undefined;
  timezone?: string | undefined;
  alertThresholds?: readonly number[] | undefined;
}

export type TeamPatch = { [F in keyof TeamFields]?: TeamFields[F] | null };

/** One page of a list: `next` is the cursor for the following page, undefined on the last. */
export interface Page<T> {
  items: T[];
  next: string | undefined;
}

export interface KeyListQuery {
  /** Team id or name. */
  team?: string | undefined;
  /** Case-insensitive substring of the name. */
  search?: string | undefined;
  /** Revoked keys are left out unless asked for. */
  includeRevoked?: boolean | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface TeamListQuery {
  search?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** What an audit row records. `before`/`after` never hold secrets or hashes. */
export interface AuditEventInput {
  action: string;
  /** `key:hk_…`, `team:tm_…`, `admin`, … */
  object: string;
  before?: unknown;
  after?: unknown;
  /** For aggregated refusals: how many in the row's minute. */
  count?: number | undefined;
}

export interface AuditEvent extends AuditEventInput {
  /** Position in the chain, from 1. */
  seq: number;
  at: Date;
  actorId: string;
  actorName: string;
  requestId: string | undefined;
  sourceIp: string | undefined;
  count: number;
  prevHash: string;
  hash: string;
}

export interface AuditListQuery {
  action?: string | undefined;
  object?: string | undefined;
  actorId?: string | undefined;
  sinceMs?: number | undefined;
  untilMs?: number | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export type AuditVerifyResult = { ok: true; rows: number } | { ok: false; rows: number; brokenSeq: number; reason: string };

/** An admin API answer kept under its Idempotency-Key, replayed for a retry with the same key and body. */
export interface IdempotentAnswer {
  status: number;
  body: string;
}

/**
 * Where gateway keys, teams and the audit log live. Lookups (`lookup`, `hasActiveKeys`) are synchronous:
 * they run on every request, so an implementation answers them from memory and keeps that memory fresh
 * itself (SQLite: data_version on use; PostgreSQL: LISTEN/NOTIFY plus a periodic re-read). Every change
 * writes its audit row in the same transaction, and is seen by every replica within a second.
 */
export interface KeyStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Where it is, for messages (a path, or the PostgreSQL URL without credentials). */
  readonly location: string;

  lookup(secret: string): KeyLookup;
  /** The same by the secret's SHA-256 (hex): a console session holds that, never the secret. */
  lookupSecretHash(secretHash: string): KeyLookup;
  /** By the key's public id (never `rotated` or `grace`: those are states of a secret). */
  lookupKeyId(keyId: string): KeyLookup;
  hasActiveKeys(): boolean;
  /** Reloads now; resolves when the in-memory view includes every change committed before the call. */
  refresh(): Promise<void>;
  /** Notes a request by the key; written in batches. */
  touch(keyId: string, atMs: number): void;

  createKey(fields: KeyFields, ctx: ChangeContext): Promise<CreatedKey>;
  updateKey(ref: string, patch: KeyPatch, ctx: ChangeContext): Promise<StoredKey>;
  rotateKey(ref: string, options: RotateOptions, ctx: ChangeContext): Promise<RotatedKey>;
  setBlocked(ref: string, blocked: boolean, ctx: ChangeContext): Promise<StoredKey>;
  revokeKey(ref: string, ctx: ChangeContext): Promise<RevokeResult>;
  /** By public id, name (team/name when names repeat across teams), display prefix, or the secret itself. NOT_FOUND or an ambiguity error otherwise. */
  findKey(ref: string): Promise<StoredKey>;
  listKeys(query: KeyListQuery): Promise<Page<StoredKey>>;

  createTeam(fields: TeamFields, ctx: ChangeContext): Promise<StoredTeam>;
  updateTeam(ref: string, patch: TeamPatch, ctx: ChangeContext): Promise<StoredTeam>;
  /** Refused while the team has keys that are not revoked. */
  deleteTeam(ref: string, ctx: ChangeContext): Promise<StoredTeam>;
  /** By id or name. */
  findTeam(ref: string): Promise<StoredTeam>;
  listTeams(query: TeamListQuery): Promise<Page<StoredTeam>>;

  /** Events not tied to a change (sign-ins, aggregated refusals). */
  appendAudit(events: readonly AuditEventInput[], ctx: ChangeContext): Promise<void>;
  listAudit(query: AuditListQuery): Promise<Page<AuditEvent>>;
  /** Walks the hash chain; names the first row whose hash or link does not match. */
  verifyAudit(): Promise<AuditVerifyResult>;

  /**
   * Runs `run` once per (actor, idempotency key): a retry with the same fingerprint gets the stored
   * answer; a different fingerprint, or a retry while the first is running, is refused (ALREADY_EXISTS → 409 on the admin API).
   */
  idempotent(actorId: string, idempotencyKey: string, fingerprint: string, run: () => Promise<IdempotentAnswer>): Promise<IdempotentAnswer & { replayed: boolean }>;

  close(): Promise<void>;
}
