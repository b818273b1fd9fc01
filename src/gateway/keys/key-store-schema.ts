// The #28 key model's tables as SQL, for SQLite's migration 3 (rebuilding the released gateway_keys) and
// PostgreSQL's migration 1. Times are Unix ms; a key's or team's policy is one JSON text (key-rows.ts reads it).

/** Tables both engines spell alike (PostgreSQL's integers become BIGINT). */
export const AUDIT_AND_IDEMPOTENCY_SQL = `
  CREATE TABLE key_rotations (
    key_id        TEXT    NOT NULL,
    rotation_hash TEXT    NOT NULL,            -- SHA-256 of the client's rotation id
    sealed_secret TEXT,                        -- the minted secret, AES-GCM under the rotation id; NULL once the replay window passed
    grace_until   INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (key_id, rotation_hash)
  );
  CREATE TABLE key_last_used (key_id TEXT PRIMARY KEY, last_used_at INTEGER NOT NULL);
  CREATE TABLE audit_events (
    seq         INTEGER PRIMARY KEY,           -- 1, 2, 3 … with no gap: the chain's order
    at          INTEGER NOT NULL,
    actor_id    TEXT    NOT NULL,
    actor_name  TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    object      TEXT    NOT NULL,
    before_json TEXT,                          -- redacted: never a secret or a hash of one
    after_json  TEXT,
    request_id  TEXT,
    source_ip   TEXT,
    count       INTEGER NOT NULL,
    prev_hash   TEXT    NOT NULL,
    hash        TEXT    NOT NULL
  );
  CREATE INDEX audit_events_object ON audit_events (object, seq);
  CREATE INDEX audit_events_actor ON audit_events (actor_id, seq);
  CREATE TABLE admin_idempotency (
    actor_id    TEXT    NOT NULL,
    key_hash    TEXT    NOT NULL,              -- SHA-256 of the Idempotency-Key
    fingerprint TEXT    NOT NULL,
    state       TEXT    NOT NULL,              -- 'running' | 'done'
    status      INTEGER,
    body        TEXT,                          -- AES-GCM under the Idempotency-Key: answers may hold a new secret
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (actor_id, key_hash)
  );
`;

const KEY_TABLES = (keys: string) => `
  CREATE TABLE gateway_teams (
    id         TEXT    PRIMARY KEY,            -- 'tm_' + base62
    name       TEXT    NOT NULL UNIQUE,
    policy     TEXT    NOT NULL,               -- JSON AccessPolicy
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    revision   INTEGER NOT NULL DEFAULT 0      -- the store revision of the last change (incremental re-reads)
  );
  CREATE TABLE ${keys} (
    id         TEXT    PRIMARY KEY,            -- 'hk_' + base62 ('key_' + hex before #28)
    name       TEXT    NOT NULL,
    team_id    TEXT,
    prefix     TEXT    NOT NULL,               -- display prefix of the current secret
    role       TEXT    NOT NULL,
    policy     TEXT    NOT NULL,               -- JSON: AccessPolicy plus defaultPriority, allowedCidrs, tags, metadata, capMaxTokens
    expires_at INTEGER,
    blocked    INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    rotated_at INTEGER,
    revoked_at INTEGER,
    revision   INTEGER NOT NULL DEFAULT 0      -- the store revision of the last change; its secrets come with it
  );
  CREATE TABLE key_secrets (
    hash        TEXT    PRIMARY KEY,           -- SHA-256 of the secret, hex; never the secret
    key_id      TEXT    NOT NULL,
    prefix      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    valid_until INTEGER                        -- NULL: the current secret; else the end of its grace window
  );
`;

const KEY_INDEXES = `
  -- Names are unique per team (team-less keys among themselves) while not revoked: a revoked name may be reused.
  CREATE UNIQUE INDEX gateway_keys_name ON gateway_keys (COALESCE(team_id, ''), name) WHERE revoked_at IS NULL;
  CREATE INDEX gateway_keys_prefix ON gateway_keys (prefix);
  CREATE INDEX gateway_keys_list ON gateway_keys (created_at, id);
  CREATE INDEX gateway_keys_team ON gateway_keys (team_id);
  CREATE INDEX key_secrets_key ON key_secrets (key_id);
  CREATE INDEX gateway_keys_revision_seen ON gateway_keys (revision);
`;

/** Policy JSON for a released key: its model list and limits; its budgets become rules (UTC, as they were). */
const LEGACY_POLICY = `json_object(
  'allowedModels', CASE WHEN json_valid(allowed_models) THEN json(allowed_models) ELSE json('[]') END,
  'budgets', json(CASE
    WHEN budget_day_micros IS NOT NULL AND budget_month_micros IS NOT NULL THEN json_array(json_object('period', 'day', 'amountMicros', budget_day_micros), json_object('period', 'month', 'amountMicros', budget_month_micros))
    WHEN budget_day_micros IS NOT NULL THEN json_array(json_object('period', 'day', 'amountMicros', budget_day_micros))
    WHEN budget_month_micros IS NOT NULL THEN json_array(json_object('period', 'month', 'amountMicros', budget_month_micros))
    ELSE '[]' END),
  'timezone', 'UTC', 'rpm', rpm, 'tpm', tpm, 'maxConcurrency', max_concurrency, 'defaultPriority', default_priority)`;

/**
 * Rebuilds gateway_keys (its key_hash column moves to key_secrets, so legacy secrets keep working). Active keys
 * that shared a name keep it on the oldest; the later ones become `<name>-<id>`, so the new unique index holds.
 */
export const KEY_MODEL_SQLITE_SQL = `
  ${KEY_TABLES('gateway_keys_v3')}
  INSERT INTO gateway_keys_v3 (id, name, team_id, prefix, role, policy, expires_at, blocked, created_at, updated_at, rotated_at, revoked_at)
    SELECT k.id,
      CASE WHEN k.revoked_at IS NULL AND EXISTS (SELECT 1 FROM gateway_keys o WHERE o.revoked_at IS NULL AND o.name = k.name
        AND (o.created_at < k.created_at OR (o.created_at = k.created_at AND o.rowid < k.rowid))) THEN k.name || '-' || k.id ELSE k.name END,
      NULL, k.prefix, 'client', ${LEGACY_POLICY}, NULL, 0, k.created_at, k.created_at, NULL, k.revoked_at
    FROM gateway_keys k;
  INSERT INTO key_secrets (hash, key_id, prefix, created_at, valid_until) SELECT key_hash, id, prefix, created_at, NULL FROM gateway_keys;
  DROP TABLE gateway_keys;
  ALTER TABLE gateway_keys_v3 RENAME TO gateway_keys;
  ${KEY_INDEXES}
  -- A change made by hand with the sqlite3 shell moves the revision too (the store also bumps it itself).
  CREATE TRIGGER gateway_keys_insert AFTER INSERT ON gateway_keys BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
  CREATE TRIGGER gateway_keys_update AFTER UPDATE ON gateway_keys BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
  CREATE TRIGGER gateway_keys_delete AFTER DELETE ON gateway_keys BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
  CREATE TRIGGER key_secrets_change AFTER UPDATE ON key_secrets BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
  CREATE TRIGGER gateway_teams_change AFTER UPDATE ON gateway_teams BEGIN UPDATE gateway_keys_revision SET revision = revision + 1 WHERE id = 1; END;
`;

export const KEY_MODEL_POSTGRES_SQL = `
  ${KEY_TABLES('gateway_keys').replaceAll('INTEGER', 'BIGINT')}
  ${KEY_INDEXES}
  CREATE TABLE gateway_keys_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision BIGINT NOT NULL);
  INSERT INTO gateway_keys_revision (id, revision) VALUES (1, 0);
`;

/** Console sign-in sessions (issue 30): the SHA-256 of the cookie's value, never the value; PostgreSQL spells INTEGER as BIGINT. */
export const CONSOLE_SESSIONS_SQL = `
  CREATE TABLE console_sessions (
    id_hash     TEXT    PRIMARY KEY,           -- SHA-256 of the session id (the cookie's value), hex
    key_id      TEXT    NOT NULL,              -- the key it signed in with ('master' for the master key)
    role        TEXT    NOT NULL,              -- the key's role at sign-in (the key's current role decides)
    secret_hash TEXT    NOT NULL,              -- SHA-256 of the secret it signed in with, as key_secrets.hash: rotation ends it
    csrf_hash   TEXT    NOT NULL,              -- SHA-256 of the CSRF token
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    revoked_at  INTEGER                        -- signed out; NULL while live
  );
  CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
  CREATE INDEX console_sessions_key ON console_sessions (key_id);
`;
