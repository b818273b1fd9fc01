// The batch store's schema (scope 'batch' in schema_migrations, beside the ledger's and the key store's scopes in
// the ledger's database): one list per engine, the PostgreSQL one the same tables with BIGINT times. Never edit a released one.
import type { SqliteMigration } from '../storage/apply-sqlite-migrations.ts';

export const BATCH_STORE_SCOPE = 'batch';

// Times are epoch milliseconds; JSON columns are TEXT. A line's body is a range of its input file, never a copy.
const BATCH_TABLES_SQL = `
  CREATE TABLE batch_files (
    id          TEXT    PRIMARY KEY,
    key_id      TEXT    NOT NULL,
    purpose     TEXT    NOT NULL CHECK (purpose IN ('batch', 'batch_output')),
    filename    TEXT    NOT NULL,
    bytes       INTEGER NOT NULL CHECK (bytes >= 0),
    lines       INTEGER NOT NULL CHECK (lines >= 0),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    deleted_at  INTEGER,
    storage_ref TEXT    NOT NULL
  );
  CREATE INDEX batch_files_listing ON batch_files (key_id, created_at, id);
  CREATE INDEX batch_files_created ON batch_files (created_at, id);

  CREATE TABLE batches (
    id                   TEXT    PRIMARY KEY,
    dialect              TEXT    NOT NULL CHECK (dialect IN ('openai', 'anthropic')),
    key_id               TEXT    NOT NULL,
    team_id              TEXT,
    endpoint             TEXT    NOT NULL,
    input_file_id        TEXT    NOT NULL,
    status               TEXT    NOT NULL,
    completion_window_ms INTEGER NOT NULL,
    created_at           INTEGER NOT NULL,
    expires_at           INTEGER NOT NULL,
    in_progress_at       INTEGER,
    finalizing_at        INTEGER,
    completed_at         INTEGER,
    cancelling_at        INTEGER,
    cancelled_at         INTEGER,
    failed_at            INTEGER,
    expired_at           INTEGER,
    metadata_json        TEXT,
    total                INTEGER NOT NULL DEFAULT 0,
    completed            INTEGER NOT NULL DEFAULT 0,
    failed               INTEGER NOT NULL DEFAULT 0,
    output_file_id       TEXT,
    error_file_id        TEXT,
    reserved_micros      INTEGER NOT NULL DEFAULT 0,
    currency             TEXT    NOT NULL,
    errors_json          TEXT
  );
  CREATE INDEX batches_listing ON batches (dialect, key_id, created_at, id);
  CREATE INDEX batches_status ON batches (status);

  CREATE TABLE batch_lines (
    batch_id          TEXT    NOT NULL,
    line_no           INTEGER NOT NULL,
    custom_id         TEXT    NOT NULL,
    request_id        TEXT    NOT NULL UNIQUE,
    body_offset       INTEGER NOT NULL,
    body_length       INTEGER NOT NULL,
    model             TEXT,
    deployment        TEXT,
    state             TEXT    NOT NULL CHECK (state IN ('pending', 'queued_upstream', 'running', 'succeeded', 'errored', 'canceled', 'expired')),
    upstream_batch_id TEXT,
    lease_owner       TEXT,
    lease_until       INTEGER,
    attempts          INTEGER NOT NULL DEFAULT 0,
    result_ref        TEXT,
    status_code       INTEGER,
    PRIMARY KEY (batch_id, line_no)
  );
  CREATE INDEX batch_lines_claim ON batch_lines (state, lease_until);
  CREATE INDEX batch_lines_upstream ON batch_lines (upstream_batch_id);

  CREATE TABLE upstream_batches (
    id                TEXT    PRIMARY KEY,
    deployment        TEXT    NOT NULL,
    provider_batch_id TEXT,
    state             TEXT    NOT NULL,
    lines             INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    submitted_at      INTEGER,
    next_poll_at      INTEGER,
    lease_owner       TEXT,
    lease_until       INTEGER,
    input_file_ref    TEXT,
    output_file_ref   TEXT
  );
  CREATE INDEX upstream_batches_poll ON upstream_batches (state, next_poll_at);
`;

// The worker's columns: a line's outcome and when it was queued for an upstream batch; an upstream batch's provider,
// endpoint and poll count. Lines queued and not yet packed are found by a partial index.
const WORKER_COLUMNS_SQL = `
  ALTER TABLE batch_lines ADD COLUMN result_json TEXT;
  ALTER TABLE batch_lines ADD COLUMN queued_at INTEGER;
  CREATE INDEX batch_lines_queued ON batch_lines (deployment, queued_at) WHERE state = 'queued_upstream' AND upstream_batch_id IS NULL;
  ALTER TABLE upstream_batches ADD COLUMN provider TEXT NOT NULL DEFAULT '';
  ALTER TABLE upstream_batches ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
  ALTER TABLE upstream_batches ADD COLUMN poll_attempts INTEGER NOT NULL DEFAULT 0;
`;

// Batch files' bytes in the database (batch.files.store: database), for replicas without a shared folder: a file is
// chunks under its ref, readable once its blob row says complete (a crash mid-upload leaves an incomplete blob to sweep).
const FILE_BLOBS_SQL = `
  CREATE TABLE batch_file_blobs (
    ref         TEXT    PRIMARY KEY,
    bytes       INTEGER NOT NULL DEFAULT 0,
    chunk_bytes INTEGER NOT NULL,
    complete    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
  );
  CREATE TABLE batch_file_chunks (
    ref  TEXT    NOT NULL,
    seq  INTEGER NOT NULL,
    data BLOB    NOT NULL,
    PRIMARY KEY (ref, seq)
  );
`;

// A batch's open lines in order, so a claim skips the lines already done (without it each claim walked them: 23 ms at
// 100k lines, once per claim); (batch_id, state) makes a batch's counts an index scan. A claim names its states as literals.
const LINE_INDEXES_SQL = `
  CREATE INDEX batch_lines_open ON batch_lines (batch_id, line_no) WHERE state IN ('pending', 'running');
  CREATE INDEX batch_lines_state ON batch_lines (batch_id, state);
`;

export const batchStoreMigrations: readonly SqliteMigration[] = [
  { version: 1, name: 'batch files, batches, lines, upstream batches', sql: BATCH_TABLES_SQL },
  { version: 2, name: 'line results, queue times, upstream batch providers', sql: WORKER_COLUMNS_SQL },
  { version: 3, name: 'batch file bytes in the database', sql: FILE_BLOBS_SQL },
  { version: 4, name: "lines: a batch's open lines, counts by state", sql: LINE_INDEXES_SQL },
];

export const postgresBatchStoreMigrations: readonly SqliteMigration[] = [
  { version: 1, name: 'batch files, batches, lines, upstream batches', sql: BATCH_TABLES_SQL.replaceAll('INTEGER', 'BIGINT') },
  { version: 2, name: 'line results, queue times, upstream batch providers', sql: WORKER_COLUMNS_SQL.replaceAll('INTEGER', 'BIGINT') },
  { version: 3, name: 'batch file bytes in the database', sql: FILE_BLOBS_SQL.replaceAll('INTEGER', 'BIGINT').replaceAll('BLOB', 'BYTEA') },
  { version: 4, name: "lines: a batch's open lines, counts by state", sql: LINE_INDEXES_SQL },
];
