// Picks where keys live from herd.yaml's auth.db: a file path or `sqlite:PATH` (the default, one SQLite
// file) or `postgres://…` (several replicas on one database). Async: PostgreSQL connects and migrates first.
import { HerdError } from '../../core/errors.ts';
import { PostgresDriver } from '../storage/postgres-driver.ts';
import { SqliteDriver } from '../storage/sqlite-driver.ts';
import { KEY_STORE_SCOPE, keyStoreMigrations, postgresKeyStoreMigrations } from './key-store-migrations.ts';
import { SqlKeyStore, type SqlKeyStoreOptions } from './sql-key-store.ts';

export type KeyStoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export interface OpenKeyStoreOptions extends Omit<SqlKeyStoreOptions, 'listenUrl'> {
  /** SQLite: fail instead of creating the file (the CLI's list and revoke should not create databases). */
  mustExist?: boolean;
  /** PostgreSQL: tables in this schema (created if needed); tests use one each. */
  schema?: string;
  /** PostgreSQL: connections in the pool (default 4: changes are rare, lookups never touch it). */
  poolSize?: number;
}

export function parseKeyStoreLocation(location: string): KeyStoreLocation {
  const text = location.trim();
  if (text === '') throw new HerdError('INVALID_ARG', 'the key store location is empty: use sqlite:PATH or postgres://…', { param: 'auth.db' });
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) return { kind: 'sqlite', path: text };
  if (scheme === 'sqlite') {
    const path = text.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new HerdError('INVALID_ARG', `key store '${text}' names no file: use sqlite:PATH`, { param: 'auth.db' });
    return { kind: 'sqlite', path };
  }
  if (scheme === 'postgres' || scheme === 'postgresql') return { kind: 'postgres', url: text };
  // Only the scheme goes into the message: a URL may carry a database password.
  throw new HerdError('INVALID_ARG', `key store scheme '${scheme}:' is not supported: use sqlite:PATH or postgres://…`, { param: 'auth.db' });
}

export async function openKeyStore(location: string, options: OpenKeyStoreOptions = {}): Promise<SqlKeyStore> {
  const parsed = parseKeyStoreLocation(location);
  if (parsed.kind === 'sqlite') {
    const driver = SqliteDriver.open(parsed.path, { label: 'key store', mustExist: options.mustExist, migrations: { scope: KEY_STORE_SCOPE, list: keyStoreMigrations } });
    return SqlKeyStore.open(driver, options);
  }
  const driver = await PostgresDriver.open({
    url: parsed.url,
    schema: options.schema,
    poolSize: options.poolSize ?? 4,
    label: 'key store',
    param: 'auth.db',
    migrations: { scope: KEY_STORE_SCOPE, list: postgresKeyStoreMigrations },
  });
  return SqlKeyStore.open(driver, { ...options, listenUrl: parsed.url });
}
