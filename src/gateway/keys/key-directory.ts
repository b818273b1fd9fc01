// The in-memory view requests are answered from (secret hash → key id and validity; key id → key). Immutable:
// a reload builds a new one, whole or as the previous plus the changed keys, so a lookup sees one state.
import type { KeyInfo, KeyLookup, StoredKey, TeamInfo } from './key-store.ts';
import { convertKeyRow, KEY_SELECT, type KeyRow, toOptionalMs } from './key-rows.ts';

export interface SecretRow {
  hash: string;
  key_id: string;
  valid_until: number | string | null;
}

interface Entry {
  info: KeyInfo;
  key: StoredKey;
}

interface Secret {
  keyId: string;
  validUntil: number | undefined;
}

/** The reads a directory is built from, the revision first: rows read after it are never older than it. */
export const DIRECTORY_SQL = {
  revision: 'SELECT revision FROM gateway_keys_revision WHERE id = 1',
  allKeys: KEY_SELECT,
  allSecrets: 'SELECT hash, key_id, valid_until FROM key_secrets',
  /** Keys stamped after a revision, or whose team was (two `?`: the revision). */
  changedKeys: `${KEY_SELECT} WHERE k.revision > ? OR t.revision > ?`,
  changedSecrets: `SELECT s.hash, s.key_id, s.valid_until FROM key_secrets s JOIN gateway_keys k ON k.id = s.key_id
    LEFT JOIN gateway_teams t ON t.id = k.team_id WHERE k.revision > ? OR t.revision > ?`,
} as const;

export class KeyDirectory {
  static readonly EMPTY = new KeyDirectory(-1, new Map(), new Map());
  /** Keys not revoked (blocked and expired ones count: they end open mode like any other). */
  readonly liveKeys: number;

  private constructor(
    readonly revision: number,
    private readonly keys: ReadonlyMap<string, Entry>,
    private readonly secrets: ReadonlyMap<string, Secret>,
  ) {
    let live = 0;
    for (const { key } of keys.values()) if (key.revokedAt === undefined) live++;
    this.liveKeys = live;
  }

  static build(revision: number, keyRows: readonly KeyRow[], secretRows: readonly SecretRow[]): KeyDirectory {
    return KeyDirectory.EMPTY.withChanges(revision, keyRows, secretRows);
  }

  /** This directory with the given keys (and their secrets) replaced or added. */
  withChanges(revision: number, keyRows: readonly KeyRow[], secretRows: readonly SecretRow[]): KeyDirectory {
    const teams = new Map<string, TeamInfo>();
    const keys = new Map(this.keys);
    const secrets = new Map(this.secrets);
    for (const row of keyRows) {
      const key = convertKeyRow(row, teams);
      keys.set(key.id, { key, info: toKeyInfo(key) });
    }
    for (const s of secretRows) secrets.set(s.hash, { keyId: s.key_id, validUntil: toOptionalMs(s.valid_until) });
    return new KeyDirectory(revision, keys, secrets);
  }

  /** Revoked first (nothing brings it back), then a rotated secret, blocked, expired, grace, active. */
  lookup(secretHash: string, nowMs: number): KeyLookup {
    const secret = this.secrets.get(secretHash);
    const entry = secret && this.keys.get(secret.keyId);
    if (!secret || !entry) return { state: 'unknown' };
    const { key, info } = entry;
    if (key.revokedAt !== undefined) return { state: 'revoked', key: info, revokedAt: key.revokedAt.getTime() };
    const rotatedAt = key.rotatedAt?.getTime() ?? nowMs;
    if (secret.validUntil !== undefined && secret.validUntil <= nowMs) return { state: 'rotated', key: info, rotatedAt };
    if (key.blocked) return { state: 'blocked', key: info };
    if (key.expiresAt !== undefined && key.expiresAt <= nowMs) return { state: 'expired', key: info, expiredAt: key.expiresAt };
    if (secret.validUntil !== undefined) return { state: 'grace', key: info, rotatedAt, graceUntil: secret.validUntil };
    return { state: 'active', key: info };
  }

  /** A key by its public id, as it stands now (a batch's owner when its lines run: revoked, blocked or expired keys are not run for). */
  lookupKeyId(keyId: string, nowMs: number): KeyLookup {
    const entry = this.keys.get(keyId);
    if (!entry) return { state: 'unknown' };
    const { key, info } = entry;
    if (key.revokedAt !== undefined) return { state: 'revoked', key: info, revokedAt: key.revokedAt.getTime() };
    if (key.blocked) return { state: 'blocked', key: info };
    if (key.expiresAt !== undefined && key.expiresAt <= nowMs) return { state: 'expired', key: info, expiredAt: key.expiresAt };
    return { state: 'active', key: info };
  }
}

/** KeyInfo alone: what a request carries, without the lifecycle dates. */
function toKeyInfo(key: StoredKey): KeyInfo {
  const { createdAt: _c, updatedAt: _u, blocked: _b, revokedAt: _r, rotatedAt: _ro, lastUsedAt: _l, ...info } = key;
  return Object.freeze(info);
}
