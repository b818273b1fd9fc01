// The key store's schema, one numbered migration at a time (scope 'keys' in schema_migrations): SQLite's
// history (1 and 2 as released, 3 the #28 model, 4 console sessions), and PostgreSQL's, which starts at that model. Never edit a released one.
import type { SqliteMigration } from '../storage/apply-sqlite-migrations.ts';
import { AUDIT_AND_IDEMPOTENCY_SQL, CONSOLE_SESSIONS_SQL, KEY_MODEL_POSTGRES_SQL, KEY_MODEL_SQLITE_SQL } from './key-store-schema.ts';

export const KEY_STORE_SCOPE = 'keys';

export const keyStoreMigrations: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'gateway keys',
    sql: `
      CREATE TABLE gateway_keys (
        id             TEXT    PRIMARY KEY,            -- 'key_' + 12 hex characters
        name           TEXT    NOT NULL,
        key_hash       TEXT    NOT NULL UNIQUE,        -- SHA-256 of the full key, hex; never the key
        prefix         TEXT    NOT NULL,               -- first 12 characters, for display only
        allowed_models TEXT    NOT NULL,               -- JSON: "*" or an array of model names
        created_at     INTEGER NOT NULL,               -- Unix milliseconds
        revoked_at     INTEGER                         -- NULL while active
      );
      CREATE INDEX gateway_keys_prefix ON gateway_keys (prefix);
      -- Bumped by triggers on every change, even one made by hand with the sqlite3 shell, so a
      -- server notices a revoke by reading one row (see SqliteKeyStore).
      CREATE TABLE gateway_keys_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
      INSERT INTO gateway_keys_revision (id, revision) VALUES (1, 0);
      CREATE TRIGGER gateway_keys_insert AFTER INSERT ON gateway_keys
        BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
      CREATE TRIGGER gateway_keys_update AFTER UPDATE ON gateway_keys
        BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
      CREATE TRIGGER gateway_keys_delete AFTER DELETE ON gateway_keys
        BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
    `,
  },
  {
    version: 2,
    name: 'per-key limits',
    sql: `
      ALTER TABLE gateway_keys ADD COLUMN budget_day_micros   INTEGER CHECK (budget_day_micros >= 0);   -- settlement currency, 1e-6 units, per UTC day
      ALTER TABLE gateway_keys ADD COLUMN budget_month_micros INTEGER CHECK (budget_month_micros >= 0); -- per UTC calendar month
      ALTER TABLE gateway_keys ADD COLUMN rpm                 INTEGER CHECK (rpm > 0);                  -- requests per minute
      ALTER TABLE gateway_keys ADD COLUMN tpm                 INTEGER CHECK (tpm > 0);                  -- tokens per minute
      ALTER TABLE gateway_keys ADD COLUMN max_concurrency     INTEGER CHECK (max_concurrency > 0);      -- requests in flight
      ALTER TABLE gateway_keys ADD COLUMN default_priority    TEXT    CHECK (default_priority IN ('HIGH', 'NORMAL', 'BATCH'));
    `,
  },
  { version: 3, name: 'key model: teams, secrets, rotation, audit, idempotency', sql: KEY_MODEL_SQLITE_SQL + AUDIT_AND_IDEMPOTENCY_SQL },
  { version: 4, name: 'console sessions', sql: CONSOLE_SESSIONS_SQL },
];

export const postgresKeyStoreMigrations: readonly SqliteMigration[] = [
  { version: 1, name: 'key model: teams, secrets, rotation, audit, idempotency', sql: KEY_MODEL_POSTGRES_SQL + AUDIT_AND_IDEMPOTENCY_SQL.replaceAll('INTEGER', 'BIGINT') },
  { version: 2, name: 'console sessions', sql: CONSOLE_SESSIONS_SQL.replaceAll('INTEGER', 'BIGINT') },
];
