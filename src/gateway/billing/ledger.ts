// The Ledger contract: budget reservations (reserve → settle | release, idempotent by request id),
// request/attempt rows group-committed before the answer's last byte, and usage reports; SQLite and
// PostgreSQL implement it on one schema.
import type { AttemptIntent } from './attempt-intent.ts';
import type { AlertOutbox } from './alert-outbox.ts';
import type { CurrencyCode, Micros } from './money.ts';

/**
 * One budget a request counts against, resolved at admission (plan-budgets.ts: planBudgets(key, atMs, model?)) for the key, its team, and
 * any per-model rule: whose spend, in which calendar bucket, capped at what. The ledger holds and settles
 * a reservation on every line at once, atomically, and records the alert thresholds a settlement crosses.
 */
export interface BudgetLine {
  /** Whose spend: a key's public id, `team:<id>`, either with `#<model pattern>` for a per-model rule. */
  subject: string;
  /** The calendar bucket, in the owner's zone: `d:2026-12-06`, `w:2026-W49`, `m:2026-12` (+ `@<zone>` unless UTC). */
  bucket: string;
  limitMicros: Micros;
  /** For messages and alerts. */
  owner: { kind: 'key' | 'team'; id: string; name: string };
  period: 'day' | 'week' | 'month';
  /** The model pattern of a per-model rule. */
  model?: string | undefined;
  timezone: string;
  /** Epoch ms when the bucket ends. */
  resetsAt: number;
  /** Percent thresholds that raise an alert when settled spend crosses them; empty: none. */
  thresholds: readonly number[];
}

export type ReservationState = 'open' | 'settled' | 'released';

export interface ReserveInput {
  keyId: string;
  requestId: string;
  /** What the request may cost at most (the dearest deployment, the prompt plus its maximum output): held on every line until settled. */
  estimateMicros: Micros;
  /** The budgets it counts against (planBudgets); all are checked, then all are charged, atomically. */
  lines: readonly BudgetLine[];
  /** Only for the BUDGET_EXCEEDED message. */
  currency?: CurrencyCode;
  /** Epoch ms; default now. */
  atMs?: number;
  /**
   * Epoch ms until which recover() leaves the reservation open however old it is: a client batch's, held
   * for its completion window and settled line by line (settlePart). Undefined: stale_reservation_minutes apply.
   */
  expiresAtMs?: number;
}

export interface Reservation {
  requestId: string;
  keyId: string;
  state: ReservationState;
  estimateMicros: Micros;
  /** Set once settled. */
  actualMicros: Micros | undefined;
  /** False when this requestId had been reserved before: nothing was charged again. */
  created: boolean;
  /** The key's spend in the reservation's day and month, this reservation included (0 where it has no such line). */
  spent: Spend;
  /** Each line's spend, this reservation included, in the order of ReserveInput.lines (a replay: the stored lines). */
  lineSpend: Micros[];
}

export interface Spend {
  dayMicros: Micros;
  monthMicros: Micros;
}

export interface SettleInput {
  costMicros: Micros;
  /** Needed only when no reservation exists (a request that skipped reserve): a settled one is created. */
  keyId?: string;
  /** With keyId: the lines a settlement without a reservation charges (absent: the key's UTC day and month). */
  lines?: readonly BudgetLine[];
  atMs?: number;
}

export interface SettleResult {
  state: ReservationState | 'none';
  /** The amount now charged for this request (the first settlement's, on a repeat call). */
  actualMicros: Micros;
  /** False when the call changed nothing (already settled, or no reservation and nothing to charge). */
  changed: boolean;
}

export interface SettlePartResult {
  /** The reservation's state (a part settled after a release or a settle still charges). */
  state: ReservationState;
  /** This line's charge (the first call's, on a replay). */
  costMicros: Micros;
  /** Of costMicros, what came out of the reservation's hold; the rest was charged beyond it (the estimate was short). */
  heldMicros: Micros;
  /** What the reservation still holds after this part. */
  remainingMicros: Micros;
  /** False when this line had been settled before: nothing was charged again. */
  changed: boolean;
}

export interface ReleaseResult {
  state: ReservationState | 'none';
  changed: boolean;
}

export interface RecoverOptions {
  /** Open reservations created longer ago than this are released. */
  olderThanMs: number;
  nowMs?: number;
}

export interface RecoverResult {
  released: number;
  releasedMicros: Micros;
  /** Open reservations whose request row was committed (the answer went out, the process died before settling): settled at the row's cost, any age. */
  settled: number;
  settledMicros: Micros;
}

export interface TokenColumns {
  promptTokens: number;
  cachedPromptTokens: number;
  cacheWriteTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** Herd counted these with its tokenizer (the upstream reported none). */
  estimated: boolean;
}

export interface CostColumns {
  currency: CurrencyCode;
  /** Settlement currency: what was charged. */
  costMicros: Micros;
  /** True USD (costMicros at the market rate). */
  usdMicros: Micros;
  /** At the list price in USD. */
  listUsdMicros: Micros;
}

/** One client request. Status: 'ok', 'cancelled' (client went away), 'failed' (stream broke), 'interrupted' (recovered from intents), or an error code. */
export interface RequestRecord extends TokenColumns, CostColumns {
  requestId: string;
  keyId: string;
  keyName: string | undefined;
  /** The key's team at the time; undefined: none. */
  teamId?: string | undefined;
  /** The request's trace id (tracing on), the spans' W3C trace id; undefined: not traced. */
  traceId?: string | undefined;
  /** A line of a client batch: the batch's id; undefined: a realtime request. */
  batchId?: string | undefined;
  /**
   * A batch line: the same tokens at the realtime list price in USD (listUsdMicros is at the batch price it
   * was billed at); undefined for every other row. The difference is the saving from batching.
   */
  realtimeListUsdMicros?: Micros | undefined;
  teamName?: string | undefined;
  /** The key's tags and metadata at the time (stored as JSON); undefined: none. */
  keyTags?: readonly string[] | undefined;
  keyMetadata?: Readonly<Record<string, string>> | undefined;
  /** Who called besides the key: undefined for /v1 clients, `triton:<model>/<version>` for an llm model. */
  origin?: string | undefined;
  /** The wire format the client spoke (an IngressDialect); undefined: openai-chat. */
  dialect?: string | undefined;
  /** The herd.yaml rule that matched the requested model (name, alias, pattern, tier); undefined: none did. */
  routeRule?: string | undefined;
  /** Of cacheWriteTokens, those written for 1 hour; undefined: 0. */
  cacheWrite1hTokens?: number | undefined;
  /** The reasoning figure the upstream reported apart; undefined where it reports none apart. */
  reportedReasoningTokens?: number | undefined;
  /** The `model` the client sent (an alias, a tier, `auto`). */
  requestedModel: string;
  /** What answered; undefined when nothing did. */
  model: string | undefined;
  provider: string | undefined;
  upstreamModel: string | undefined;
  status: string;
  httpStatus: number | undefined;
  cacheHit: boolean;
  /**
   * What a cache saved, in the settlement currency: a cache hit, what the answer would have cost; an upstream
   * answer, its prompt-cache reads at input less what they cost (no ledger column of its own: same meaning, no migration).
   */
  savedMicros: Micros;
  priority: string | undefined;
  attempts: number;
  latencyMs: number;
  /** Streams: until the first chunk reached Herd. */
  ttftMs: number | undefined;
  /** Which catalog entry priced it: its source and effective time (undefined: in force since always). */
  priceSource: string | undefined;
  priceEffectiveAt: number | undefined;
  /** Epoch ms. */
  startedAt: number;
  finishedAt: number;
}

/** One upstream attempt of a request (1-based `attempt`). */
export interface AttemptRow extends TokenColumns, CostColumns {
  requestId: string;
  attempt: number;
  model: string;
  provider: string;
  upstreamModel: string;
  /** 'ok', the failure kind (rate_limited, timeout, …), or 'interrupted' (recovered from an intent: the process died mid-call). */
  outcome: string;
  httpStatus: number | undefined;
  latencyMs: number;
  ttftMs: number | undefined;
  startedAt: number;
}

export const USAGE_GROUPS = ['day', 'model', 'provider', 'key', 'team'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageQuery {
  /** Epoch ms, inclusive. */
  sinceMs: number;
  /** Epoch ms, exclusive; default now. */
  untilMs?: number;
  by: UsageGroup;
}

export interface UsageRow {
  /** The day (YYYY-MM-DD, UTC), model, provider, key id or team id; '-' where none applies (nothing answered, no team). */
  group: string;
  /** by key: the key's name at the time; by team: the team's. */
  keyName: string | undefined;
  currency: CurrencyCode;
  requests: number;
  /** Requests with status other than ok. */
  failed: number;
  cacheHits: number;
  /** Requests whose tokens Herd estimated. */
  estimated: number;
  /** Upstream tokens (cache hits excluded: they consumed none). */
  promptTokens: number;
  cachedPromptTokens: number;
  cacheWriteTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** Of the rows' reasoning, the sum of the upstreams' own figures (Anthropic reports none apart: 0 there). */
  reportedReasoningTokens: number;
  costMicros: Micros;
  usdMicros: Micros;
  listUsdMicros: Micros;
  /** What Herd's own cache saved (cache hits). */
  savedMicros: Micros;
  /** Of cacheWriteTokens, those written for 1 hour. */
  cacheWrite1hTokens: number;
  /** What upstream prompt-cache reads saved: cached tokens at input less what they cost. */
  cacheReadSavedMicros: Micros;
  /** Rows that were lines of a client batch. */
  batchRequests: number;
  /** What batch prices saved against the realtime list price, in USD (the saving from the exchange rate is listUsdMicros − usdMicros). */
  batchSavedUsdMicros: Micros;
}

/** Filters of the console's request list (each optional; all given must hold). */
export interface RequestFilter {
  keyId?: string | undefined;
  /** Matches the model that answered or the one the client asked for. */
  model?: string | undefined;
  /** `ok`, `error` (every status but ok), or one exact status (`cancelled`, `RATE_LIMITED`, …). */
  status?: string | undefined;
  /** An IngressDialect (`openai-chat`, `anthropic-messages`, …); rows without one are openai-chat. */
  dialect?: string | undefined;
  /** Epoch ms, inclusive / exclusive, on started_at. */
  sinceMs?: number | undefined;
  untilMs?: number | undefined;
}

export interface RequestListQuery extends RequestFilter {
  /** Rows per page (1–500). */
  limit: number;
  /** The previous page's nextCursor (opaque): keyset pagination, newest first. */
  cursor?: string | undefined;
}

export interface RequestPage {
  rows: RequestRecord[];
  /** Undefined on the last page. */
  nextCursor: string | undefined;
}

export interface RequestDetail {
  request: RequestRecord;
  /** In attempt order. */
  attempts: AttemptRow[];
}

export interface UsagePageQuery extends UsageQuery {
  /** Groups per page (1–1000). */
  limit: number;
  /** The previous page's nextCursor (opaque). */
  cursor?: string | undefined;
}

/** One page of a usage report: `by: 'day'` oldest day first, every other grouping dearest first (costMicros, then group). */
export interface UsagePage {
  rows: UsageRow[];
  nextCursor: string | undefined;
  /** Groups in the whole range (same query: a window count). */
  totalGroups: number;
}

/** Spend in one range, one entry per settlement currency. */
export interface SpendTotal {
  currency: CurrencyCode;
  requests: number;
  costMicros: Micros;
  usdMicros: Micros;
  listUsdMicros: Micros;
}

export interface LedgerStats {
  /** Rows waiting for the next commit. */
  queued: number;
  written: number;
  flushes: number;
  failedFlushes: number;
  /** Rows given up on because the queue hit its bound while the database was failing. */
  dropped: number;
  /** Rows not yet in the database (queued plus the batch being written): spooled locally, if there is a spool. */
  behindRows: number;
  /** Age of the oldest of them, ms (0 when none): how far the database is behind. */
  behindMs: number;
  /** Set while the ledger has not reached its database since start-up (it serves from the spool): why, from the last attempt. */
  waitingForDatabase?: string | undefined;
}

export interface LedgerOptions {
  /**
   * A local folder for rows not yet in the database (see LedgerSpool): record() then resolves after one
   * append per event-loop turn and the database is written in batches every flushIntervalMs. Without
   * one, record() resolves on the database commit (one transaction per turn). One live process per folder.
   */
  spoolDir?: string;
  /** With a spool: rows reach the database at most this long after record(); without: the wait after a failed commit (default 1000 ms). */
  flushIntervalMs?: number;
  /** Rows per transaction at most (default 500). */
  maxBatchRows?: number;
  /** A background commit failed (the rows stay queued for the next one). */
  onError?: (error: unknown) => void;
  /** Wall clock, epoch ms (tests pin it). */
  now?: () => number;
}

export interface Ledger {
  readonly kind: 'sqlite' | 'postgres';
  /** Holds `estimateMicros` on every budget line, atomically with checking them all; BUDGET_EXCEEDED (naming the tightest line) when it would pass one. Idempotent by requestId. */
  reserve(input: ReserveInput): Promise<Reservation>;
  /** Replaces the reservation with the real cost on every line it holds, writing the alert outbox rows the settled spend crosses. Idempotent; a settlement after a release (recover) still charges. */
  settle(requestId: string, actual: SettleInput): Promise<SettleResult>;
  /**
   * One line of a batch's reservation: moves `costMicros` from the open hold to settled spend on every line
   * the reservation holds, atomically, writing the alerts it crosses. The hold never goes below zero: a line
   * costing more than the hold has left is charged in full anyway (settled spend beyond the estimate).
   * Idempotent by lineRequestId: a replayed line charges nothing. NOT_FOUND without such a reservation.
   */
  settlePart(reservationId: string, lineRequestId: string, costMicros: Micros, atMs?: number): Promise<SettlePartResult>;
  /** Refunds an open reservation (the request failed; a batch: what its settled parts left of the hold). Idempotent; no effect once settled. */
  release(requestId: string): Promise<ReleaseResult>;
  /** Settles open reservations whose request row exists; releases those without one older than RecoverOptions.olderThanMs. */
  recover(options: RecoverOptions): Promise<RecoverResult>;
  /** Settled spend plus open reservations of each line's subject in its bucket, in the order given (one query). */
  budgetSpend(lines: readonly BudgetLine[]): Promise<Micros[]>;
  /** The key's settled spend plus open reservations in the day and month of `atMs`. */
  spend(keyId: string, atMs?: number): Promise<Spend>;
  /**
   * Queues the rows; they commit in one transaction with every other request's rows of this turn of the
   * event loop. Resolves once they would survive the process being killed; rejects if that commit failed
   * (the rows stay queued and are retried).
   */
  record(request: RequestRecord, attempts: readonly AttemptRow[]): Promise<void>;
  /** Before an upstream call (a serving process, with a spool): a synchronous intent, so a kill still leaves a row. */
  intend?(intent: AttemptIntent): void;
  /** Writes whatever is queued now. */
  flush(): Promise<void>;
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /** One page of usage(): a single query (rows and the group count), never one per row. */
  usagePage(query: UsagePageQuery): Promise<UsagePage>;
  /** Totals of [sinceMs, untilMs) by currency, in one query. */
  spendTotals(sinceMs: number, untilMs: number): Promise<SpendTotal[]>;
  /** Committed request rows, newest first, filtered: one query per page. */
  listRequests(query: RequestListQuery): Promise<RequestPage>;
  /** One request with its attempts; undefined when no committed row has that id. */
  getRequest(requestId: string): Promise<RequestDetail | undefined>;
  stats(): LedgerStats;
  /** The budget-alert outbox in the ledger's database (settlements write it; an AlertSender drains it). */
  alertOutbox?(): AlertOutbox;
  /** Flushes, then closes the database. */
  close(): Promise<void>;
}
