// Numbered, forward-only schema migrations for a SQLite file shared by several components (keys
// today, the ledger later): each component owns a `scope` in one `schema_migrations` table.
import type { Database } from 'better-sqlite3';
import { HerdError } from '../../core/errors.ts';

export interface SqliteMigration {
  /** 1, 2, 3 … within its scope; never renumbered or edited once released. */
  version: number;
  name: string;
  sql: string;
}

/**
 * The database's schema is newer than this Herd knows (a newer Herd migrated it): UNAVAILABLE on the wire,
 * and, as its own kind, something only an upgrade fixes (describe-postgres-failure.ts reads the kind, not the text).
 */
export class SchemaNewerError extends HerdError {
  constructor(scope: string, current: number, latest: number) {
    super('UNAVAILABLE', `database schema ${scope} v${current} is newer than this Herd (v${latest}): upgrade Herd, never migrate backwards`);
  }
}

/** Applies the migrations of `scope` that the file has not seen, in one IMMEDIATE transaction so
 *  two processes opening a fresh file at once cannot both apply them. Returns the versions applied. */
export function applySqliteMigrations(db: Database, scope: string, migrations: readonly SqliteMigration[]): number[] {
  checkNumbering(scope, migrations);
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      scope      TEXT    NOT NULL,
      version    INTEGER NOT NULL,
      name       TEXT    NOT NULL,
      applied_at INTEGER NOT NULL,
      PRIMARY KEY (scope, version)
    )`);
    const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations WHERE scope = ?').get(scope) as { version: number | null };
    const current = row.version ?? 0;
    const latest = migrations.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new SchemaNewerError(scope, current, latest);
    }
    const record = db.prepare('INSERT INTO schema_migrations (scope, version, name, applied_at) VALUES (?, ?, ?, ?)');
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      record.run(scope, migration.version, migration.name, Date.now());
      applied.push(migration.version);
    }
    return applied;
  });
  return run.immediate();
}

function checkNumbering(scope: string, migrations: readonly SqliteMigration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new HerdError('INTERNAL', `${scope} migration '${m.name}' is numbered ${m.version}, expected ${i + 1}`);
  });
}
