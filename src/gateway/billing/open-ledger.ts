// Picks the Ledger implementation from billing.ledger: `sqlite:PATH` or a bare path (the embedded
// default), or `postgres://…` (several replicas sharing one ledger).
import { isAbsolute, resolve } from 'node:path';
import { HerdError } from '../../core/errors.ts';
import type { Ledger, LedgerOptions, RecoverOptions } from './ledger.ts';
import { SqliteLedger, type SqliteLedgerOptions } from './sqlite-ledger.ts';

/** A PostgreSQL ledger's spool when billing.spool_dir is unset (relative to the working directory). */
export const DEFAULT_POSTGRES_SPOOL = 'data/postgres-ledger.spool';

export type LedgerLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export function parseLedgerLocation(location: string): LedgerLocation {
  const text = location.trim();
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(text)?.[1]?.toLowerCase();
  if (text === '') throw new HerdError('INVALID_ARG', 'the ledger location is empty: use sqlite:PATH or postgres://…', { param: 'billing.ledger' });
  if (scheme === undefined) return { kind: 'sqlite', path: text };
  if (scheme === 'sqlite') {
    const path = text.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new HerdError('INVALID_ARG', `ledger '${text}' names no file: use sqlite:PATH`, { param: 'billing.ledger' });
    return { kind: 'sqlite', path };
  }
  if (scheme === 'postgres' || scheme === 'postgresql') return { kind: 'postgres', url: text };
  // Only the scheme goes into the message: a URL may carry a password.
  throw new HerdError('INVALID_ARG', `ledger scheme '${scheme}:' is not supported: use sqlite:PATH or postgres://…`, { param: 'billing.ledger' });
}

/** A relative SQLite path is relative to herd.yaml's folder, as auth.db is; URLs stay as written. */
export function resolveLedgerLocation(location: string, baseDir: string): string {
  const parsed = parseLedgerLocation(location);
  if (parsed.kind === 'postgres' || isAbsolute(parsed.path)) return location;
  return `sqlite:${resolve(baseDir, parsed.path)}`;
}

export interface OpenLedgerOptions extends LedgerOptions, Pick<SqliteLedgerOptions, 'synchronous'> {
  /** PostgreSQL only: the schema holding the tables. */
  schema?: string;
  /**
   * A serving process: spool rows locally (SQLite: in PATH.spool/, PostgreSQL: ./data/postgres-ledger.spool/,
   * unless spoolDir says otherwise). Reports and the CLI leave it off.
   */
  spool?: boolean;
  /**
   * A serving process: the last start-up step settles or releases what earlier processes left open
   * (PostgreSQL: once the database answers, which a spooled ledger need not wait for).
   */
  recover?: Pick<RecoverOptions, 'olderThanMs'>;
  /** Start-up lines (PostgreSQL: the database unreachable, and why; reached again). */
  log?: (line: string) => void;
}

export async function openLedger(location: string, options: OpenLedgerOptions = {}): Promise<Ledger> {
  const parsed = parseLedgerLocation(location);
  // pg is imported only for a PostgreSQL ledger: a SQLite one should not carry its resident size.
  if (parsed.kind === 'postgres') {
    const spoolDir = options.spoolDir ?? (options.spool ? resolve(DEFAULT_POSTGRES_SPOOL) : undefined);
    return (await import('./postgres-ledger.ts')).PostgresLedger.open({ ...options, url: parsed.url, ...(spoolDir !== undefined ? { spoolDir } : {}) });
  }
  const { recover, log: _log, ...sqliteOptions } = options;
  const spoolDir = options.spool ? (options.spoolDir ?? `${resolve(parsed.path)}.spool`) : undefined;
  const ledger = SqliteLedger.open(parsed.path, { ...sqliteOptions, ...(spoolDir !== undefined ? { spoolDir } : {}) });
  if (recover !== undefined) {
    try {
      await ledger.recover({ olderThanMs: recover.olderThanMs });
    } catch (err) {
      await ledger.close();
      throw err;
    }
  }
  return ledger;
}
