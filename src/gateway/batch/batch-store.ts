// The batch half's durable state (docs/decisions/batch-design.md): uploaded files, client batches and their
// lines, in the ledger's database. One interface; sql-batch-store.ts implements it on SQLite and PostgreSQL.
import type { JsonObject } from '../protocol/check-json-value.ts';

/** What a stored file is for: a client's input, or an output/error file Herd wrote for a batch. */
export type BatchFilePurpose = 'batch' | 'batch_output';

export interface BatchFile {
  /** `file-…`, as OpenAI's ids look. */
  id: string;
  /** The gateway key that uploaded it (or the batch's owner, for an output file): only it and the master key see it. */
  keyId: string;
  purpose: BatchFilePurpose;
  filename: string;
  bytes: number;
  /** Non-empty lines: the requests an input file holds. */
  lines: number;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds after which the file is gone for clients; undefined: never. */
  expiresAt: number | undefined;
  deletedAt: number | undefined;
  /** Where the bytes are in the file store. */
  storageRef: string;
}

export type BatchDialect = 'openai' | 'anthropic';

/** OpenAI's batch statuses; Anthropic's processing_status is derived from them. */
export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface Batch {
  /** `batch_…` (OpenAI) or `msgbatch_…` (Anthropic). */
  id: string;
  dialect: BatchDialect;
  keyId: string;
  teamId: string | undefined;
  /** `/v1/chat/completions`, `/v1/embeddings`, `/v1/responses`, `/v1/completions`, `/v1/messages`. */
  endpoint: string;
  inputFileId: string;
  status: BatchStatus;
  completionWindowMs: number;
  createdAt: number;
  expiresAt: number;
  inProgressAt: number | undefined;
  finalizingAt: number | undefined;
  completedAt: number | undefined;
  cancellingAt: number | undefined;
  cancelledAt: number | undefined;
  failedAt: number | undefined;
  expiredAt: number | undefined;
  metadata: Readonly<Record<string, string>> | undefined;
  total: number;
  completed: number;
  failed: number;
  outputFileId: string | undefined;
  errorFileId: string | undefined;
  /** The budget reservation made at submission, in the settlement currency's micro-units. */
  reservedMicros: number;
  currency: string;
  /** OpenAI's `errors` object (validation failures with line numbers), as JSON. */
  errors: unknown;
}

export type BatchLineState = 'pending' | 'queued_upstream' | 'running' | 'succeeded' | 'errored' | 'canceled' | 'expired';

export const TERMINAL_LINE_STATES: readonly BatchLineState[] = ['succeeded', 'errored', 'canceled', 'expired'];

export interface BatchLine {
  batchId: string;
  /** 1-based line number in the input file. */
  lineNo: number;
  customId: string;
  /** The line's ledger row id (uuidv7): billing a line twice is impossible because the ledger ignores a known id. */
  requestId: string;
  /** The request's bytes in the input file: the body is never copied. */
  bodyOffset: number;
  bodyLength: number;
  model: string | undefined;
  deployment: string | undefined;
  state: BatchLineState;
  upstreamBatchId: string | undefined;
  leaseOwner: string | undefined;
  leaseUntil: number | undefined;
  attempts: number;
  /** Where the line's answer is (a result file's ref and range), once it has one. */
  resultRef: string | undefined;
  statusCode: number | undefined;
  /** Epoch ms the line was queued for an upstream batch (the aggregator's age threshold). */
  queuedAt: number | undefined;
  /** The line's outcome once terminal (store migration 2: batch_lines.result_json). */
  result: LineResult | undefined;
}

/**
 * A terminal line's outcome, dialect-shaped so the output needs no second conversion: `body` is what the
 * realtime endpoint would have answered (its response, or its dialect's error body) with `statusCode`.
 * `canceled` / `expired`: never run, never billed. OpenAI's output line and Anthropic's result are built from it.
 */
export type LineResult =
  | { outcome: 'succeeded'; statusCode: number; body: JsonObject }
  | { outcome: 'errored'; statusCode: number; body: JsonObject }
  | { outcome: 'canceled' | 'expired' };

export type ListOrder = 'asc' | 'desc';

export interface PageQuery {
  /** Only this key's rows; undefined: everyone's (the master key). */
  keyId: string | undefined;
  /** The id of the last row of the previous page. */
  after: string | undefined;
  limit: number;
  order: ListOrder;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** Fields of a batch that move after it is created. */
export type BatchChanges = Partial<Omit<Batch, 'id' | 'dialect' | 'keyId' | 'teamId' | 'endpoint' | 'inputFileId' | 'createdAt'>>;

/** Fields of a line that move while it runs. */
export type LineChanges = Partial<
  Pick<BatchLine, 'model' | 'deployment' | 'state' | 'upstreamBatchId' | 'leaseOwner' | 'leaseUntil' | 'attempts' | 'resultRef' | 'statusCode' | 'queuedAt' | 'result'>
>;

/**
 * An upstream batch (OpenAI Batch, Anthropic Message Batch) holding lines of any number of client batches for
 * one deployment. `creating`: the row and its lines are written, the upstream call may or may not have happened
 * (recovery looks it up by metadata `herd_upstream_batch_id` = id); `running`: polled until it ends; `done`:
 * its results are split back onto the lines; `failed`: the upstream refused it whole (its lines went back to pending
 * or errored, per the aggregator's rule).
 */
export type UpstreamBatchState = 'creating' | 'running' | 'done' | 'failed';

export interface UpstreamBatchRow {
  /** `ubatch_…`: Herd's own id, sent upstream as metadata. */
  id: string;
  /** The deployment's key (`provider/upstream_model`). */
  deployment: string;
  /** The provider's name in herd.yaml (whose `.batches` client carries it). */
  provider: string;
  /** The upstream endpoint (`/v1/chat/completions`, `/v1/embeddings`, `/v1/messages`). */
  endpoint: string;
  /** The upstream's batch id, once create answered. */
  providerBatchId: string | undefined;
  state: UpstreamBatchState;
  lines: number;
  createdAt: number;
  submittedAt: number | undefined;
  nextPollAt: number | undefined;
  /** Polls that found it still running (the backoff's exponent). */
  pollAttempts: number;
  leaseOwner: string | undefined;
  leaseUntil: number | undefined;
  /** OpenAI: the uploaded input file's id (stored before create is called). */
  inputFileRef: string | undefined;
  outputFileRef: string | undefined;
}

export type UpstreamBatchChanges = Partial<Omit<UpstreamBatchRow, 'id' | 'deployment' | 'provider' | 'endpoint' | 'createdAt'>>;

/** Lines queued for one deployment and not in an upstream batch yet: what the aggregator decides on. */
export interface QueuedDeployment {
  deployment: string;
  lines: number;
  /** Epoch ms the oldest of them was queued. */
  oldestQueuedAt: number;
}

export interface ClaimUpstreamBatches {
  owner: string;
  states: readonly UpstreamBatchState[];
  now: number;
  leaseMs: number;
  limit: number;
}

export interface ClaimLines {
  /** This replica's worker id. */
  owner: string;
  /** Only lines in these states (whose lease, if any, has expired). */
  states: readonly BatchLineState[];
  now: number;
  leaseMs: number;
  limit: number;
  /** Only this batch's lines. */
  batchId?: string;
}

export interface BatchStore {
  readonly kind: 'sqlite' | 'postgres';
  insertFile(file: BatchFile): Promise<void>;
  /** The file, deleted or not; undefined when the id is unknown. */
  getFile(id: string): Promise<BatchFile | undefined>;
  /** Files not deleted and not expired at `now`, newest first unless `order` says otherwise. */
  listFiles(query: PageQuery & { purpose: BatchFilePurpose | undefined; now: number }): Promise<Page<BatchFile>>;
  /** Marks the file deleted; false when it already was (or is unknown). */
  markFileDeleted(id: string, at: number): Promise<boolean>;

  insertBatch(batch: Batch): Promise<void>;
  getBatch(id: string): Promise<Batch | undefined>;
  listBatches(query: PageQuery & { dialect: BatchDialect }): Promise<Page<Batch>>;
  /** Removes a batch and its lines (Anthropic's DELETE of an ended batch); false when unknown. */
  deleteBatch(id: string): Promise<boolean>;
  /** Applies `changes`; with `fromStatus`, only while the batch is in one of them (false otherwise). */
  updateBatch(id: string, changes: BatchChanges, fromStatus?: readonly BatchStatus[]): Promise<boolean>;

  /** Adds lines (any number: written in chunks, in one transaction). */
  insertLines(lines: readonly BatchLine[]): Promise<void>;
  /** Lines of a batch in line order, from `fromLine` (1-based). */
  listLines(batchId: string, fromLine: number, limit: number): Promise<BatchLine[]>;
  /** Leases up to `limit` lines to `owner` until now + leaseMs; an expired lease is taken over. */
  claimLines(claim: ClaimLines): Promise<BatchLine[]>;
  /** Applies `changes` to one line; with `owner`, only while that owner holds its lease (false otherwise). */
  updateLine(batchId: string, lineNo: number, changes: LineChanges, owner?: string): Promise<boolean>;
  /** Lines per state, for request_counts and for knowing when a batch is done. */
  countLines(batchId: string): Promise<Partial<Record<BatchLineState, number>>>;
  /**
   * Moves every line of the batch in one of `from` to `to` with `result` (cancel: pending → canceled; expiry:
   * pending → expired), leases ignored; the number moved.
   */
  finishLines(batchId: string, from: readonly BatchLineState[], to: BatchLineState, result: LineResult, options?: { unsentOnly?: boolean }): Promise<number>;
  /**
   * A batch's lines queued for an upstream batch and not packed into one yet go back to `pending` (no deployment):
   * its completion window is near, so they run realtime or expire by the deadline policy. The number moved.
   */
  returnUnsentLines(batchId: string): Promise<number>;
  /** Batches in one of `statuses`, oldest first (the worker's finalizing and deadline passes). */
  listBatchesByStatus(statuses: readonly BatchStatus[], limit: number): Promise<Batch[]>;

  /** Per deployment: lines in `queued_upstream` with no upstream batch yet. */
  listQueuedDeployments(): Promise<QueuedDeployment[]>;
  /** The oldest `limit` such lines of one deployment, in queue order. */
  listQueuedLines(deployment: string, limit: number): Promise<BatchLine[]>;
  /**
   * In one transaction: inserts the upstream batch and points the given lines at it (only those still queued
   * with no upstream batch); returns how many it took (the row's `lines` is set to that).
   */
  insertUpstreamBatch(row: UpstreamBatchRow, lines: readonly { batchId: string; lineNo: number }[]): Promise<number>;
  getUpstreamBatch(id: string): Promise<UpstreamBatchRow | undefined>;
  /** Leases up to `limit` upstream batches in `states` whose next_poll_at has come (or is unset) and whose lease is free or expired. */
  claimUpstreamBatches(claim: ClaimUpstreamBatches): Promise<UpstreamBatchRow[]>;
  /** With `owner`, only while that owner holds the lease. */
  updateUpstreamBatch(id: string, changes: UpstreamBatchChanges, owner?: string): Promise<boolean>;
  /** Lines of an upstream batch, from `afterRequestId` (exclusive, request id order), at most `limit`. */
  listUpstreamLines(upstreamBatchId: string, afterRequestId: string | undefined, limit: number): Promise<BatchLine[]>;
  /** The line whose request id (the upstream custom_id) this is. */
  getLineByRequestId(requestId: string): Promise<BatchLine | undefined>;
  /**
   * An upstream batch failed whole: its lines still `queued_upstream` go back to `pending` (no deployment, no upstream
   * batch, no lease) to be planned again, except those already claimed `maxAttempts` times, which end `errored` with `failed`.
   */
  requeueUpstreamLines(upstreamBatchId: string, maxAttempts: number, failed: LineResult): Promise<{ requeued: number; errored: number }>;

  /** batch.files.store: database — a file's bytes as chunks (database-file-store.ts); see FileBlob. */
  blobs: FileBlobStore;

  close(): Promise<void>;
}

/** A stored file's bytes in the database: `chunkBytes` per chunk (the last shorter), readable once complete. */
export interface FileBlob {
  ref: string;
  bytes: number;
  chunkBytes: number;
  complete: boolean;
  createdAt: number;
}

export interface FileBlobStore {
  begin(ref: string, chunkBytes: number, createdAt: number): Promise<void>;
  putChunk(ref: string, seq: number, data: Buffer): Promise<void>;
  complete(ref: string, bytes: number): Promise<void>;
  get(ref: string): Promise<FileBlob | undefined>;
  /** Chunks `fromSeq` to `toSeq` (inclusive), in order. */
  chunks(ref: string, fromSeq: number, toSeq: number): Promise<Buffer[]>;
  delete(ref: string): Promise<void>;
  /** Refs of incomplete blobs begun before `before` (uploads a crash cut off). */
  listIncomplete(before: number): Promise<string[]>;
}
