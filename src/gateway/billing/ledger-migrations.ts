// The ledger schema as numbered migrations (scope 'ledger' in schema_migrations), each one SQL text
// that SQLite and PostgreSQL both run unchanged. Money: integer micros (BIGINT); times: epoch ms (UTC).
import type { SqliteMigration } from '../storage/apply-sqlite-migrations.ts';
import { CREATE_LEDGER_DAILY, DAILY_SUMS_V9, buildDailyUpsert } from './ledger-daily.ts';

export const LEDGER_SCOPE = 'ledger';

// Portable on purpose: BIGINT, TEXT, SMALLINT and DOUBLE PRECISION mean the same to both databases,
// and flags are 0/1 SMALLINTs (SQLite has no boolean). Dialect-specific SQL stays out of migrations.

/** A request row q of a ledger_daily row's group (migration 11's backfill). */
const SAME_GROUP = `q.started_at / 86400000 = ledger_daily.day AND q.key_id = ledger_daily.key_id AND COALESCE(q.team_id, '-') = ledger_daily.team_id
  AND COALESCE(q.model, '-') = ledger_daily.model AND COALESCE(q.provider, '-') = ledger_daily.provider AND q.currency = ledger_daily.currency`;

export const ledgerMigrations: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'requests, attempts, reservations, spend',
    sql: `
      CREATE TABLE ledger_requests (
        request_id           TEXT     PRIMARY KEY,
        key_id               TEXT     NOT NULL,
        key_name             TEXT,
        model_requested      TEXT     NOT NULL,    -- what the client sent (alias, tier, auto)
        model                TEXT,                 -- public model that answered; NULL when none did
        provider             TEXT,
        upstream_model       TEXT,
        prompt_tokens        BIGINT   NOT NULL,    -- includes cached reads and cache writes
        cached_prompt_tokens BIGINT   NOT NULL,
        cache_write_tokens   BIGINT   NOT NULL,
        completion_tokens    BIGINT   NOT NULL,    -- includes reasoning
        reasoning_tokens     BIGINT   NOT NULL,
        estimated            SMALLINT NOT NULL,    -- 1: counted by Herd's tokenizer, not reported upstream
        currency             TEXT     NOT NULL,    -- settlement currency of cost_micros and saved_micros
        cost_micros          BIGINT   NOT NULL,    -- charged, settlement currency
        usd_micros           BIGINT   NOT NULL,    -- cost_micros at the market rate (true USD)
        list_usd_micros      BIGINT   NOT NULL,    -- at the USD list price
        cache_hit            SMALLINT NOT NULL,
        saved_micros         BIGINT   NOT NULL,    -- cache hit: what the answer would have cost
        status               TEXT     NOT NULL,    -- ok | cancelled | failed | an error code
        http_status          SMALLINT,
        priority             TEXT,
        attempts             SMALLINT NOT NULL,
        latency_ms           DOUBLE PRECISION NOT NULL,
        ttft_ms              DOUBLE PRECISION,
        price_source         TEXT,
        price_effective_at   BIGINT,               -- NULL: herd.yaml's price, in force since always
        started_at           BIGINT   NOT NULL,
        finished_at          BIGINT   NOT NULL
      );
      CREATE INDEX ledger_requests_started ON ledger_requests (started_at);
      CREATE INDEX ledger_requests_key_started ON ledger_requests (key_id, started_at);

      CREATE TABLE ledger_attempts (
        request_id           TEXT     NOT NULL,
        attempt              SMALLINT NOT NULL,    -- 1, 2, … in the order tried
        model                TEXT     NOT NULL,
        provider             TEXT     NOT NULL,
        upstream_model       TEXT     NOT NULL,
        outcome              TEXT     NOT NULL,    -- ok | rate_limited | timeout | …
        http_status          SMALLINT,
        prompt_tokens        BIGINT   NOT NULL,
        cached_prompt_tokens BIGINT   NOT NULL,
        cache_write_tokens   BIGINT   NOT NULL,
        completion_tokens    BIGINT   NOT NULL,
        reasoning_tokens     BIGINT   NOT NULL,
        estimated            SMALLINT NOT NULL,
        currency             TEXT     NOT NULL,
        cost_micros          BIGINT   NOT NULL,
        usd_micros           BIGINT   NOT NULL,
        list_usd_micros      BIGINT   NOT NULL,
        latency_ms           DOUBLE PRECISION NOT NULL,
        ttft_ms              DOUBLE PRECISION,
        started_at           BIGINT   NOT NULL,
        PRIMARY KEY (request_id, attempt)
      );

      -- Budget holds: the source of truth for spend (request rows arrive later, in batches).
      CREATE TABLE ledger_reservations (
        request_id      TEXT   PRIMARY KEY,
        key_id          TEXT   NOT NULL,
        state           TEXT   NOT NULL,           -- open | settled | released
        estimate_micros BIGINT NOT NULL,
        actual_micros   BIGINT,                    -- set when settled
        day_period      TEXT   NOT NULL,           -- 'd:2026-05-01' (UTC) the charge counts in
        month_period    TEXT   NOT NULL,           -- 'm:2026-05'
        created_at      BIGINT NOT NULL,
        resolved_at     BIGINT
      );
      CREATE INDEX ledger_reservations_open ON ledger_reservations (state, created_at);

      -- Running totals per key and period (settled actuals + open estimates), kept in the same
      -- transaction as every reservation change, so a budget check reads two rows, not a month of requests.
      CREATE TABLE ledger_spend (
        key_id  TEXT   NOT NULL,
        period  TEXT   NOT NULL,                   -- 'd:YYYY-MM-DD' | 'm:YYYY-MM'
        micros  BIGINT NOT NULL,
        PRIMARY KEY (key_id, period)
      );
    `,
  },
  {
    version: 2,
    name: 'requests: origin',
    sql: `
      -- Who made a request besides its key: NULL for a client of /v1; 'triton:<model>/<version>' for an
      -- llm model of the serving side (a Triton request, or an ensemble step).
      ALTER TABLE ledger_requests ADD COLUMN origin TEXT;
    `,
  },
  {
    version: 3,
    name: 'requests: dialect',
    sql: `
      -- The wire format the client spoke (openai-chat, anthropic-messages, openai-responses, ...); rows
      -- written before it existed were all OpenAI chat completions.
      ALTER TABLE ledger_requests ADD COLUMN dialect TEXT NOT NULL DEFAULT 'openai-chat';
    `,
  },
  {
    version: 4,
    name: 'requests: a single attempt inline; ledger_attempts_all',
    sql: `
      -- A request with exactly one attempt carries it in its own row (attempt_outcome set), and
      -- ledger_attempts holds only the attempts of requests with two or more (or written before this
      -- version). Every reader of attempts reads ledger_attempts_all (docs/decisions/ledger-single-row.md).
      ALTER TABLE ledger_requests ADD COLUMN attempt_model TEXT;
      ALTER TABLE ledger_requests ADD COLUMN attempt_provider TEXT;
      ALTER TABLE ledger_requests ADD COLUMN attempt_upstream_model TEXT;
      ALTER TABLE ledger_requests ADD COLUMN attempt_outcome TEXT;         -- NULL: no attempt inline
      ALTER TABLE ledger_requests ADD COLUMN attempt_http_status SMALLINT;
      ALTER TABLE ledger_requests ADD COLUMN attempt_latency_ms DOUBLE PRECISION;
      ALTER TABLE ledger_requests ADD COLUMN attempt_ttft_ms DOUBLE PRECISION;
      -- 1: the attempt's tokens, cost and currency are the request's; 0: it consumed none (zeros, the
      -- request's currency). Its started_at is the request's; its number is 1.
      ALTER TABLE ledger_requests ADD COLUMN attempt_charged SMALLINT;

      CREATE VIEW ledger_attempts_all AS
        SELECT request_id, attempt, model, provider, upstream_model, outcome, http_status,
          prompt_tokens, cached_prompt_tokens, cache_write_tokens, completion_tokens, reasoning_tokens, estimated,
          currency, cost_micros, usd_micros, list_usd_micros, latency_ms, ttft_ms, started_at
        FROM ledger_attempts
        UNION ALL
        SELECT request_id, 1, attempt_model, attempt_provider, attempt_upstream_model, attempt_outcome, attempt_http_status,
          CASE WHEN attempt_charged = 1 THEN prompt_tokens ELSE 0 END,
          CASE WHEN attempt_charged = 1 THEN cached_prompt_tokens ELSE 0 END,
          CASE WHEN attempt_charged = 1 THEN cache_write_tokens ELSE 0 END,
          CASE WHEN attempt_charged = 1 THEN completion_tokens ELSE 0 END,
          CASE WHEN attempt_charged = 1 THEN reasoning_tokens ELSE 0 END,
          CASE WHEN attempt_charged = 1 THEN estimated ELSE 0 END,
          currency,
          CASE WHEN attempt_charged = 1 THEN cost_micros ELSE 0 END,
          CASE WHEN attempt_charged = 1 THEN usd_micros ELSE 0 END,
          CASE WHEN attempt_charged = 1 THEN list_usd_micros ELSE 0 END,
          attempt_latency_ms, attempt_ttft_ms, started_at
        FROM ledger_requests WHERE attempt_outcome IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: 'requests: route rule, 1-hour cache writes, reported reasoning',
    sql: `
      -- The herd.yaml rule that matched the model the client asked for (a name, an alias, a pattern such
      -- as 'claude-*', a tier); NULL when none did or for rows written before this version.
      ALTER TABLE ledger_requests ADD COLUMN route_rule TEXT;
      -- Of cache_write_tokens, those written for 1 hour (priced at the 1-hour write rate).
      ALTER TABLE ledger_requests ADD COLUMN cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0;
      -- The reasoning figure as the upstream reported it apart (OpenAI, Gemini); NULL where it reports none
      -- apart (Anthropic counts thinking inside output tokens) and reasoning_tokens is Herd's count.
      ALTER TABLE ledger_requests ADD COLUMN reported_reasoning_tokens BIGINT;
    `,
  },
  {
    version: 6,
    name: 'budget lines, settled spend, alert outbox; requests: team, tags, metadata',
    sql: `
      -- The budgets a reservation holds (JSON array of BudgetLine: subject, bucket, limit, thresholds, ...).
      -- NULL for reservations written before: they hold the key's day_period and month_period (UTC).
      ALTER TABLE ledger_reservations ADD COLUMN lines TEXT;
      -- ledger_spend now keys any budget subject (a key id, 'team:<id>', either with '#<model pattern>')
      -- in any bucket ('d:…', 'w:…', 'm:…', '@<zone>' unless UTC). settled_micros: settled charges only,
      -- the figure alert thresholds are crossed on (micros also holds open reservations).
      ALTER TABLE ledger_spend ADD COLUMN settled_micros BIGINT NOT NULL DEFAULT 0;
      UPDATE ledger_spend SET settled_micros = micros;

      -- One row per (subject, bucket, threshold), written in the transaction of the settlement that
      -- crossed it; a sender per process claims due rows under a lease and POSTs them to the webhook.
      CREATE TABLE ledger_alerts (
        id           TEXT     PRIMARY KEY,        -- stable: the webhook-id of every delivery
        subject      TEXT     NOT NULL,
        bucket       TEXT     NOT NULL,
        threshold    SMALLINT NOT NULL,           -- percent
        payload      TEXT     NOT NULL,           -- JSON: owner, period, limit, spend, resets_at, ...
        state        TEXT     NOT NULL,           -- pending | delivered | failed
        attempts     SMALLINT NOT NULL,
        next_at      BIGINT   NOT NULL,           -- not before (epoch ms)
        claimed_by   TEXT,                        -- host:pid of the sender holding the lease
        lease_until  BIGINT,
        last_error   TEXT,
        created_at   BIGINT   NOT NULL,
        delivered_at BIGINT,
        UNIQUE (subject, bucket, threshold)
      );
      CREATE INDEX ledger_alerts_due ON ledger_alerts (state, next_at);

      -- The key's team and its tags and metadata (JSON) at the time of the request.
      ALTER TABLE ledger_requests ADD COLUMN team_id TEXT;
      ALTER TABLE ledger_requests ADD COLUMN team_name TEXT;
      ALTER TABLE ledger_requests ADD COLUMN key_tags TEXT;
      ALTER TABLE ledger_requests ADD COLUMN key_metadata TEXT;
    `,
  },
  {
    version: 7,
    name: 'requests: indexes for the console list filters',
    sql: `
      -- The console's request list is newest first (started_at DESC) under each filter; an index per
      -- filtered column, ending in started_at, lets a page read only its own rows (key_id has one since v1).
      -- The model filter matches either column: two indexes, one branch each (request-list-query.ts).
      CREATE INDEX ledger_requests_model_started ON ledger_requests (model, started_at);
      CREATE INDEX ledger_requests_requested_started ON ledger_requests (model_requested, started_at);
      CREATE INDEX ledger_requests_dialect_started ON ledger_requests (dialect, started_at);
      -- Failures are few: a partial index holds them alone, so status 'error' (every status but ok) and one
      -- exact error status read it, and ok rows cost it no write. Status 'ok' reads ledger_requests_started.
      CREATE INDEX ledger_requests_failed_started ON ledger_requests (started_at) WHERE status <> 'ok';
    `,
  },
  {
    version: 8,
    name: 'requests: trace_id',
    sql: `
      -- The W3C trace id (32 hex) of the request's spans when tracing was on: a ledger row leads to its trace.
      ALTER TABLE ledger_requests ADD COLUMN trace_id TEXT;
    `,
  },
  {
    version: 9,
    name: 'ledger_daily: the daily rollup of requests, backfilled',
    // The console's 30-day reports read the rollup for whole UTC days instead of every row
    // (docs/decisions/console-spend-rollup.md); every batch adds its inserted rows in its own transaction.
    sql: `${CREATE_LEDGER_DAILY}
      ${buildDailyUpsert('ledger_requests', '1 = 1', DAILY_SUMS_V9)};`,
  },
  {
    version: 10,
    name: 'batches: request batch id and realtime list price, rollup sums, reservation parts and expiry',
    sql: `
      -- A line of a client batch (OpenAI /v1/batches, Anthropic message batches): the batch's id; NULL otherwise.
      ALTER TABLE ledger_requests ADD COLUMN batch_id TEXT;
      -- A batch line: the same tokens at the realtime list price in USD (list_usd_micros is at the batch
      -- price it was billed at); NULL for every other row. Stored, not derived: docs/decisions/batch-design.md.
      ALTER TABLE ledger_requests ADD COLUMN realtime_list_usd_micros BIGINT;
      CREATE INDEX ledger_requests_batch ON ledger_requests (batch_id) WHERE batch_id IS NOT NULL;

      -- A batch's one reservation is settled line by line (Ledger.settlePart): the sum settled so far
      -- (the hold left is estimate - part_micros, never below zero), and until when recover() leaves it
      -- open (a batch runs up to its completion window, longer than stale_reservation_minutes).
      ALTER TABLE ledger_reservations ADD COLUMN part_micros BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE ledger_reservations ADD COLUMN expires_at BIGINT;
      -- One row per line settled against a reservation: a replayed line finds its row and charges nothing.
      CREATE TABLE ledger_reservation_parts (
        line_request_id TEXT   PRIMARY KEY,
        reservation_id  TEXT   NOT NULL,
        cost_micros     BIGINT NOT NULL,
        held_micros     BIGINT NOT NULL,           -- of cost_micros, taken from the hold (the rest was charged beyond it)
        created_at      BIGINT NOT NULL
      );
      CREATE INDEX ledger_reservation_parts_reservation ON ledger_reservation_parts (reservation_id);
    `,
  },
  {
    version: 11,
    name: 'ledger_daily: batch lines and their saving, backfilled',
    // Backfilled from the batch rows alone (the partial index): on a ledger without any, nothing is read.
    sql: `
      ALTER TABLE ledger_daily ADD COLUMN batch_requests BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE ledger_daily ADD COLUMN batch_saved_usd_micros BIGINT NOT NULL DEFAULT 0;
      UPDATE ledger_daily SET
        batch_requests = (SELECT COUNT(*) FROM ledger_requests q WHERE q.batch_id IS NOT NULL AND ${SAME_GROUP}),
        batch_saved_usd_micros = (SELECT CAST(SUM(COALESCE(q.realtime_list_usd_micros - q.list_usd_micros, 0)) AS BIGINT)
          FROM ledger_requests q WHERE q.batch_id IS NOT NULL AND ${SAME_GROUP})
      WHERE EXISTS (SELECT 1 FROM ledger_requests q WHERE q.batch_id IS NOT NULL AND ${SAME_GROUP});
    `,
  },
];
