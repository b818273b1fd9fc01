// `herd migrate`'s one step: a scope's migrations applied to a SQLite file or a PostgreSQL database with
// the same runners the servers use at start-up, reporting the version found and what was applied.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { applyPostgresMigrations } from './apply-postgres-migrations.ts';
import { applySqliteMigrations, type SqliteMigration } from './apply-sqlite-migrations.ts';
import { createPostgresPool } from './create-postgres-pool.ts';
import { describePostgresUrl } from './describe-postgres-failure.ts';

export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export interface MigrationReport {
  scope: string;
  /** The file path, or the PostgreSQL URL without its password. */
  where: string;
  /** The version the database was at; 0: none of this scope's tables. */
  from: number;
  to: number;
  applied: { version: number; name: string }[];
}

export interface MigrateStoreInput {
  location: StoreLocation;
  scope: string;
  /** The list for the location's engine (the key store has one per engine). */
  migrations: readonly SqliteMigration[];
  /** The config field the location came from, for a malformed-URL message. */
  param: string;
}

/** Throws SchemaNewerError when the database is ahead of this build: never migrates backwards. */
export async function migrateStore(input: MigrateStoreInput): Promise<MigrationReport> {
  const { location, scope, migrations } = input;
  const latest = migrations.at(-1)?.version ?? 0;
  let where: string;
  let versions: number[];
  if (location.kind === 'sqlite') {
    where = resolve(location.path);
    mkdirSync(dirname(where), { recursive: true });
    const db = new Database(where, { timeout: 5000 });
    try {
      db.pragma('journal_mode = WAL');
      versions = applySqliteMigrations(db, scope, migrations);
    } finally {
      db.close();
    }
  } else {
    where = describePostgresUrl(location.url, input.param);
    const pool = createPostgresPool({ url: location.url, poolSize: 1, queryTimeoutMs: 60_000 });
    try {
      versions = await applyPostgresMigrations(pool, scope, migrations);
    } finally {
      await pool.end().catch(() => undefined);
    }
  }
  // The runners apply every version above the one found, in order: the first applied names where it stood.
  const from = versions.length > 0 ? (versions[0] as number) - 1 : latest;
  const applied = versions.map((version) => ({ version, name: migrations.find((m) => m.version === version)?.name ?? '' }));
  return { scope, where, from, to: latest, applied };
}
