// The contract of an upstream's own batch API (OpenAI's Files + Batches, Anthropic's Message Batches) as the
// batch layer sees it: lines in, one upstream batch id out, its state polled, its results read line by line.
import type { AbortLink } from '../../core/abort-link.ts';
import type { Usage } from '../protocol/chat-types.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { Provider } from './provider.ts';

/** One request of an upstream batch: `customId` comes back on its result; `body` is the endpoint's request body. */
export interface UpstreamBatchLine {
  customId: string;
  body: Readonly<JsonObject>;
}

/** What the upstream documents as the most one batch may hold; the aggregator packs under both. */
export interface UpstreamBatchLimits {
  maxLines: number;
  /** Of the bytes the upstream counts: the JSONL file (OpenAI), the create request's body (Anthropic). */
  maxBytes: number;
}

export interface UpstreamBatchSubmission {
  lines: AsyncIterable<UpstreamBatchLine> | Iterable<UpstreamBatchLine>;
  /** OpenAI: the batch's `endpoint` (`/v1/chat/completions`, `/v1/embeddings`, …); Anthropic: ignored (Messages only). */
  endpoint?: string;
  /** Sent where the upstream keeps it (OpenAI's `metadata`), so a batch can be found again after a crash. */
  metadata?: Record<string, string>;
  /** OpenAI: called with the uploaded input file's id before the batch is created, to be stored first. */
  onInputUploaded?: (fileId: string) => Promise<void> | void;
  signal: AbortLink;
}

export interface UpstreamBatchCreated {
  id: string;
  /** OpenAI: the uploaded input file; Anthropic: none (the requests travel in the create call). */
  inputFileId?: string;
  lines: number;
  bytes: number;
}

/**
 * Herd's reading of the upstream's status: `running` (validating, in progress, finalizing), `cancelling`,
 * `ended` (results readable: completed, expired or cancelled), `failed` (the whole batch was refused; no results).
 */
export type UpstreamBatchPhase = 'running' | 'cancelling' | 'ended' | 'failed';

export interface UpstreamBatchCounts {
  total: number;
  processing: number;
  succeeded: number;
  errored: number;
  /** Known once the batch ended (OpenAI reports cancelled and expired requests only among `failed`). */
  canceled: number;
  expired: number;
}

export interface UpstreamBatchStatus {
  id: string;
  phase: UpstreamBatchPhase;
  /** The upstream's own status word (`finalizing`, `canceling`, …), for logs. */
  upstreamStatus: string;
  counts: UpstreamBatchCounts;
  /** Unix milliseconds at which the upstream gives up on the batch, when it says. */
  expiresAt?: number;
  /** `failed`: why, as the upstream said (OpenAI's `errors.data[].message`, with line numbers). */
  errors?: string[];
  metadata?: Record<string, string>;
}

/**
 * One request's outcome. `succeeded`: `body` is the endpoint's answer (a chat.completion, an Anthropic message, …)
 * and `usage` its tokens. `errored`: the upstream's status and error (its body too, where it sent one).
 * `canceled` / `expired`: never run, never billed.
 */
export type UpstreamBatchResult =
  | { customId: string; outcome: 'succeeded'; statusCode: number; body: JsonObject; usage: Usage | undefined }
  | { customId: string; outcome: 'errored'; statusCode: number; body?: JsonObject; error: UpstreamBatchLineError }
  | { customId: string; outcome: 'canceled' | 'expired'; error: UpstreamBatchLineError };

export interface UpstreamBatchLineError {
  /** The upstream's code or type (`invalid_request_error`, `batch_expired`, …). */
  type: string;
  message: string;
}

export interface UpstreamBatchClient {
  readonly limits: UpstreamBatchLimits;
  /** Uploads and creates; refuses (PAYLOAD_TOO_LARGE, before the batch exists) lines beyond `limits`. */
  submit(submission: UpstreamBatchSubmission): Promise<UpstreamBatchCreated>;
  poll(id: string, signal: AbortLink): Promise<UpstreamBatchStatus>;
  /** Streams the results of an `ended` batch, parsed line by line (never the whole file in memory). */
  results(id: string, signal: AbortLink): AsyncIterable<UpstreamBatchResult>;
  /** Asks the upstream to stop; the batch goes through `cancelling` and ends with partial results. */
  cancel(id: string, signal: AbortLink): Promise<UpstreamBatchStatus>;
  /**
   * The upstream batch carrying `metadata[key] === value` among the most recent ones (after a crash between
   * create and storing its id); undefined when none does, or the upstream keeps no metadata (Anthropic).
   */
  findByMetadata(key: string, value: string, signal: AbortLink): Promise<string | undefined>;
  close(): Promise<void>;
}

/** A provider whose upstream has a batch API; whether Herd uses it is the configuration's choice. */
export interface BatchCapableProvider extends Provider {
  readonly batches: UpstreamBatchClient;
}

export function isBatchCapable(provider: Provider): provider is BatchCapableProvider {
  return 'batches' in provider && typeof (provider as { batches?: unknown }).batches === 'object';
}
