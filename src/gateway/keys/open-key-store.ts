// Picks the KeyStore implementation from herd.yaml's auth.db: a file path or `sqlite:PATH` (the
// form billing.ledger uses) today; `postgres://…` once that store exists.
import { HerdError } from '../../core/errors.ts';
import type { KeyStore } from './key-store.ts';
import { SqliteKeyStore, type SqliteKeyStoreOptions } from './sqlite-key-store.ts';

export type KeyStoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export function parseKeyStoreLocation(location: string): KeyStoreLocation {
  const text = location.trim();
  if (text === '') throw new HerdError('INVALID_ARG', 'the key store location is empty: use sqlite:PATH', { param: 'auth.db' });
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) return { kind: 'sqlite', path: text };
  if (scheme === 'sqlite') {
    const path = text.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new HerdError('INVALID_ARG', `key store '${text}' names no file: use sqlite:PATH`, { param: 'auth.db' });
    return { kind: 'sqlite', path };
  }
  if (scheme === 'postgres' || scheme === 'postgresql') return { kind: 'postgres', url: text };
  // Only the scheme goes into the message: a URL may carry a database password.
  throw new HerdError('INVALID_ARG', `key store scheme '${scheme}:' is not supported: use sqlite:PATH`, { param: 'auth.db' });
}

export function openKeyStore(location: string, options: SqliteKeyStoreOptions = {}): KeyStore {
  const parsed = parseKeyStoreLocation(location);
  if (parsed.kind === 'postgres') throw new HerdError('UNSUPPORTED', 'a PostgreSQL key store is not available yet: use sqlite:PATH for auth.db');
  return SqliteKeyStore.open(parsed.path, options);
}
