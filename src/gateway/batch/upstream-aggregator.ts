// Packs lines queued for a deployment, from every client batch, into one upstream batch when the queue is full (lines
// or bytes) or its oldest line has waited batch.upstream.max_wait_ms, then submits it (docs/decisions/batch-design.md).
import type { AbortLink } from '../../core/abort-link.ts';
import { toHerdError } from '../../core/errors.ts';
import type { UpstreamBatchLimits } from '../providers/upstream-batch-client.ts';
import { type CatalogDeployment, resolveUpstreamModel } from '../router/gateway-catalog.ts';
import { randomIdText } from './batch-ids.ts';
import type { BatchLine, QueuedDeployment, UpstreamBatchRow } from './batch-store.ts';
import { dialectErrorBody, type UpstreamContext } from './upstream-context.ts';
import { submitUpstreamBatch } from './upstream-submit.ts';

/** Upstream batches one deployment may fill in one tick (a deep queue is drained over a few ticks). */
const MAX_ROUNDS = 8;
/** What a request gains on its way up besides its body (custom_id, method, url, the upstream model), counted generously. */
const LINE_OVERHEAD_BYTES = 128;

export const createUpstreamBatchId = () => `ubatch_${randomIdText()}`;

interface Pick {
  endpoint: string;
  lines: BatchLine[];
}

export async function aggregateQueues(ctx: UpstreamContext, now: number, signal: AbortLink): Promise<void> {
  for (const queue of await ctx.deps.store.listQueuedDeployments()) {
    if (signal.aborted) return;
    try {
      await packDeployment(ctx, queue, now, signal);
    } catch (err) {
      ctx.deps.log(`upstream batches for ${queue.deployment}: ${toHerdError(err).message}`);
    }
  }
}

async function packDeployment(ctx: UpstreamContext, queue: QueuedDeployment, now: number, signal: AbortLink): Promise<void> {
  const { store, owner, config } = ctx.deps;
  const deployment = ctx.deployment(queue.deployment);
  const client = deployment === undefined ? undefined : ctx.client(deployment.provider.name);
  if (deployment === undefined || client === undefined) {
    await sendBack(ctx, queue.deployment);
    return;
  }
  const limits = ctx.limits(client);
  for (let round = 0; round < MAX_ROUNDS && !signal.aborted; round++) {
    const picked = await pickDue(ctx, await store.listQueuedLines(queue.deployment, limits.maxLines), deployment, limits, now);
    if (picked === undefined) return;
    const row: UpstreamBatchRow = {
      id: createUpstreamBatchId(),
      deployment: deployment.key,
      provider: deployment.provider.name,
      endpoint: picked.endpoint,
      providerBatchId: undefined,
      state: 'creating',
      lines: 0,
      createdAt: now,
      submittedAt: undefined,
      nextPollAt: undefined,
      pollAttempts: 0,
      // Leased from the start, so another replica's poller leaves it alone while this one uploads it.
      leaseOwner: owner,
      leaseUntil: now + config.worker.lease_ms,
      inputFileRef: undefined,
      outputFileRef: undefined,
    };
    const taken = await store.insertUpstreamBatch(row, picked.lines);
    if (taken === 0) {
      await store.updateUpstreamBatch(row.id, { state: 'done', leaseOwner: undefined, leaseUntil: undefined });
      return;
    }
    // A create refused (429, an outage) is retried by the poller; more rows now would only be refused too.
    if (!(await submitUpstreamBatch(ctx, { ...row, lines: taken }, now, signal))) return;
  }
}

/**
 * The lines of the next upstream batch, in queue order, when it is due: one endpoint (the oldest line's), lines whose
 * batch is not at its deadline, packed under the byte limit. Undefined when nothing is due yet.
 */
async function pickDue(ctx: UpstreamContext, queued: BatchLine[], deployment: CatalogDeployment, limits: UpstreamBatchLimits, now: number): Promise<Pick | undefined> {
  const extra = LINE_OVERHEAD_BYTES + Buffer.byteLength(resolveUpstreamModel(deployment));
  let endpoint: string | undefined;
  const lines: BatchLine[] = [];
  let bytes = 0;
  let full = queued.length >= limits.maxLines;
  for (const line of queued) {
    const batch = await ctx.batch(line.batchId);
    if (batch === undefined || ctx.pastDeadline(batch, now)) continue;
    endpoint ??= batch.endpoint;
    if (batch.endpoint !== endpoint) continue;
    const size = line.bodyLength + extra;
    if (size > limits.maxBytes) {
      await refuseOversize(ctx, line, batch.dialect, limits.maxBytes);
      continue;
    }
    if (bytes + size > limits.maxBytes) {
      full = true;
      break;
    }
    bytes += size;
    lines.push(line);
  }
  const oldest = lines[0]?.queuedAt ?? now;
  if (endpoint === undefined || lines.length === 0) return undefined;
  return full || now - oldest >= ctx.deps.config.upstream.max_wait_ms ? { endpoint, lines } : undefined;
}

/** A request larger than any upstream batch may be can never go up: it errors alone. */
async function refuseOversize(ctx: UpstreamContext, line: BatchLine, dialect: 'openai' | 'anthropic', maxBytes: number): Promise<void> {
  const message = `the request is larger than the ${maxBytes} bytes an upstream batch may hold`;
  const body = dialectErrorBody(dialect, dialect === 'anthropic' ? 'request_too_large' : 'invalid_request_error', message);
  await ctx.deps.store.updateLine(line.batchId, line.lineNo, { state: 'errored', statusCode: 413, result: { outcome: 'errored', statusCode: 413, body } });
}

/** A deployment no longer configured with a batch API: its queued lines go back to be planned again. */
async function sendBack(ctx: UpstreamContext, deployment: string): Promise<void> {
  const lines = await ctx.deps.store.listQueuedLines(deployment, 1000);
  for (const line of lines) await ctx.deps.store.updateLine(line.batchId, line.lineNo, { state: 'pending', deployment: undefined, queuedAt: undefined });
  ctx.deps.log(`upstream batches: deployment ${deployment} has no batch API now; ${lines.length} queued lines planned again`);
}
