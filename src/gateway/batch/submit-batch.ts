// A batch's submission (docs/decisions/batch-design.md, "Submission"): the stored input read once as a stream,
// every request validated as its realtime endpoint would, the lines written as byte ranges in chunks, and the
// batch's maximum cost reserved against the owner's budgets. A batch with a failure runs nothing and holds nothing.
import { HerdError } from '../../core/errors.ts';
import type { BillingService } from '../billing/billing-service.ts';
import { formatExactAmount, remainingBudget } from '../billing/check-budgets.ts';
import type { BudgetLine } from '../billing/ledger.ts';
import type { Micros } from '../billing/money.ts';
import { hasBudgets, planBudgets } from '../billing/plan-budgets.ts';
import { createRequestId } from '../flow/request-id.ts';
import { isModelAllowed } from '../keys/is-model-allowed.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import type { GatewayCatalog } from '../router/gateway-catalog.ts';
import { readJsonlLines } from '../wire/jsonl-line-source.ts';
import { readAnthropicRequests } from './anthropic-requests-line-source.ts';
import { createBatchId, createMessageBatchId } from './batch-ids.ts';
import type { Batch, BatchDialect, BatchFile, BatchLine, BatchStore } from './batch-store.ts';
import type { FileStore } from './file-store.ts';
import { type BatchLineError, type BatchValidation, validateBatchFile, type ValidBatchLine } from './validate-batch-file.ts';
import { choosePromptCount, createBatchLineCheck, type DecodedLineBody } from './validate-batch-line.ts';

/** Lines written to the store per insert while the file is read. */
const LINE_CHUNK = 1000;

export interface SubmitDeps {
  store: BatchStore;
  fileStore: FileStore;
  catalog: GatewayCatalog;
  /** Each endpoint's realtime decoder (the transport's table: batch/ does not import ingress/). */
  decoders: Readonly<Record<string, (body: unknown) => DecodedLineBody>>;
  billing: BillingService | undefined;
  maxLines: number;
  /** One request's largest size in bytes (the realtime body limit). */
  maxLineBytes: number;
  /** How long after expires_at the reservation stays open for late results. */
  reservationMarginMs: number;
  now: () => number;
}

export interface SubmitInput {
  owner: KeyInfo;
  dialect: BatchDialect;
  endpoint: string;
  input: BatchFile;
  completionWindowMs: number;
  metadata: Readonly<Record<string, string>> | undefined;
}

/** Refused as a whole: OpenAI keeps a `failed` batch with these errors; Anthropic answers them as a 400. */
export class BatchRejected extends HerdError {
  constructor(
    readonly batch: Batch,
    readonly validation: BatchValidation,
  ) {
    const first = validation.errors[0];
    const where = first?.line === undefined ? '' : `line ${first.line}: `;
    super('INVALID_ARG', `${validation.failed} of ${validation.total} requests failed validation; ${where}${first?.message ?? 'the input holds no requests'}`, {
      param: first?.param ?? undefined,
    });
  }
}

/** Validates and stores the batch; returns it `in_progress`, or throws BatchRejected / the budget's refusal. */
export async function submitBatch(deps: SubmitDeps, input: SubmitInput): Promise<Batch> {
  const createdAt = deps.now();
  const batch = newBatch(input, createdAt);
  await deps.store.insertBatch(batch);
  try {
    const budget = await openBudget(deps, input.owner, createdAt);
    const writer = new LineWriter(deps.store, batch.id, createdAt);
    const validation = await validateBatchFile({
      records: recordsOf(deps, input),
      format: input.dialect,
      endpoint: input.endpoint,
      key: input.owner,
      checkBody: lineCheck(deps, input, createdAt),
      onLine: (line) => writer.add(line),
      maxRequests: deps.maxLines,
      costLimitMicros: budget?.leftMicros,
    });
    await writer.flush();
    if (!validation.ok) return await reject(deps.store, batch, validation, createdAt);
    if (budget !== undefined && validation.overLimitAtLine !== undefined) throw budgetRefusal(validation, budget, deps.billing);
    const lines = budget === undefined ? [] : budgetLinesFor(input.owner, createdAt, writer.models, deps.billing);
    if (deps.billing !== undefined && lines.length > 0 && validation.totalMaxCostMicros > 0) {
      await deps.billing.reserve({
        keyId: input.owner.id,
        requestId: batch.id,
        estimateMicros: validation.totalMaxCostMicros,
        lines,
        atMs: createdAt,
        expiresAtMs: batch.expiresAt + deps.reservationMarginMs,
      });
    }
    const started = { status: 'in_progress', inProgressAt: deps.now(), total: validation.total, reservedMicros: validation.totalMaxCostMicros } as const;
    await deps.store.updateBatch(batch.id, started);
    return { ...batch, ...started };
  } catch (err) {
    if (!(err instanceof BatchRejected)) await deps.store.deleteBatch(batch.id).catch(() => undefined);
    throw err;
  }
}

function newBatch(input: SubmitInput, createdAt: number): Batch {
  return {
    id: input.dialect === 'openai' ? createBatchId() : createMessageBatchId(),
    dialect: input.dialect,
    keyId: input.owner.id,
    teamId: input.owner.team?.id,
    endpoint: input.endpoint,
    inputFileId: input.input.id,
    status: 'validating',
    completionWindowMs: input.completionWindowMs,
    createdAt,
    expiresAt: createdAt + input.completionWindowMs,
    inProgressAt: undefined,
    finalizingAt: undefined,
    completedAt: undefined,
    cancellingAt: undefined,
    cancelledAt: undefined,
    failedAt: undefined,
    expiredAt: undefined,
    metadata: input.metadata,
    total: 0,
    completed: 0,
    failed: 0,
    outputFileId: undefined,
    errorFileId: undefined,
    reservedMicros: 0,
    currency: '',
    errors: undefined,
  };
}

async function* recordsOf(deps: SubmitDeps, input: SubmitInput) {
  const stream = await deps.fileStore.open(input.input.storageRef);
  const options = { maxLineBytes: deps.maxLineBytes };
  yield* input.dialect === 'openai' ? readJsonlLines(stream, options) : readAnthropicRequests(stream, options);
}

function lineCheck(deps: SubmitDeps, input: SubmitInput, atMs: number) {
  const decode = deps.decoders[input.endpoint];
  if (decode === undefined) throw new HerdError('INVALID_ARG', `batches do not serve ${input.endpoint.slice(0, 64)}`, { param: 'endpoint' });
  return createBatchLineCheck({
    catalog: deps.catalog,
    decode,
    allowModel: isModelAllowed,
    pricing: deps.billing,
    promptCount: choosePromptCount(input.owner),
    atMs,
  });
}

/** Valid lines go to the store in chunks as they are read (a refused batch's lines are removed with it). */
class LineWriter {
  private chunk: BatchLine[] = [];
  readonly models = new Set<string>();

  constructor(
    private readonly store: BatchStore,
    private readonly batchId: string,
    private readonly now: number,
  ) {}

  async add(line: ValidBatchLine): Promise<void> {
    this.models.add(line.model);
    this.chunk.push({
      batchId: this.batchId,
      lineNo: line.lineNo,
      customId: line.customId,
      requestId: createRequestId(this.now),
      bodyOffset: line.byteOffset,
      bodyLength: line.byteLength,
      model: line.model,
      deployment: undefined,
      state: 'pending',
      upstreamBatchId: undefined,
      leaseOwner: undefined,
      leaseUntil: undefined,
      attempts: 0,
      resultRef: undefined,
      statusCode: undefined,
      queuedAt: undefined,
      result: undefined,
    });
    if (this.chunk.length >= LINE_CHUNK) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.chunk.length === 0) return;
    const lines = this.chunk;
    this.chunk = [];
    await this.store.insertLines(lines);
  }
}

/** OpenAI keeps the failed batch (status failed, errors.data with line numbers); its lines are gone with the old row. */
async function reject(store: BatchStore, batch: Batch, validation: BatchValidation, at: number): Promise<never> {
  await store.deleteBatch(batch.id);
  const failed: Batch = {
    ...batch,
    status: 'failed',
    failedAt: at,
    total: validation.total,
    failed: validation.failed,
    errors: { object: 'list', data: validation.errors.map(errorItem) },
  };
  if (batch.dialect === 'openai') await store.insertBatch(failed);
  throw new BatchRejected(failed, validation);
}

function errorItem(error: BatchLineError) {
  return { code: error.code, message: error.message, param: error.param, line: error.line ?? null };
}

interface OpenBudget {
  leftMicros: Micros;
}

/** What the owner's budgets (every rule: the lines' models are not known yet) have left; undefined without one. */
async function openBudget(deps: SubmitDeps, owner: KeyInfo, atMs: number): Promise<OpenBudget | undefined> {
  if (deps.billing === undefined || !hasBudgets(owner)) return undefined;
  const lines = planBudgets(owner, atMs, undefined, { defaultThresholds: deps.billing.defaultThresholds });
  if (lines.length === 0) return undefined;
  return { leftMicros: remainingBudget(lines, await deps.billing.ledger.budgetSpend(lines)) };
}

/** The budgets the batch's models count against: rules without a model, and per-model rules matching one of them. */
function budgetLinesFor(owner: KeyInfo, atMs: number, models: ReadonlySet<string>, billing: BillingService | undefined): BudgetLine[] {
  const options = { defaultThresholds: billing?.defaultThresholds ?? [] };
  const bySubject = new Map<string, BudgetLine>();
  for (const model of models) for (const line of planBudgets(owner, atMs, model, options)) bySubject.set(line.subject, line);
  return [...bySubject.values()];
}

function budgetRefusal(validation: BatchValidation, budget: OpenBudget, billing: BillingService | undefined): HerdError {
  const money = (m: Micros) => formatExactAmount(m, billing?.currency);
  return new HerdError(
    'BUDGET_EXCEEDED',
    `this batch may cost up to ${money(validation.totalMaxCostMicros)} and the budget has ${money(budget.leftMicros)} left; ` +
      `the running total of the requests' maximum costs passes it at line ${validation.overLimitAtLine}. Split the batch or lower max_tokens`,
  );
}
