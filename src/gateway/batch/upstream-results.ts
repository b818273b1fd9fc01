// An ended upstream batch's results split back onto their lines (matched by request id, the upstream custom_id) and
// each answered one billed at the batch price, once: the ledger ignores a request id it has, so a re-read is harmless.
import type { AbortLink } from '../../core/abort-link.ts';
import type { FinishBase } from '../billing/billing-service.ts';
import type { Usage } from '../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../protocol/check-json-value.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { UpstreamBatchClient, UpstreamBatchResult } from '../providers/upstream-batch-client.ts';
import { resolveUpstreamModel } from '../router/gateway-catalog.ts';
import { type Batch, type BatchDialect, type BatchLine, type LineResult, TERMINAL_LINE_STATES, type UpstreamBatchRow } from './batch-store.ts';
import { dialectErrorBody, type UpstreamContext } from './upstream-context.ts';

const DIALECT_BY_ENDPOINT: Record<string, IngressDialect> = {
  '/v1/chat/completions': 'openai-chat',
  '/v1/messages': 'anthropic-messages',
  '/v1/responses': 'openai-responses',
  '/v1/completions': 'openai-completions',
  '/v1/embeddings': 'openai-embeddings',
};

const NO_USAGE: Usage = { promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, estimated: true, raw: undefined };

/** Reads every result of the ended upstream batch; a failure part-way is thrown (the poller reads it all again later). */
export async function readUpstreamResults(ctx: UpstreamContext, row: UpstreamBatchRow, client: UpstreamBatchClient, providerBatchId: string, signal: AbortLink): Promise<number> {
  const keys = new Map<string, FinishBase['key']>();
  let read = 0;
  for await (const result of client.results(providerBatchId, signal)) {
    await applyResult(ctx, row, result, keys);
    read++;
  }
  return read;
}

async function applyResult(ctx: UpstreamContext, row: UpstreamBatchRow, result: UpstreamBatchResult, keys: Map<string, FinishBase['key']>): Promise<void> {
  const { store, log } = ctx.deps;
  const line = await store.getLineByRequestId(result.customId);
  const batch = line === undefined ? undefined : await ctx.batch(line.batchId);
  if (line === undefined || batch === undefined || line.upstreamBatchId !== row.id) {
    log(`upstream batch ${row.id}: a result for ${result.customId.slice(0, 64)}, which is none of its lines, was ignored`);
    return;
  }
  // The upstream bills an answer even when its line was cancelled meanwhile, so Herd bills it too.
  if (result.outcome === 'succeeded') await billLine(ctx, row, batch, line, result, keys);
  if (TERMINAL_LINE_STATES.includes(line.state)) return;
  const outcome = toLineResult(batch.dialect, line, result);
  const statusCode = outcome.outcome === 'succeeded' || outcome.outcome === 'errored' ? outcome.statusCode : undefined;
  await store.updateLine(line.batchId, line.lineNo, { state: outcome.outcome, statusCode, result: outcome, leaseOwner: undefined, leaseUntil: undefined });
}

/** The line's outcome in its dialect: the answer with the model the client asked for, or the dialect's error body. */
function toLineResult(dialect: BatchDialect, line: BatchLine, result: UpstreamBatchResult): LineResult {
  switch (result.outcome) {
    case 'succeeded': {
      const body: JsonObject = line.model !== undefined && typeof result.body.model === 'string' ? { ...result.body, model: line.model } : result.body;
      return { outcome: 'succeeded', statusCode: result.statusCode, body };
    }
    case 'errored':
      return {
        outcome: 'errored',
        statusCode: result.statusCode,
        body: isDialectError(dialect, result.body) ? result.body : dialectErrorBody(dialect, result.error.type, result.error.message),
      };
    default:
      return { outcome: result.outcome };
  }
}

/** Whether the upstream's own error body already has the dialect's shape (OpenAI `{error: {...}}`, Anthropic `{type: 'error', error}`). */
function isDialectError(dialect: BatchDialect, body: JsonObject | undefined): body is JsonObject {
  if (body === undefined || !isJsonObject(body.error)) return false;
  return dialect === 'openai' || body.type === 'error';
}

async function billLine(
  ctx: UpstreamContext,
  row: UpstreamBatchRow,
  batch: Batch,
  line: BatchLine,
  result: Extract<UpstreamBatchResult, { outcome: 'succeeded' }>,
  keys: Map<string, FinishBase['key']>,
): Promise<void> {
  const { billing, keyOf } = ctx.deps;
  let key = keys.get(batch.keyId);
  if (key === undefined) {
    key = (await keyOf(batch.keyId)) ?? { id: batch.keyId };
    keys.set(batch.keyId, key);
  }
  const model = line.model ?? (typeof result.body.model === 'string' ? result.body.model : row.deployment);
  const deployment = ctx.deployment(row.deployment);
  const upstreamModel = deployment === undefined ? row.deployment.slice(row.provider.length + 1) : resolveUpstreamModel(deployment);
  const startedAt = row.submittedAt ?? row.createdAt;
  const usage = result.usage ?? NO_USAGE;
  // An owner without a budget held no reservation: billing writes the row and has nothing to settle.
  await billing.finish({
    outcome: 'completion',
    meta: {
      requestedModel: model,
      route: 'model',
      routeRule: `model:${model}`,
      model,
      provider: row.provider,
      upstreamModel,
      attempts: [],
      upstreamMs: 0,
      waitedMs: 0,
      overheadMs: 0,
      warnings: [],
      usage,
      rawFinishReason: null,
    },
    requestId: line.requestId,
    key,
    origin: `batch:${batch.id}`,
    dialect: DIALECT_BY_ENDPOINT[batch.endpoint],
    requestedModel: model,
    priority: 'BATCH',
    startedAt,
    latencyMs: Math.max(0, ctx.deps.now() - startedAt),
    httpStatus: result.statusCode,
    batch: { id: batch.id, upstreamBatch: true },
  });
}
