// Upstream batches due for a look, under a lease: `creating` ones are looked up or created again, `running` ones polled
// with a doubling wait (poll_min_ms to poll_max_ms, Retry-After honoured) until they end and their results are read.
import type { AbortLink } from '../../core/abort-link.ts';
import { toHerdError } from '../../core/errors.ts';
import type { UpstreamBatchStatus } from '../providers/upstream-batch-client.ts';
import type { LineResult, UpstreamBatchRow } from './batch-store.ts';
import { dialectErrorBody, type UpstreamContext } from './upstream-context.ts';
import { readUpstreamResults } from './upstream-results.ts';
import { backOff, dialectOfEndpoint, failUpstreamBatch, resumeCreating } from './upstream-submit.ts';

/** Upstream batches claimed per tick. */
const CLAIM_LIMIT = 16;

export async function pollUpstreamBatches(ctx: UpstreamContext, now: number, signal: AbortLink): Promise<void> {
  const { store, owner, config, log } = ctx.deps;
  const rows = await store.claimUpstreamBatches({ owner, states: ['creating', 'running'], now, leaseMs: config.worker.lease_ms, limit: CLAIM_LIMIT });
  for (const row of rows) {
    if (signal.aborted) {
      await store.updateUpstreamBatch(row.id, { leaseOwner: undefined, leaseUntil: undefined }, owner);
      continue;
    }
    try {
      if (row.state === 'creating') await resumeCreating(ctx, row, now, signal);
      else await pollRunning(ctx, row, now, signal);
    } catch (err) {
      // E.g. a result that could not be stored or billed (the database away): the whole download is read again later.
      await backOff(ctx, row, toHerdError(err), now, row.state === 'creating' ? 'creating it' : 'reading its results').catch((e: unknown) =>
        log(`upstream batch ${row.id}: ${toHerdError(e).message}`),
      );
    }
  }
}

async function pollRunning(ctx: UpstreamContext, row: UpstreamBatchRow, now: number, signal: AbortLink): Promise<void> {
  const client = ctx.client(row.provider);
  if (client === undefined || row.providerBatchId === undefined) {
    await failUpstreamBatch(ctx, row, `provider ${row.provider} has no batch API any more`);
    return;
  }
  let status: UpstreamBatchStatus;
  try {
    status = await client.poll(row.providerBatchId, signal);
  } catch (err) {
    await backOff(ctx, row, toHerdError(err), now, 'polling it');
    return;
  }
  const { store, owner } = ctx.deps;
  switch (status.phase) {
    case 'running':
    case 'cancelling':
      await store.updateUpstreamBatch(
        row.id,
        { nextPollAt: now + ctx.pollDelay(row.pollAttempts), pollAttempts: row.pollAttempts + 1, leaseOwner: undefined, leaseUntil: undefined },
        owner,
      );
      return;
    case 'failed':
      await failUpstreamBatch(ctx, row, status.errors?.join('; ') || `status ${status.upstreamStatus}`);
      return;
    case 'ended': {
      const read = await readUpstreamResults(ctx, row, client, row.providerBatchId, signal);
      const missing = await finishUnanswered(ctx, row);
      ctx.deps.log(`upstream batch ${row.id} (${status.upstreamStatus}): ${read} results read${missing > 0 ? `, ${missing} lines had none` : ''}`);
      await store.updateUpstreamBatch(row.id, { state: 'done', leaseOwner: undefined, leaseUntil: undefined }, owner);
    }
  }
}

/** Lines the ended upstream batch gave no result for would wait forever: they end errored. */
async function finishUnanswered(ctx: UpstreamContext, row: UpstreamBatchRow): Promise<number> {
  const dialect = dialectOfEndpoint(row.endpoint);
  const message = `the upstream batch of ${row.provider} ended without a result for this request`;
  const failed: LineResult = { outcome: 'errored', statusCode: 502, body: dialectErrorBody(dialect, dialect === 'anthropic' ? 'api_error' : 'server_error', message) };
  // No attempt count is below 0: every line still queued in it is errored, none planned again.
  return (await ctx.deps.store.requeueUpstreamLines(row.id, 0, failed)).errored;
}
