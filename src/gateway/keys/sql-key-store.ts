// The KeyStore, written once over SqlDriver for SQLite and PostgreSQL: requests answered from an in-memory KeyDirectory,
// kept fresh by data_version on use (SQLite) or LISTEN/NOTIFY plus a periodic re-read (PostgreSQL).
import { HerdError } from '../../core/errors.ts';
import { PostgresListener } from '../storage/postgres-listener.ts';
import type { SqlDriver, SqlRunner } from '../storage/sql-driver.ts';
import { SqliteDriver } from '../storage/sqlite-driver.ts';
import { appendAuditEvents, listAuditEvents, verifyAuditChain } from './audit-log.ts';
import { hashKeySecret } from './create-key-secret.ts';
import { findKeyByRef } from './find-key.ts';
import { runIdempotent } from './idempotency.ts';
import { createKeyIn, revokeKeyIn, rotateKeyIn, setBlockedIn, updateKeyIn } from './key-changes.ts';
import { DIRECTORY_SQL, KeyDirectory, type SecretRow } from './key-directory.ts';
import { listKeyPage, listTeamPage } from './key-queries.ts';
import type { KeyRow } from './key-rows.ts';
import type * as C from './key-store.ts';
import { createTeamIn, deleteTeamIn, findTeamByRef, updateTeamIn } from './team-changes.ts';

/** The PostgreSQL channel every key-store change is announced on (payload: the new revision). */
export const KEY_STORE_CHANNEL = 'herd_keys';
/** Last-used rows per INSERT: one round trip for many keys, well under SQLite's 32 766 parameters. */
const TOUCH_ROWS_PER_STATEMENT = 500;

export interface SqlKeyStoreOptions {
  now?: () => number;
  /** PostgreSQL: the safety-net re-read interval (default 5 s), for a notification lost while reconnecting. */
  pollMs?: number;
  /** How often last-used times are written (default 30 s; also at close). */
  touchFlushMs?: number;
  /** PostgreSQL: the URL (with credentials) for the LISTEN connection. */
  listenUrl?: string;
  /** Background problems (a failed re-read, the LISTEN connection dropped). */
  log?: (line: string) => void;
}

export class SqlKeyStore implements C.KeyStore {
  readonly kind: 'sqlite' | 'postgres';
  readonly location: string;
  private directory = KeyDirectory.EMPTY;
  private readonly now: () => number;
  private readonly sqlite: SqliteDriver | undefined;
  /** SQLite: PRAGMA data_version when the directory was last checked. */
  private seenDataVersion = -1;
  private pending: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private readonly lastUsed = new Map<string, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private listener: PostgresListener | undefined;
  /**
   * PostgreSQL: whole re-reads asked for (refresh(), a LISTEN reconnect: changes may have been missed) and
   * done; counted, so one asked for while another runs is not lost.
   */
  private wholeReloadsAsked = 0;
  private wholeReloadsDone = 0;
  private closed = false;

  /** Loads the directory and, on PostgreSQL, starts listening; the driver is the store's from here on. */
  static async open(db: SqlDriver, options: SqlKeyStoreOptions = {}): Promise<SqlKeyStore> {
    const store = new SqlKeyStore(db, options);
    try {
      await store.start(options);
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
    return store;
  }

  private constructor(
    private readonly db: SqlDriver,
    private readonly options: SqlKeyStoreOptions,
  ) {
    this.kind = db.kind;
    this.location = db.location;
    this.now = options.now ?? Date.now;
    this.sqlite = db instanceof SqliteDriver ? db : undefined;
  }

  private async start(options: SqlKeyStoreOptions): Promise<void> {
    await this.catchUp();
    // Unreferenced: a process with nothing else to do (the CLI) may exit; close() writes what is left.
    const flush = setInterval(() => void this.flushTouches().catch((err) => this.report('writing last-used times', err)), options.touchFlushMs ?? 30_000).unref();
    this.timers.push(flush);
    if (this.kind !== 'postgres') return;
    const poll = setInterval(() => void this.reload().catch((err) => this.report('re-reading keys', err)), options.pollMs ?? 5000).unref();
    this.timers.push(poll);
    if (options.listenUrl !== undefined) {
      let reconnect = false;
      this.listener = new PostgresListener({
        url: options.listenUrl,
        channel: KEY_STORE_CHANNEL,
        onNotify: () => void this.reload().catch((err) => this.report('re-reading keys', err)),
        // Changes committed before LISTEN took effect were not announced: catch up by revision after the first
        // connect, and read everything after a reconnect (the connection may have been away for long).
        onConnected: () => {
          if (reconnect) this.wholeReloadsAsked++;
          reconnect = true;
          void this.reload().catch((err) => this.report('re-reading keys', err));
        },
        onError: (err) => this.report('listening for key changes', err),
      });
      await this.listener.start();
    }
  }

  lookup(secret: string): C.KeyLookup {
    this.checkOpen();
    this.checkSqliteFreshness();
    // A Map lookup is not constant-time, and need not be: the map key is the SHA-256 of what the client
    // sent, so timing can at best reveal how a *hash* compares, and steering a hash toward a stored one is a preimage search.
    return this.directory.lookup(hashKeySecret(secret), this.now());
  }

  lookupSecretHash(secretHash: string): C.KeyLookup {
    this.checkOpen();
    this.checkSqliteFreshness();
    return this.directory.lookup(secretHash, this.now());
  }

  lookupKeyId(keyId: string): C.KeyLookup {
    this.checkOpen();
    this.checkSqliteFreshness();
    return this.directory.lookupKeyId(keyId, this.now());
  }

  /** The database the store runs on, for tables that live beside the keys (console sessions). */
  get driver(): SqlDriver {
    return this.db;
  }

  hasActiveKeys(): boolean {
    this.checkOpen();
    this.checkSqliteFreshness();
    return this.directory.liveKeys > 0;
  }

  /** Everything, whatever the revision says (a row edited by hand on PostgreSQL moves no revision). */
  async refresh(): Promise<void> {
    this.checkOpen();
    if (this.sqlite) {
      this.loadSqliteDirectory(true);
      return;
    }
    this.wholeReloadsAsked++;
    await this.reload();
  }

  /** After a change: what committed since this replica's revision (SQLite: the whole table, see loadSqliteDirectory). */
  private async catchUp(): Promise<void> {
    if (this.sqlite) this.loadSqliteDirectory(false);
    else await this.reload();
  }

  touch(keyId: string, atMs: number): void {
    if (atMs > (this.lastUsed.get(keyId) ?? 0)) this.lastUsed.set(keyId, atMs);
  }

  createKey(fields: C.KeyFields, ctx: C.ChangeContext): Promise<C.CreatedKey> {
    return this.change((tx, now, rev) => createKeyIn(tx, fields, ctx, now, rev));
  }

  updateKey(ref: string, patch: C.KeyPatch, ctx: C.ChangeContext): Promise<C.StoredKey> {
    return this.change((tx, now, rev) => updateKeyIn(tx, ref, patch, ctx, now, rev));
  }

  rotateKey(ref: string, options: C.RotateOptions, ctx: C.ChangeContext): Promise<C.RotatedKey> {
    return this.change((tx, now, rev) => rotateKeyIn(tx, ref, options, ctx, now, rev));
  }

  setBlocked(ref: string, blocked: boolean, ctx: C.ChangeContext): Promise<C.StoredKey> {
    return this.change((tx, now, rev) => setBlockedIn(tx, ref, blocked, ctx, now, rev));
  }

  revokeKey(ref: string, ctx: C.ChangeContext): Promise<C.RevokeResult> {
    return this.change((tx, now, rev) => revokeKeyIn(tx, ref, ctx, now, rev));
  }

  findKey(ref: string): Promise<C.StoredKey> {
    return findKeyByRef(this.db, ref);
  }

  listKeys(query: C.KeyListQuery): Promise<C.Page<C.StoredKey>> {
    return listKeyPage(this.db, query);
  }

  createTeam(fields: C.TeamFields, ctx: C.ChangeContext): Promise<C.StoredTeam> {
    return this.change((tx, now, rev) => createTeamIn(tx, fields, ctx, now, rev));
  }

  updateTeam(ref: string, patch: C.TeamPatch, ctx: C.ChangeContext): Promise<C.StoredTeam> {
    return this.change((tx, now, rev) => updateTeamIn(tx, ref, patch, ctx, now, rev));
  }

  deleteTeam(ref: string, ctx: C.ChangeContext): Promise<C.StoredTeam> {
    return this.change((tx, now) => deleteTeamIn(tx, ref, ctx, now));
  }

  findTeam(ref: string): Promise<C.StoredTeam> {
    return findTeamByRef(this.db, ref);
  }

  listTeams(query: C.TeamListQuery): Promise<C.Page<C.StoredTeam>> {
    return listTeamPage(this.db, query);
  }

  async appendAudit(events: readonly C.AuditEventInput[], ctx: C.ChangeContext): Promise<void> {
    await this.db.transaction((tx) => appendAuditEvents(tx, events, ctx, this.now()));
  }

  listAudit(query: C.AuditListQuery): Promise<C.Page<C.AuditEvent>> {
    return listAuditEvents(this.db, query);
  }

  verifyAudit(): Promise<C.AuditVerifyResult> {
    return verifyAuditChain(this.db);
  }

  idempotent(actorId: string, key: string, fingerprint: string, run: () => Promise<C.IdempotentAnswer>): Promise<C.IdempotentAnswer & { replayed: boolean }> {
    return runIdempotent(this.db, actorId, key, fingerprint, run, this.now);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    await this.listener?.close();
    await this.flushTouches().catch((err) => this.report('writing last-used times', err));
    await this.pending?.catch(() => undefined);
    await this.db.close();
  }

  /**
   * One transaction: the revision bump first (on PostgreSQL its row lock orders every change, so revisions
   * commit in order and "stamped after what I saw" is exact), the change stamped with it, its audit row and
   * (PostgreSQL) the notification, sent at commit; then this replica's own view.
   */
  private async change<T>(body: (tx: SqlRunner, now: number, rev: number) => Promise<T>): Promise<T> {
    this.checkOpen();
    const result = await this.db.transaction(async (tx) => {
      const [row] = await tx.query<{ revision: number | string }>('UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision');
      const rev = Number(row?.revision);
      const value = await body(tx, this.now(), rev);
      await tx.notify(KEY_STORE_CHANNEL, String(rev));
      return value;
    });
    await this.catchUp();
    return result;
  }

  /** Coalesces: a reload already running may have started before the caller's change, so one more follows it. */
  private reload(): Promise<void> {
    if (this.pending === undefined) {
      this.pending = this.loadAsyncDirectory().finally(() => {
        this.pending = undefined;
      });
      return this.pending;
    }
    this.queued ??= this.pending
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.reload();
      });
    return this.queued;
  }

  /**
   * PostgreSQL: only the keys stamped after the revision this replica holds (a change costs a few rows,
   * however many keys there are); everything at start and after the LISTEN connection came back.
   */
  private async loadAsyncDirectory(): Promise<void> {
    const [rev] = await this.db.query<{ revision: number | string }>(DIRECTORY_SQL.revision);
    const revision = Number(rev?.revision ?? 0);
    const held = this.directory;
    const asked = this.wholeReloadsAsked;
    const whole = held === KeyDirectory.EMPTY || asked > this.wholeReloadsDone;
    if (revision === held.revision && !whole) return;
    if (whole) {
      const keys = await this.db.query<KeyRow>(DIRECTORY_SQL.allKeys);
      this.directory = KeyDirectory.build(revision, keys, await this.db.query<SecretRow>(DIRECTORY_SQL.allSecrets));
      // Only what was asked before this read began counts as done (a failed read leaves it due).
      this.wholeReloadsDone = asked;
      return;
    }
    const since = [held.revision, held.revision];
    const keys = await this.db.query<KeyRow>(DIRECTORY_SQL.changedKeys, since);
    const secrets = await this.db.query<SecretRow>(DIRECTORY_SQL.changedSecrets, since);
    // A reload that started earlier may have finished in between with a newer view: never step back.
    if (this.directory === held) this.directory = held.withChanges(revision, keys, secrets);
  }

  /**
   * SQLite: data_version is a read of the connection's own state (no I/O) that moves whenever another
   * connection commits, so the one-row revision read runs only after some commit, and the tables only after a key change.
   */
  private checkSqliteFreshness(): void {
    const db = this.sqlite;
    if (db === undefined || this.closed || db.inTransaction) return;
    if (db.dataVersion() === this.seenDataVersion) return;
    this.loadSqliteDirectory(false);
  }

  private loadSqliteDirectory(force: boolean): void {
    const db = this.sqlite as SqliteDriver;
    if (db.inTransaction) return;
    const version = db.dataVersion();
    const [rev] = db.querySync<{ revision: number }>(DIRECTORY_SQL.revision);
    const revision = Number(rev?.revision ?? 0);
    // Whole: a change made by hand with the sqlite3 shell moves the revision (triggers) but stamps no row.
    if (force || revision !== this.directory.revision)
      this.directory = KeyDirectory.build(revision, db.querySync<KeyRow>(DIRECTORY_SQL.allKeys), db.querySync<SecretRow>(DIRECTORY_SQL.allSecrets));
    this.seenDataVersion = version;
  }

  /** Last-used times in one transaction; a time never moves backwards (another replica may have written a later one). */
  private async flushTouches(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = [...this.lastUsed];
    this.lastUsed.clear();
    await this.db.transaction(async (tx) => {
      for (let i = 0; i < batch.length; i += TOUCH_ROWS_PER_STATEMENT) {
        const rows = batch.slice(i, i + TOUCH_ROWS_PER_STATEMENT);
        await tx.query(
          `INSERT INTO key_last_used (key_id, last_used_at) VALUES ${rows.map(() => '(?, ?)').join(', ')}
           ON CONFLICT (key_id) DO UPDATE SET last_used_at = excluded.last_used_at WHERE key_last_used.last_used_at < excluded.last_used_at`,
          rows.flat(),
        );
      }
    });
  }

  /** A closed store answers nothing, not even from memory: the gateway fails closed. */
  private checkOpen(): void {
    if (this.closed) throw new HerdError('UNAVAILABLE', `key store ${this.location} is closed`);
  }

  private report(what: string, err: unknown): void {
    this.options.log?.(`key store ${this.location}: ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
