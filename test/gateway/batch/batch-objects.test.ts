// The wire objects a client batch is answered as: OpenAI's Batch (request_counts as OpenAI counts, unix seconds,
// nulls) and Anthropic's Message Batch (processing_status folded from the statuses, RFC 3339, results_url once ended),
// and Anthropic's results lines from stored line results.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toAnthropicBatch, toAnthropicBatchList, toAnthropicResultLine } from '../../../src/gateway/batch/anthropic-batch-object.ts';
import type { BatchView } from '../../../src/gateway/batch/batch-service.ts';
import type { Batch, BatchLine, BatchStatus } from '../../../src/gateway/batch/batch-store.ts';
import { toOpenAIBatch, toOpenAIBatchList } from '../../../src/gateway/batch/openai-batch-object.ts';

const CREATED = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

function batch(changes: Partial<Batch> = {}): Batch {
  return {
    id: 'batch_1',
    dialect: 'openai',
    keyId: 'k1',
    teamId: undefined,
    endpoint: '/v1/chat/completions',
    inputFileId: 'file-1',
    status: 'in_progress',
    completionWindowMs: 86_400_000,
    createdAt: CREATED,
    expiresAt: CREATED + 86_400_000,
    inProgressAt: CREATED + 1500,
    finalizingAt: undefined,
    completedAt: undefined,
    cancellingAt: undefined,
    cancelledAt: undefined,
    failedAt: undefined,
    expiredAt: undefined,
    metadata: undefined,
    total: 10,
    completed: 0,
    failed: 0,
    outputFileId: undefined,
    errorFileId: undefined,
    reservedMicros: 0,
    currency: 'USD',
    errors: undefined,
    ...changes,
  };
}

const view = (b: Batch, counts: BatchView['counts'] = {}): BatchView => ({ batch: b, counts });

function line(changes: Partial<BatchLine>): BatchLine {
  return {
    batchId: 'msgbatch_1',
    lineNo: 1,
    customId: 'c1',
    requestId: 'r1',
    bodyOffset: 0,
    bodyLength: 1,
    model: 'm',
    deployment: undefined,
    state: 'succeeded',
    upstreamBatchId: undefined,
    leaseOwner: undefined,
    leaseUntil: undefined,
    attempts: 0,
    resultRef: undefined,
    statusCode: undefined,
    queuedAt: undefined,
    result: undefined,
    ...changes,
  };
}

describe('OpenAI Batch object', () => {
  it('has every documented field: unix seconds, nulls for what is unset, request_counts as OpenAI counts', () => {
    const counts = { pending: 2, running: 1, succeeded: 3, errored: 1, canceled: 2, expired: 1 };
    assert.deepEqual(toOpenAIBatch(view(batch({ metadata: { job: 'a' }, outputFileId: 'file-out' }), counts)), {
      id: 'batch_1',
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors: null,
      input_file_id: 'file-1',
      completion_window: '24h',
      status: 'in_progress',
      output_file_id: 'file-out',
      error_file_id: null,
      created_at: Math.floor(CREATED / 1000),
      in_progress_at: Math.floor((CREATED + 1500) / 1000),
      expires_at: Math.floor(CREATED / 1000) + 86_400,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 10, completed: 3, failed: 4 },
      metadata: { job: 'a' },
    });
  });

  it('gives a batch refused at validation its errors list and its own failed count (its lines are gone)', () => {
    const errors = {
      object: 'list',
      data: [
        { code: 'invalid_url', message: 'bad url', param: 'url', line: 2 },
        { code: 'empty_file', message: 'empty' },
      ],
    };
    const object = toOpenAIBatch(view(batch({ status: 'failed', failedAt: CREATED, total: 5, failed: 2, errors })));
    assert.deepEqual(object.errors, {
      object: 'list',
      data: [
        { code: 'invalid_url', message: 'bad url', param: 'url', line: 2 },
        { code: 'empty_file', message: 'empty', param: null, line: null },
      ],
    });
    assert.deepEqual(object.request_counts, { total: 5, completed: 0, failed: 2 });
  });

  it('lists with first_id, last_id and has_more', () => {
    assert.deepEqual(toOpenAIBatchList([], false), { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    const list = toOpenAIBatchList([view(batch({ id: 'batch_b' })), view(batch({ id: 'batch_a' }))], true);
    assert.deepEqual([list.first_id, list.last_id, list.has_more], ['batch_b', 'batch_a', true]);
  });
});

describe('Anthropic Message Batch object', () => {
  const base = 'https://herd.example/prefix';

  it('folds the statuses into in_progress, canceling and ended', () => {
    const expected: Record<BatchStatus, string> = {
      validating: 'in_progress',
      in_progress: 'in_progress',
      finalizing: 'in_progress',
      cancelling: 'canceling',
      completed: 'ended',
      failed: 'ended',
      expired: 'ended',
      cancelled: 'ended',
    };
    for (const [status, processing] of Object.entries(expected)) {
      assert.equal(toAnthropicBatch(view(batch({ status: status as BatchStatus })), base).processing_status, processing, status);
    }
  });

  it('counts processing lines together, gives RFC 3339 times and a results_url only once ended', () => {
    const running = toAnthropicBatch(view(batch({ id: 'msgbatch_1', dialect: 'anthropic' }), { pending: 1, queued_upstream: 2, running: 3, succeeded: 4, errored: 5 }), base);
    assert.deepEqual(running, {
      id: 'msgbatch_1',
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: 6, succeeded: 4, errored: 5, canceled: 0, expired: 0 },
      ended_at: null,
      created_at: '2026-01-02T03:04:05.678Z',
      expires_at: '2026-01-03T03:04:05.678Z',
      cancel_initiated_at: null,
      archived_at: null,
      results_url: null,
    });
    const ended = toAnthropicBatch(view(batch({ id: 'msgbatch_1', status: 'cancelled', cancellingAt: CREATED + 1000, cancelledAt: CREATED + 2000 })), base);
    assert.equal(ended.cancel_initiated_at, '2026-01-02T03:04:06.678Z');
    assert.equal(ended.ended_at, '2026-01-02T03:04:07.678Z');
    assert.equal(ended.results_url, 'https://herd.example/prefix/v1/messages/batches/msgbatch_1/results');
    const list = toAnthropicBatchList([view(batch({ id: 'msgbatch_2' })), view(batch({ id: 'msgbatch_1' }))], false, base);
    assert.deepEqual([list.first_id, list.last_id, list.has_more, list.data.length], ['msgbatch_2', 'msgbatch_1', false, 2]);
  });

  it('makes one results line per outcome; a line with no result is an api_error', () => {
    const message = { id: 'msg_1', type: 'message' };
    const error = { type: 'error', error: { type: 'invalid_request_error', message: 'no' } };
    assert.deepEqual(toAnthropicResultLine(line({ result: { outcome: 'succeeded', statusCode: 200, body: message } })), {
      custom_id: 'c1',
      result: { type: 'succeeded', message },
    });
    assert.deepEqual(toAnthropicResultLine(line({ result: { outcome: 'errored', statusCode: 400, body: error } })).result, { type: 'errored', error });
    assert.deepEqual(toAnthropicResultLine(line({ result: { outcome: 'canceled' } })).result, { type: 'canceled' });
    assert.deepEqual(toAnthropicResultLine(line({ result: { outcome: 'expired' } })).result, { type: 'expired' });
    assert.deepEqual(toAnthropicResultLine(line({ customId: 'lost' })).result, {
      type: 'errored',
      error: { type: 'error', error: { type: 'api_error', message: 'request lost has no result' } },
    });
  });
});
