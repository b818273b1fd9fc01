// The batch half's durable state (docs/decisions/batch-design.md): uploaded files, client batches and their
// lines, in the ledger's database. One interface; sql-batch-store.ts implements it on SQLite and PostgreSQL.

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
}

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
export type LineChanges = Partial<Pick<BatchLine, 'model' | 'deployment' | 'state' | 'upstreamBatchId' | 'leaseOwner' | 'leaseUntil' | 'attempts' | 'resultRef' | 'statusCode'>>;

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

  close(): Promise<void>;
}
