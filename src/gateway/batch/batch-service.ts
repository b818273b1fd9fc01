// Client batches, one method per verb of OpenAI's Batch API and Anthropic's Message Batches (the HTTP routes are
// their thin transports; each maps a Batch and its line counts to its wire object). Submission is submit-batch.ts's;
// running the lines is the worker's.
import { HerdError } from '../../core/errors.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import type { Batch, BatchDialect, BatchLine, BatchLineState, BatchStatus, ListOrder, Page } from './batch-store.ts';
import type { FileService } from './file-service.ts';
import type { PutLimits } from './file-store.ts';
import { readBatchLines } from './read-batch-lines.ts';
import { BatchRejected, type SubmitDeps, submitBatch } from './submit-batch.ts';

/** A batch with how many of its lines are in each state (request_counts). */
export interface BatchView {
  batch: Batch;
  counts: Partial<Record<BatchLineState, number>>;
}

export interface CreateOpenAIBatch {
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  metadata: Readonly<Record<string, string>> | undefined;
}

export interface ListBatchesQuery {
  /** The id of the last batch of the previous page (OpenAI `after`, Anthropic `after_id`). */
  after: string | undefined;
  limit: number;
  order: ListOrder;
}

export interface BatchServiceOptions extends SubmitDeps {
  files: FileService;
  /** Anthropic's limit for a Message Batch's body. */
  inlineLimits: PutLimits;
  /** A client batch was cancelled: the worker cancels its upstream batches (best effort). */
  onCancelled?: (batchId: string) => void;
}

/** The one window both APIs accept. */
const COMPLETION_WINDOWS: Readonly<Record<string, number>> = { '24h': 86_400_000 };
const MASTER_KEY_ID = 'master';
const ENDED: readonly BatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];

export class BatchService {
  constructor(private readonly options: BatchServiceOptions) {}

  /** POST /v1/batches: the uploaded file validated whole; a failed batch is returned `failed` (as OpenAI does), not thrown. */
  async createOpenAI(owner: KeyInfo, input: CreateOpenAIBatch): Promise<BatchView> {
    const completionWindowMs = COMPLETION_WINDOWS[input.completionWindow];
    if (completionWindowMs === undefined) {
      throw new HerdError('INVALID_ARG', `'${input.completionWindow.slice(0, 16)}' is not one of ['24h'] - 'completion_window'`, { param: 'completion_window' });
    }
    if (this.options.decoders[input.endpoint] === undefined || input.endpoint === '/v1/messages') {
      const endpoints = Object.keys(this.options.decoders).filter((e) => e !== '/v1/messages');
      throw new HerdError('INVALID_ARG', `'${input.endpoint.slice(0, 64)}' is not one of ${endpoints.map((e) => `'${e}'`).join(', ')} - 'endpoint'`, { param: 'endpoint' });
    }
    const file = await this.options.files.inputFile(owner, input.inputFileId);
    return this.submit({ owner, dialect: 'openai', endpoint: input.endpoint, input: file, completionWindowMs, metadata: input.metadata });
  }

  /** POST /v1/messages/batches: the body is stored first (never whole in memory), then read as the OpenAI file is. */
  async createAnthropic(owner: KeyInfo, body: AsyncIterable<Buffer | Uint8Array>): Promise<BatchView> {
    const file = await this.options.files.storeInline(owner, body, this.options.inlineLimits);
    let view: BatchView;
    try {
      view = await this.submit({ owner, dialect: 'anthropic', endpoint: '/v1/messages', input: file, completionWindowMs: 86_400_000, metadata: undefined });
    } catch (err) {
      await this.options.files.removeInternal(file.id);
      throw err;
    }
    if (view.batch.status !== 'failed') return view;
    await this.options.files.removeInternal(file.id);
    throw new HerdError('INVALID_ARG', describeFailure(view.batch), { param: 'requests' });
  }

  async get(owner: KeyInfo, dialect: BatchDialect, id: string): Promise<BatchView> {
    return this.view(await this.visible(owner, dialect, id));
  }

  async list(owner: KeyInfo, dialect: BatchDialect, query: ListBatchesQuery): Promise<Page<BatchView>> {
    const page = await this.options.store.listBatches({ dialect, keyId: ownerFilter(owner), after: query.after, limit: query.limit, order: query.order });
    return { items: await Promise.all(page.items.map((b) => this.view(b))), hasMore: page.hasMore };
  }

  /**
   * Lines not yet sent (pending, or queued for an upstream batch) are cancelled at once; lines running finish
   * and are billed; the worker moves the batch to `cancelled` when none is left running.
   */
  async cancel(owner: KeyInfo, dialect: BatchDialect, id: string): Promise<BatchView> {
    const batch = await this.visible(owner, dialect, id);
    if (batch.status === 'cancelling' || batch.status === 'cancelled') return this.view(batch);
    const now = this.options.now();
    const moved = await this.options.store.updateBatch(id, { status: 'cancelling', cancellingAt: now }, ['validating', 'in_progress', 'finalizing']);
    if (!moved) throw new HerdError('INVALID_ARG', `Cannot cancel a batch with status '${batch.status}'.`, { param: 'id' });
    await this.options.store.finishLines(id, ['pending', 'queued_upstream'], 'canceled', { outcome: 'canceled' });
    this.options.onCancelled?.(id);
    return this.view({ ...batch, status: 'cancelling', cancellingAt: now });
  }

  /** Anthropic's DELETE: only an ended batch; its lines and its stored input go with it. */
  async remove(owner: KeyInfo, id: string): Promise<{ id: string }> {
    const batch = await this.visible(owner, 'anthropic', id);
    if (!ENDED.includes(batch.status)) {
      throw new HerdError('INVALID_ARG', `Batch ${id} cannot be deleted while it is still processing; cancel it first and wait for it to end`, { param: 'id' });
    }
    await this.options.store.deleteBatch(id);
    await this.options.files.removeInternal(batch.inputFileId);
    return { id };
  }

  /** An ended batch's lines in line order, read a page at a time (Anthropic's results; OpenAI's output is a file). */
  async *results(owner: KeyInfo, dialect: BatchDialect, id: string): AsyncGenerator<BatchLine> {
    const batch = await this.visible(owner, dialect, id);
    if (!ENDED.includes(batch.status)) throw new HerdError('INVALID_ARG', `Batch ${id} has not ended yet; its results are available once processing_status is 'ended'`);
    for await (const page of readBatchLines(this.options.store, batch.id)) yield* page;
  }

  /** Opens a batch's results first (so an unknown id is a 404 before the answer starts), then streams them. */
  async openResults(owner: KeyInfo, dialect: BatchDialect, id: string): Promise<AsyncGenerator<BatchLine>> {
    const results = this.results(owner, dialect, id);
    const first = await results.next();
    return (async function* () {
      if (first.done === true) return;
      yield first.value;
      yield* results;
    })();
  }

  private async submit(input: Parameters<typeof submitBatch>[1]): Promise<BatchView> {
    try {
      return await this.view(await submitBatch(this.options, input));
    } catch (err) {
      if (err instanceof BatchRejected) return this.view(err.batch);
      throw err;
    }
  }

  private async view(batch: Batch): Promise<BatchView> {
    return { batch, counts: await this.options.store.countLines(batch.id) };
  }

  /** The owner's batch of this dialect (the master key: anyone's); else the same 404 as an unknown id. */
  private async visible(owner: KeyInfo, dialect: BatchDialect, id: string): Promise<Batch> {
    const batch = await this.options.store.getBatch(id);
    if (batch === undefined || batch.dialect !== dialect || (owner.id !== MASTER_KEY_ID && batch.keyId !== owner.id)) {
      throw new HerdError('NOT_FOUND', `No batch found with id '${id.slice(0, 128)}'`, { param: 'id', reason: 'unknown_object' });
    }
    return batch;
  }
}

function ownerFilter(owner: KeyInfo): string | undefined {
  return owner.id === MASTER_KEY_ID ? undefined : owner.id;
}

function describeFailure(batch: Batch): string {
  const errors = (batch.errors as { data?: { line?: number | null; message: string }[] } | undefined)?.data ?? [];
  const shown = errors.slice(0, 5).map((e) => (e.line === null || e.line === undefined ? e.message : `requests[${e.line - 1}]: ${e.message}`));
  const more = batch.failed > shown.length ? ` (and ${batch.failed - shown.length} more)` : '';
  return `${batch.failed} of ${batch.total} requests are invalid: ${shown.join('; ')}${more}`;
}
