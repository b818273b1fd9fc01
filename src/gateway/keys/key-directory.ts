// The in-memory view every request is answered from: secret hash → key and the secret's own validity.
// Built whole from one read of the tables and replaced, never mutated, so a lookup sees one consistent state.
import type { KeyInfo, KeyLookup, StoredKey, TeamInfo } from './key-store.ts';
import { convertKeyRow, type KeyRow, toOptionalMs } from './key-rows.ts';

export interface SecretRow {
  hash: string;
  key_id: string;
  valid_until: number | string | null;
}

interface Entry {
  info: KeyInfo;
  key: StoredKey;
}

/** The three reads a directory is built from; run in this order, so a change seen in the rows is never older than the revision. */
export const DIRECTORY_SQL = {
  revision: 'SELECT revision FROM gateway_keys_revision WHERE id = 1',
  secrets: 'SELECT hash, key_id, valid_until FROM key_secrets',
} as const;

export class KeyDirectory {
  static readonly EMPTY = new KeyDirectory(-1, [], []);
  private readonly byHash = new Map<string, { entry: Entry; validUntil: number | undefined }>();
  private readonly live: number;

  constructor(
    readonly revision: number,
    keyRows: readonly KeyRow[],
    secretRows: readonly SecretRow[],
  ) {
    const teams = new Map<string, TeamInfo>();
    const byId = new Map<string, Entry>();
    let live = 0;
    for (const row of keyRows) {
      const key = convertKeyRow(row, teams);
      byId.set(key.id, { key, info: toKeyInfo(key) });
      if (key.revokedAt === undefined) live++;
    }
    for (const s of secretRows) {
      const entry = byId.get(s.key_id);
      if (entry) this.byHash.set(s.hash, { entry, validUntil: toOptionalMs(s.valid_until) });
    }
    this.live = live;
  }

  /** Keys not revoked (blocked and expired ones count: they end open mode like any other). */
  get liveKeys(): number {
    return this.live;
  }

  /** Revoked first (nothing brings it back), then a rotated secret, blocked, expired, grace, active. */
  lookup(secretHash: string, nowMs: number): KeyLookup {
    const found = this.byHash.get(secretHash);
    if (!found) return { state: 'unknown' };
    const { key, info } = found.entry;
    if (key.revokedAt !== undefined) return { state: 'revoked', key: info, revokedAt: key.revokedAt.getTime() };
    const rotatedAt = key.rotatedAt?.getTime() ?? nowMs;
    if (found.validUntil !== undefined && found.validUntil <= nowMs) return { state: 'rotated', key: info, rotatedAt };
    if (key.blocked) return { state: 'blocked', key: info };
    if (key.expiresAt !== undefined && key.expiresAt <= nowMs) return { state: 'expired', key: info, expiredAt: key.expiresAt };
    if (found.validUntil !== undefined) return { state: 'grace', key: info, rotatedAt, graceUntil: found.validUntil };
    return { state: 'active', key: info };
  }
}

/** KeyInfo alone: what a request carries, without the lifecycle dates. */
function toKeyInfo(key: StoredKey): KeyInfo {
  const { createdAt: _c, updatedAt: _u, blocked: _b, revokedAt: _r, rotatedAt: _ro, lastUsedAt: _l, ...info } = key;
  return Object.freeze(info);
}
