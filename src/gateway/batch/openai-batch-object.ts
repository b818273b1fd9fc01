// A client batch in OpenAI's Batch object shape (GET/POST /v1/batches), and the list around it; the line counts
// become request_counts the way OpenAI counts them (cancelled and expired requests are failed ones).
import type { BatchStatus } from './batch-store.ts';
import type { BatchView } from './batch-service.ts';

export interface OpenAIBatchError {
  code: string | null;
  message: string;
  param: string | null;
  line: number | null;
}

export interface OpenAIBatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: OpenAIBatchError[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  /** Unix seconds, as every timestamp below (null while unset). */
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

export interface OpenAIBatchList {
  object: 'list';
  data: OpenAIBatchObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const seconds = (ms: number | undefined): number | null => (ms === undefined ? null : Math.floor(ms / 1000));

export function toOpenAIBatch(view: BatchView): OpenAIBatchObject {
  const { batch } = view;
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    errors: toErrors(batch.errors),
    input_file_id: batch.inputFileId,
    completion_window: completionWindowOf(batch.completionWindowMs),
    status: batch.status,
    output_file_id: batch.outputFileId ?? null,
    error_file_id: batch.errorFileId ?? null,
    created_at: Math.floor(batch.createdAt / 1000),
    in_progress_at: seconds(batch.inProgressAt),
    expires_at: seconds(batch.expiresAt),
    finalizing_at: seconds(batch.finalizingAt),
    completed_at: seconds(batch.completedAt),
    failed_at: seconds(batch.failedAt),
    expired_at: seconds(batch.expiredAt),
    cancelling_at: seconds(batch.cancellingAt),
    cancelled_at: seconds(batch.cancelledAt),
    request_counts: requestCountsOf(view),
    metadata: batch.metadata === undefined ? null : { ...batch.metadata },
  };
}

export function toOpenAIBatchList(views: readonly BatchView[], hasMore: boolean): OpenAIBatchList {
  const data = views.map(toOpenAIBatch);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}

/**
 * completed = succeeded; failed = errored + canceled + expired. A batch refused at validation keeps no lines:
 * its failed count is the batch's own (how many requests failed validation).
 */
function requestCountsOf(view: BatchView): OpenAIBatchObject['request_counts'] {
  const { counts, batch } = view;
  const completed = counts.succeeded ?? 0;
  const failed = (counts.errored ?? 0) + (counts.canceled ?? 0) + (counts.expired ?? 0);
  const counted = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
  if (counted === 0 && batch.status === 'failed') return { total: batch.total, completed: 0, failed: batch.failed };
  return { total: batch.total, completed, failed };
}

function completionWindowOf(ms: number): string {
  const hours = ms / 3_600_000;
  return Number.isInteger(hours) ? `${hours}h` : `${Math.round(ms / 1000)}s`;
}

/** The stored `errors` (submit-batch.ts writes OpenAI's list) read defensively: a row is data from disk. */
function toErrors(stored: unknown): OpenAIBatchObject['errors'] {
  if (stored === null || typeof stored !== 'object') return null;
  const data = (stored as { data?: unknown }).data;
  if (!Array.isArray(data)) return null;
  return { object: 'list', data: data.map(toError) };
}

function toError(item: unknown): OpenAIBatchError {
  const e = (item ?? {}) as Record<string, unknown>;
  return {
    code: typeof e.code === 'string' ? e.code : null,
    message: typeof e.message === 'string' ? e.message : String(e.message ?? ''),
    param: typeof e.param === 'string' ? e.param : null,
    line: typeof e.line === 'number' ? e.line : null,
  };
}
