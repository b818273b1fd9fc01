// The requests of one upstream batch as they go up: each line's body read back from its client batch's input file
// (the byte range the validator recorded; never copied), its model replaced by the deployment's upstream model.
import { HerdError, toHerdError } from '../../core/errors.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { UpstreamBatchLine } from '../providers/upstream-batch-client.ts';
import { type CatalogDeployment, resolveUpstreamModel } from '../router/gateway-catalog.ts';
import type { Batch, BatchLine, UpstreamBatchRow } from './batch-store.ts';
import { readLineBody } from './read-line-body.ts';
import { dialectErrorBody, type UpstreamContext } from './upstream-context.ts';

/** Lines read from the store at a time while an upstream batch's requests stream up. */
const PAGE = 500;

/** Whether a line of an upstream batch is still to be sent: queued (not cancelled since) and its batch not at its deadline. */
export async function isSendable(ctx: UpstreamContext, line: BatchLine, now: number): Promise<Batch | undefined> {
  if (line.state !== 'queued_upstream') return undefined;
  const batch = await ctx.batch(line.batchId);
  return batch === undefined || ctx.pastDeadline(batch, now) ? undefined : batch;
}

/** Whether any of the upstream batch's lines would go up now (reading stops at the first). */
export async function hasSendable(ctx: UpstreamContext, row: UpstreamBatchRow, now: number): Promise<boolean> {
  for await (const line of pagesOf(ctx, row)) if ((await isSendable(ctx, line, now)) !== undefined) return true;
  return false;
}

/**
 * The requests to send, in request id order; a line whose batch reached its deadline since it was packed is taken
 * out of the upstream batch (back in the queue, where the worker's deadline policy finds it), a cancelled one skipped.
 */
export async function* upstreamRequests(ctx: UpstreamContext, row: UpstreamBatchRow, deployment: CatalogDeployment, now: number): AsyncGenerator<UpstreamBatchLine> {
  for await (const line of pagesOf(ctx, row)) {
    const batch = await isSendable(ctx, line, now);
    if (batch === undefined) {
      if (line.state === 'queued_upstream') await ctx.deps.store.updateLine(line.batchId, line.lineNo, { upstreamBatchId: undefined });
      continue;
    }
    let body: JsonObject;
    try {
      const ref = await ctx.inputRef(batch);
      if (ref === undefined) throw new HerdError('NOT_FOUND', `batch ${batch.id}: its input file ${batch.inputFileId} is gone`);
      body = await readLineBody(ctx.deps.fileStore, ref, line, batch.dialect);
    } catch (err) {
      // One unreadable request (its input file removed) errors alone; the rest of the upstream batch goes up.
      const message = `the request could not be read back from the batch's input file: ${toHerdError(err).message}`;
      await ctx.deps.store.updateLine(line.batchId, line.lineNo, {
        state: 'errored',
        statusCode: 500,
        result: { outcome: 'errored', statusCode: 500, body: dialectErrorBody(batch.dialect, 'api_error', message) },
      });
      continue;
    }
    yield { customId: line.requestId, body: { ...body, model: upstreamModelOf(ctx, deployment, body) } };
  }
}

async function* pagesOf(ctx: UpstreamContext, row: UpstreamBatchRow): AsyncGenerator<BatchLine> {
  let after: string | undefined;
  for (;;) {
    const page = await ctx.deps.store.listUpstreamLines(row.id, after, PAGE);
    yield* page;
    if (page.length < PAGE) return;
    after = page.at(-1)?.requestId;
  }
}

/** The id the upstream is sent: a pattern route's client id fills `{model}` as in realtime, else the model's own name. */
export function upstreamModelOf(ctx: UpstreamContext, deployment: CatalogDeployment, body: JsonObject): string {
  const sent = typeof body.model === 'string' ? body.model : undefined;
  const viaPattern = sent !== undefined && ctx.deps.catalog.findModel(sent) === undefined;
  return resolveUpstreamModel(deployment, viaPattern ? sent : undefined);
}
