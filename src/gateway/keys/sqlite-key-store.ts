// KeyStore on a SQLite file (better-sqlite3, WAL): the embedded default. Active keys are held in
// memory by hash; SQLite's data_version, read on every use, tells when another process (the `herd keys`
// CLI) committed, so a created or revoked key counts from the next request on.
import { existsSync, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { HerdError } from '../../core/errors.ts';
import { applySqliteMigrations } from './apply-sqlite-migrations.ts';
import { createKeySecret, hashKeySecret, looksLikeKeySecret } from './create-key-secret.ts';
import { isModelAllowed } from './is-model-allowed.ts';
import { isPriority } from '../limits/priority.ts';
import type { AllowedModels, CreatedKey, CreateKeyInput, KeyInfo, KeyLimits, KeyStore, RevokeResult, StoredKey } from './key-store.ts';
import { KEY_STORE_SCOPE, keyStoreMigrations } from './key-store-migrations.ts';
import { quoteUntrusted } from './mask-key.ts';
import { validateCreateKeyInput } from './validate-create-key-input.ts';

export interface SqliteKeyStoreOptions {
  /** Fail instead of creating the file (the CLI's list and revoke should not create databases). */
  mustExist?: boolean;
}

interface KeyRow extends LimitColumns {
  id: string;
  name: string;
  prefix: string;
  allowed_models: string;
  created_at: number;
  revoked_at: number | null;
}

/** Migration 2's columns; NULL: no limit. */
interface LimitColumns {
  budget_day_micros: number | null;
  budget_month_micros: number | null;
  rpm: number | null;
  tpm: number | null;
  max_concurrency: number | null;
  default_priority: string | null;
}

interface ActiveKeyRow extends KeyRow {
  key_hash: string;
}

const COLUMNS = 'id, name, prefix, allowed_models, created_at, revoked_at, budget_day_micros, budget_month_micros, rpm, tpm, max_concurrency, default_priority';
const PARAMS = '@id, @name, @prefix, @allowed_models, @created_at, @revoked_at, @budget_day_micros, @budget_month_micros, @rpm, @tpm, @max_concurrency, @default_priority';

export class SqliteKeyStore implements KeyStore {
  readonly path: string;
  private readonly db: Database.Database;
  /** hash → key, active keys only. Replaced wholesale on reload, never mutated. */
  private active = new Map<string, KeyInfo>();
  private revision = -1;
  /** PRAGMA data_version when the keys were last loaded: it moves when another connection commits. */
  private seenDataVersion = -1;
  private readonly dataVersion: Database.Statement;
  private closed = false;

  /** Opens (creating the file and its directory unless mustExist) and migrates. */
  static open(file: string, options: SqliteKeyStoreOptions = {}): SqliteKeyStore {
    const path = resolve(file);
    if (options.mustExist && !existsSync(path)) throw new HerdError('NOT_FOUND', `key store ${path} does not exist`);
    let db: Database.Database | undefined;
    try {
      if (!options.mustExist) mkdirSync(dirname(path), { recursive: true });
      db = new Database(path, { fileMustExist: options.mustExist ?? false });
      db.pragma('journal_mode = WAL');
      applySqliteMigrations(db, KEY_STORE_SCOPE, keyStoreMigrations);
    } catch (err) {
      db?.close();
      throw new HerdError('UNAVAILABLE', `cannot open key store ${path}: ${messageOf(err)}`, { cause: err });
    }
    return new SqliteKeyStore(db, path);
  }

  private constructor(db: Database.Database, path: string) {
    this.db = db;
    this.path = path;
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  async create(input: CreateKeyInput): Promise<CreatedKey> {
    const valid = validateCreateKeyInput(input);
    const { secret, hash, prefix } = createKeySecret();
    const row: KeyRow = {
      id: `key_${randomBytes(6).toString('hex')}`,
      name: valid.name,
      prefix,
      allowed_models: JSON.stringify(valid.allowedModels),
      created_at: Date.now(),
      revoked_at: null,
      ...convertKeyLimitsToColumns(valid),
    };
    this.write(() => {
      this.db.prepare(`INSERT INTO gateway_keys (${COLUMNS}, key_hash) VALUES (${PARAMS}, @hash)`).run({ ...row, hash });
    });
    return { key: convertRowToStoredKey(row), secret };
  }

  async list(): Promise<StoredKey[]> {
    const rows = this.read(() => this.db.prepare(`SELECT ${COLUMNS} FROM gateway_keys ORDER BY created_at, rowid`).all() as KeyRow[]);
    return rows.map(convertRowToStoredKey);
  }

  async revoke(idOrPrefix: string): Promise<RevokeResult> {
    const ref = idOrPrefix.trim();
    if (ref === '') throw new HerdError('INVALID_ARG', 'give the id or prefix of the key to revoke');
    const byKey = looksLikeKeySecret(ref);
    const rows = this.read(
      () =>
        (byKey
          ? this.db.prepare(`SELECT ${COLUMNS} FROM gateway_keys WHERE key_hash = ?`).all(hashKeySecret(ref))
          : this.db.prepare(`SELECT ${COLUMNS} FROM gateway_keys WHERE id = ? OR prefix = ? ORDER BY created_at DESC, rowid DESC`).all(ref, ref)) as KeyRow[],
    );
    // Never echo a full key back, even a wrong one: it may be a live secret for something else.
    const shown = quoteUntrusted(ref);
    if (rows.length === 0) throw new HerdError('NOT_FOUND', `${byKey ? `no key matches ${shown}` : `no key has the id or prefix ${shown}`} (see herd keys list)`);
    const active = rows.filter((r) => r.revoked_at === null);
    if (active.length > 1) {
      throw new HerdError('INVALID_ARG', `prefix ${shown} matches ${active.length} active keys (${active.map((r) => r.id).join(', ')}): revoke by id`);
    }
    const target = active[0];
    if (!target) return { key: convertRowToStoredKey(rows[0] as KeyRow), alreadyRevoked: true };
    const revokedAt = Date.now();
    this.write(() => {
      this.db.prepare('UPDATE gateway_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(revokedAt, target.id);
    });
    return { key: convertRowToStoredKey({ ...target, revoked_at: revokedAt }), alreadyRevoked: false };
  }

  authenticate(token: string): KeyInfo | undefined {
    this.refreshIfStale();
    // A Map lookup is not constant-time, and need not be: the lookup key is the SHA-256 of what
    // the client sent, so timing can at best reveal how a *hash* compares, and steering a hash
    // toward a stored one is a preimage search.
    return this.active.get(hashKeySecret(token));
  }

  hasActiveKeys(): boolean {
    this.refreshIfStale();
    return this.active.size > 0;
  }

  isModelAllowed(key: KeyInfo, model: string): boolean {
    return isModelAllowed(key, model);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  /**
   * Reloads the active keys when the revision has moved. data_version is a read of the connection's own
   * state (no I/O) that changes whenever another connection commits, so the one-row revision read runs
   * only after some commit: a ledger sharing the file moves it too, which costs that one read.
   */
  private refreshIfStale(): void {
    if (this.closed) throw new HerdError('UNAVAILABLE', `key store ${this.path} is closed`);
    const version = this.read(() => this.dataVersion.get() as number);
    if (version === this.seenDataVersion) return;
    this.read(() => {
      this.db.transaction(() => {
        const { revision } = this.db.prepare('SELECT revision FROM gateway_keys_revision WHERE id = 1').get() as { revision: number };
        if (revision === this.revision) return;
        const rows = this.db.prepare(`SELECT ${COLUMNS}, key_hash FROM gateway_keys WHERE revoked_at IS NULL`).all() as ActiveKeyRow[];
        this.active = new Map(rows.map((r) => [r.key_hash, convertRowToKeyInfo(r)]));
        this.revision = revision;
      })();
    });
    this.seenDataVersion = version;
  }

  private write(change: () => void): void {
    this.read(change);
    // Our own commits do not move our data_version: the next authenticate() must look all the same.
    this.seenDataVersion = -1;
  }

  /** Runs a statement, turning SQLite failures into one clear error that never carries key material. */
  private read<T>(body: () => T): T {
    if (this.closed) throw new HerdError('UNAVAILABLE', `key store ${this.path} is closed`);
    try {
      return body();
    } catch (err) {
      if (err instanceof HerdError) throw err;
      throw new HerdError('UNAVAILABLE', `key store ${this.path} failed: ${messageOf(err)}`, { cause: err });
    }
  }
}

function convertRowToKeyInfo(row: KeyRow): KeyInfo {
  return Object.freeze({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    allowedModels: parseAllowedModels(row.allowed_models),
    role: 'client' as const,
    ...parseKeyLimits(row),
  });
}

function convertKeyLimitsToColumns(limits: KeyLimits): LimitColumns {
  return {
    budget_day_micros: limits.budgetDayMicros ?? null,
    budget_month_micros: limits.budgetMonthMicros ?? null,
    rpm: limits.rpm ?? null,
    tpm: limits.tpm ?? null,
    max_concurrency: limits.maxConcurrency ?? null,
    default_priority: limits.defaultPriority ?? null,
  };
}

/**
 * Only the limits that are set. A value edited (around the CHECKs, e.g. as text) into something
 * unreadable limits the most rather than the least: 0 for a number, BATCH for the priority.
 */
function parseKeyLimits(row: LimitColumns): KeyLimits {
  const limits: KeyLimits = {};
  const whole = (value: number | null, min: number) => (Number.isSafeInteger(value) && (value as number) >= min ? (value as number) : 0);
  if (row.budget_day_micros !== null) limits.budgetDayMicros = whole(row.budget_day_micros, 0);
  if (row.budget_month_micros !== null) limits.budgetMonthMicros = whole(row.budget_month_micros, 0);
  if (row.rpm !== null) limits.rpm = whole(row.rpm, 1);
  if (row.tpm !== null) limits.tpm = whole(row.tpm, 1);
  if (row.max_concurrency !== null) limits.maxConcurrency = whole(row.max_concurrency, 1);
  if (row.default_priority !== null) limits.defaultPriority = isPriority(row.default_priority) ? row.default_priority : 'BATCH';
  return limits;
}

function convertRowToStoredKey(row: KeyRow): StoredKey {
  return Object.freeze({
    ...convertRowToKeyInfo(row),
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? undefined : new Date(row.revoked_at),
  });
}

/** A row edited into something unreadable allows nothing rather than everything. */
function parseAllowedModels(text: string): AllowedModels {
  try {
    const value: unknown = JSON.parse(text);
    if (value === '*') return '*';
    if (Array.isArray(value) && value.every((m) => typeof m === 'string')) return Object.freeze([...value]);
  } catch {
    /* fall through */
  }
  return Object.freeze([]);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
