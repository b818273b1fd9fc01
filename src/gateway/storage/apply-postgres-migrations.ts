// Numbered, forward-only migrations on PostgreSQL, like apply-sqlite-migrations.ts: same table, one
// transaction under an advisory lock, so replicas starting together never apply a migration twice.
import type { Pool } from 'pg';
import { HerdError } from '../../core/errors.ts';
import { SchemaNewerError, type SqliteMigration } from './apply-sqlite-migrations.ts';

export { SchemaNewerError };

/** Any constant works: it only has to be the same in every Herd process. */
const MIGRATION_LOCK = 0x48657264; // 'Herd'

/** Applies the migrations of `scope` not yet recorded; creates `schema` first when given. Returns the versions applied. */
export async function applyPostgresMigrations(pool: Pool, scope: string, migrations: readonly SqliteMigration[], schema?: string): Promise<number[]> {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new HerdError('INTERNAL', `${scope} migration '${m.name}' is numbered ${m.version}, expected ${i + 1}`);
  });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      scope      TEXT    NOT NULL,
      version    INTEGER NOT NULL,
      name       TEXT    NOT NULL,
      applied_at BIGINT  NOT NULL,
      PRIMARY KEY (scope, version)
    )`);
    const { rows } = await client.query<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations WHERE scope = $1', [scope]);
    const current = rows[0]?.version ?? 0;
    const latest = migrations.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new SchemaNewerError(scope, current, latest);
    }
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES ($1, $2, $3, $4)', [scope, migration.version, migration.name, Date.now()]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** A schema name as a quoted identifier; only plain lower-case names are accepted upstream of this. */
export function quoteIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new HerdError('INVALID_ARG', `'${name}' is not a plain schema name (a-z, 0-9, _)`);
  return `"${name}"`;
}
