// Console sign-in sessions (issue 30), kept in the key store's database so every replica sees them: one row per
// session holding the SHA-256 of its id (never the id), read through a short per-replica cache.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SqlDriver } from '../storage/sql-driver.ts';
import { KEY_ROLES, type KeyRole } from './key-store.ts';

/** How long a replica trusts a session row it read: another replica's sign-out reaches it within this. */
export const SESSION_CACHE_MS = 5_000;
/** Rows this long past their expiry are deleted (at a sign-in, at most once per this interval). */
const PURGE_AFTER_MS = 86_400_000;
/** Sessions held in the cache at most; past it the oldest are forgotten (read again on use). */
const MAX_CACHED = 10_000;

export interface ConsoleSession {
  /** Hex SHA-256 of the session id: safe to log and to name the session by (tails, audit). */
  handle: string;
  keyId: string;
  /** The key's role at sign-in; the key's current role is what a request is judged by. */
  role: KeyRole;
  /** SHA-256 of the key secret it signed in with (the store's key_secrets.hash). */
  secretHash: string;
  csrfHash: string;
  createdAt: number;
  expiresAt: number;
}

export interface NewSession {
  keyId: string;
  role: KeyRole;
  secretHash: string;
  ttlMs: number;
}

export interface CreatedSession {
  /** The cookie's value: 256 random bits, base64url. Returned once; the store keeps its hash. */
  id: string;
  csrfToken: string;
  session: ConsoleSession;
}

interface SessionRow {
  id_hash: string;
  key_id: string;
  role: string;
  secret_hash: string;
  csrf_hash: string;
  created_at: number | string;
  expires_at: number | string;
  revoked_at: number | string | null;
}

interface Cached {
  session: ConsoleSession | undefined;
  readAt: number;
}

export interface ConsoleSessionStoreOptions {
  now?: () => number;
  /** How long a row read stays trusted (default SESSION_CACHE_MS). */
  cacheMs?: number;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The CSRF token of a session id: derived, so GET /ui/api/session can answer it again from the cookie alone
 * (the database holds only its hash). A page of another origin can read neither.
 */
export function csrfTokenOf(sessionId: string): string {
  return createHash('sha256').update(`herd-console-csrf\u0000${sessionId}`).digest('base64url');
}

export class ConsoleSessionStore {
  private readonly now: () => number;
  private readonly cacheMs: number;
  private readonly cache = new Map<string, Cached>();
  private readonly endListeners = new Set<(session: ConsoleSession) => void>();
  private lastPurge = 0;

  constructor(
    private readonly db: SqlDriver,
    options: ConsoleSessionStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.cacheMs = options.cacheMs ?? SESSION_CACHE_MS;
  }

  async create(input: NewSession): Promise<CreatedSession> {
    const id = randomBytes(32).toString('base64url');
    const csrfToken = csrfTokenOf(id);
    const now = this.now();
    const session: ConsoleSession = {
      handle: sha256Hex(id),
      keyId: input.keyId,
      role: input.role,
      secretHash: input.secretHash,
      csrfHash: sha256Hex(csrfToken),
      createdAt: now,
      expiresAt: now + input.ttlMs,
    };
    await this.db.query('INSERT INTO console_sessions (id_hash, key_id, role, secret_hash, csrf_hash, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)', [
      session.handle,
      session.keyId,
      session.role,
      session.secretHash,
      session.csrfHash,
      session.createdAt,
      session.expiresAt,
    ]);
    this.remember(session.handle, session);
    if (now - this.lastPurge > PURGE_AFTER_MS / 24) {
      this.lastPurge = now;
      await this.db.query('DELETE FROM console_sessions WHERE expires_at < ?', [now - PURGE_AFTER_MS]);
    }
    return { id, csrfToken, session };
  }

  /** The live session a cookie's value names (not expired, not signed out), else undefined. */
  async find(id: string): Promise<ConsoleSession | undefined> {
    const handle = sha256Hex(id);
    const now = this.now();
    const cached = this.cache.get(handle);
    let session: ConsoleSession | undefined;
    if (cached !== undefined && now - cached.readAt < this.cacheMs) session = cached.session;
    else {
      const [row] = await this.db.query<SessionRow>(
        'SELECT id_hash, key_id, role, secret_hash, csrf_hash, created_at, expires_at, revoked_at FROM console_sessions WHERE id_hash = ?',
        [handle],
      );
      session = row === undefined || row.revoked_at !== null ? undefined : convertRow(row);
      this.remember(handle, session);
    }
    if (session !== undefined && session.expiresAt <= now) return undefined;
    return session;
  }

  /** Signs a session out (every replica, at once on this one); the ended session, or undefined when it was not live. */
  async revoke(id: string): Promise<ConsoleSession | undefined> {
    const session = await this.find(id);
    const handle = sha256Hex(id);
    await this.db.query('UPDATE console_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL', [this.now(), handle]);
    this.remember(handle, undefined);
    if (session !== undefined) for (const listener of this.endListeners) listener(session);
    return session;
  }

  /** True when `token` is the session's CSRF token (compared by hash, in constant time). */
  checkCsrf(session: ConsoleSession, token: string | undefined): boolean {
    if (token === undefined || token === '') return false;
    return timingSafeEqual(Buffer.from(sha256Hex(token)), Buffer.from(session.csrfHash));
  }

  /** Called when a session signs out on this replica (its live tails close); returns the unsubscribe. */
  onEnd(listener: (session: ConsoleSession) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  private remember(handle: string, session: ConsoleSession | undefined): void {
    if (this.cache.size >= MAX_CACHED) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.delete(handle);
    this.cache.set(handle, { session, readAt: this.now() });
  }
}

function convertRow(row: SessionRow): ConsoleSession {
  return {
    handle: row.id_hash,
    keyId: row.key_id,
    role: (KEY_ROLES as readonly string[]).includes(row.role) ? (row.role as KeyRole) : 'client',
    secretHash: row.secret_hash,
    csrfHash: row.csrf_hash,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
