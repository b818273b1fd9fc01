// Creating an upstream batch: its row is written (state creating) before the upstream hears of it, Herd's own id goes
// up as metadata so a crash between create and storing the upstream's id is recovered by lookup, not by sending twice.
import type { AbortLink } from '../../core/abort-link.ts';
import { type HerdError, toHerdError } from '../../core/errors.ts';
import { UpstreamError } from '../protocol/upstream-error.ts';
import type { BatchDialect, LineResult, UpstreamBatchRow } from './batch-store.ts';
import { dialectErrorBody, UPSTREAM_MAX_ATTEMPTS, type UpstreamContext } from './upstream-context.ts';
import { hasSendable, upstreamRequests } from './upstream-line-source.ts';

/** The metadata key carrying Herd's upstream batch id (`ubatch_…`). */
export const UPSTREAM_METADATA_KEY = 'herd_upstream_batch_id';

/**
 * How long a replica holds an upstream batch it is creating: at least as long as an upload may take (the clients'
 * 10-minute upload timeout), so another replica never finds it `creating`, looks it up too early and sends it twice.
 */
const CREATE_LEASE_MS = 15 * 60_000;

const RETRYABLE = new Set(['UPSTREAM_RATE_LIMITED', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'UNAVAILABLE']);

/** A refusal worth trying again later (429, 5xx, a timeout, the store away) rather than failing the batch whole. */
export function isRetryable(error: HerdError): boolean {
  return RETRYABLE.has(error.code) || (error instanceof UpstreamError && error.transient);
}

export const dialectOfEndpoint = (endpoint: string): BatchDialect => (endpoint === '/v1/messages' ? 'anthropic' : 'openai');

/** Uploads and creates the upstream batch for `row` (leased by this replica); true when it is `running` (or had nothing to send). */
export async function submitUpstreamBatch(ctx: UpstreamContext, row: UpstreamBatchRow, now: number, signal: AbortLink): Promise<boolean> {
  const { store, owner } = ctx.deps;
  const client = ctx.client(row.provider);
  const deployment = ctx.deployment(row.deployment);
  if (client === undefined || deployment === undefined) {
    await failUpstreamBatch(ctx, row, `deployment ${row.deployment} has no batch API any more`);
    return false;
  }
  const leaseUntil = now + Math.max(ctx.deps.config.worker.lease_ms, CREATE_LEASE_MS);
  if (!(await store.updateUpstreamBatch(row.id, { leaseUntil }, owner))) return false;
  if (!(await hasSendable(ctx, row, now))) {
    // Every line was cancelled (or reached its deadline) before it went up: nothing to create.
    await store.updateUpstreamBatch(row.id, { state: 'done', leaseOwner: undefined, leaseUntil: undefined }, owner);
    return true;
  }
  try {
    const created = await client.submit({
      lines: upstreamRequests(ctx, row, deployment, now),
      endpoint: row.endpoint,
      metadata: { [UPSTREAM_METADATA_KEY]: row.id },
      onInputUploaded: async (fileId) => {
        await store.updateUpstreamBatch(row.id, { inputFileRef: fileId });
      },
      signal,
    });
    ctx.deps.log(`upstream batch ${row.id}: ${created.lines} requests sent to ${row.provider} as ${created.id}`);
    await markRunning(ctx, row, created.id, now);
    return true;
  } catch (err) {
    await onCreateFailure(ctx, row, toHerdError(err), now, signal);
    return false;
  }
}

/**
 * A `creating` row claimed again (a create refused for now, or a replica that died mid-create): looked up by its
 * metadata first, so a batch the upstream already has is adopted rather than sent twice.
 */
export async function resumeCreating(ctx: UpstreamContext, row: UpstreamBatchRow, now: number, signal: AbortLink): Promise<void> {
  const client = ctx.client(row.provider);
  if (client === undefined) {
    await failUpstreamBatch(ctx, row, `provider ${row.provider} has no batch API any more`);
    return;
  }
  let found: string | undefined;
  try {
    found = row.providerBatchId ?? (await client.findByMetadata(UPSTREAM_METADATA_KEY, row.id, signal));
  } catch (err) {
    await backOff(ctx, row, toHerdError(err), now, 'looking it up');
    return;
  }
  if (found === undefined) {
    await submitUpstreamBatch(ctx, row, now, signal);
    return;
  }
  ctx.deps.log(`upstream batch ${row.id}: found at ${row.provider} as ${found} (created before a restart)`);
  await markRunning(ctx, row, found, now);
}

/** The upstream has it: stored unguarded (the create happened, whoever holds the lease now), first poll after poll_min_ms. */
async function markRunning(ctx: UpstreamContext, row: UpstreamBatchRow, providerBatchId: string, now: number): Promise<void> {
  await ctx.deps.store.updateUpstreamBatch(row.id, {
    providerBatchId,
    state: 'running',
    submittedAt: now,
    nextPollAt: now + ctx.deps.config.upstream.poll_min_ms,
    pollAttempts: 0,
    leaseOwner: undefined,
    leaseUntil: undefined,
  });
}

async function onCreateFailure(ctx: UpstreamContext, row: UpstreamBatchRow, error: HerdError, now: number, signal: AbortLink): Promise<void> {
  if (signal.aborted || isRetryable(error)) await backOff(ctx, row, error, now, 'creating it');
  else await failUpstreamBatch(ctx, row, error.message);
}

/** Tried again after the upstream's Retry-After, or the poll backoff if longer; the lease is let go. */
export async function backOff(ctx: UpstreamContext, row: UpstreamBatchRow, error: HerdError, now: number, doing: string): Promise<void> {
  const wait = Math.max((error.retryAfterSeconds ?? 0) * 1000, ctx.pollDelay(row.pollAttempts));
  ctx.deps.log(`upstream batch ${row.id} (${row.provider}): ${doing} failed (${error.message}); trying again in ${Math.round(wait / 1000)} s`);
  await ctx.deps.store.updateUpstreamBatch(row.id, { nextPollAt: now + wait, pollAttempts: row.pollAttempts + 1, leaseOwner: undefined, leaseUntil: undefined }, ctx.deps.owner);
}

/**
 * The upstream refused the batch whole: its lines go back to be planned again (a later upstream batch, or realtime if the
 * route changed), and after UPSTREAM_MAX_ATTEMPTS plans they end errored with the upstream's reason.
 */
export async function failUpstreamBatch(ctx: UpstreamContext, row: UpstreamBatchRow, reason: string): Promise<void> {
  const dialect = dialectOfEndpoint(row.endpoint);
  const message = `the upstream batch API of ${row.provider} refused the batch: ${reason}`;
  const failed: LineResult = { outcome: 'errored', statusCode: 502, body: dialectErrorBody(dialect, dialect === 'anthropic' ? 'api_error' : 'server_error', message) };
  await ctx.deps.store.updateUpstreamBatch(row.id, { state: 'failed', leaseOwner: undefined, leaseUntil: undefined });
  const moved = await ctx.deps.store.requeueUpstreamLines(row.id, UPSTREAM_MAX_ATTEMPTS, failed);
  ctx.deps.log(`upstream batch ${row.id} failed (${reason}): ${moved.requeued} lines planned again, ${moved.errored} errored`);
}
