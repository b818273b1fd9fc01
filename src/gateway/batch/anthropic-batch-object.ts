// A client batch in Anthropic's Message Batch shape (/v1/messages/batches), its list, and one line of its results
// JSONL; OpenAI's statuses (batch-store.ts) fold into Anthropic's three processing statuses.
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { BatchView } from './batch-service.ts';
import type { BatchLine, BatchStatus } from './batch-store.ts';

export type ProcessingStatus = 'in_progress' | 'canceling' | 'ended';

export interface AnthropicMessageBatch {
  id: string;
  type: 'message_batch';
  processing_status: ProcessingStatus;
  request_counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
  /** RFC 3339, as every timestamp here (null while unset). */
  ended_at: string | null;
  created_at: string;
  expires_at: string;
  cancel_initiated_at: string | null;
  archived_at: null;
  /** Null until the batch has ended. */
  results_url: string | null;
}

export interface AnthropicBatchList {
  data: AnthropicMessageBatch[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export type AnthropicBatchResult = { type: 'succeeded'; message: JsonObject } | { type: 'errored'; error: JsonObject } | { type: 'canceled' } | { type: 'expired' };

export interface AnthropicResultLine {
  custom_id: string;
  result: AnthropicBatchResult;
}

const PROCESSING_STATUS: Readonly<Record<BatchStatus, ProcessingStatus>> = {
  validating: 'in_progress',
  in_progress: 'in_progress',
  finalizing: 'in_progress',
  cancelling: 'canceling',
  completed: 'ended',
  failed: 'ended',
  expired: 'ended',
  cancelled: 'ended',
};

const rfc3339 = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** `baseUrl`: where the client reached Herd (scheme, host and any proxy prefix), for results_url. */
export function toAnthropicBatch(view: BatchView, baseUrl: string): AnthropicMessageBatch {
  const { batch, counts } = view;
  const status = PROCESSING_STATUS[batch.status];
  const ended = status === 'ended';
  return {
    id: batch.id,
    type: 'message_batch',
    processing_status: status,
    request_counts: {
      processing: (counts.pending ?? 0) + (counts.queued_upstream ?? 0) + (counts.running ?? 0),
      succeeded: counts.succeeded ?? 0,
      errored: counts.errored ?? 0,
      canceled: counts.canceled ?? 0,
      expired: counts.expired ?? 0,
    },
    ended_at: ended ? rfc3339(batch.completedAt ?? batch.cancelledAt ?? batch.expiredAt ?? batch.failedAt) : null,
    created_at: new Date(batch.createdAt).toISOString(),
    expires_at: new Date(batch.expiresAt).toISOString(),
    cancel_initiated_at: rfc3339(batch.cancellingAt),
    archived_at: null,
    results_url: ended ? `${baseUrl}/v1/messages/batches/${encodeURIComponent(batch.id)}/results` : null,
  };
}

export function toAnthropicBatchList(views: readonly BatchView[], hasMore: boolean, baseUrl: string): AnthropicBatchList {
  const data = views.map((view) => toAnthropicBatch(view, baseUrl));
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/** One line of the results JSONL; a line with no stored result (it should not happen once a batch ended) is an api_error. */
export function toAnthropicResultLine(line: BatchLine): AnthropicResultLine {
  return { custom_id: line.customId, result: resultOf(line) };
}

function resultOf(line: BatchLine): AnthropicBatchResult {
  const result = line.result;
  if (result === undefined) {
    return { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: `request ${line.customId} has no result` } } };
  }
  switch (result.outcome) {
    case 'succeeded':
      return { type: 'succeeded', message: result.body };
    case 'errored':
      return { type: 'errored', error: result.body };
    case 'canceled':
      return { type: 'canceled' };
    case 'expired':
      return { type: 'expired' };
  }
}
