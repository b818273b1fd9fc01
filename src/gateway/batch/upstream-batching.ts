// The upstream half of the batch worker (the UpstreamBatching port): which lines go up in upstream batches, and each
// tick's packing, submission, polling and splitting of results (upstream-aggregator/-submit/-poller/-results).
import type { AbortLink } from '../../core/abort-link.ts';
import { toHerdError } from '../../core/errors.ts';
import type { CatalogDeployment, CatalogProvider } from '../router/gateway-catalog.ts';
import type { BatchLine } from './batch-store.ts';
import type { UpstreamBatching } from './batch-worker-ports.ts';
import { aggregateQueues } from './upstream-aggregator.ts';
import { UpstreamContext, type UpstreamBatchingDeps } from './upstream-context.ts';
import { pollUpstreamBatches } from './upstream-poller.ts';

export type { UpstreamBatchingDeps } from './upstream-context.ts';

/** The OpenAI endpoints an OpenAI Batch API takes, each passed through as the client sent it. */
const OPENAI_BATCH_ENDPOINTS: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/responses']);
const PAGE = 1000;

export class UpstreamBatcher implements UpstreamBatching {
  private readonly ctx: UpstreamContext;

  constructor(private readonly deps: UpstreamBatchingDeps) {
    this.ctx = new UpstreamContext(deps);
  }

  accepts(deployment: CatalogDeployment, endpoint: string): boolean {
    const provider = deployment.provider;
    return provider.enabled && this.allowed(provider) && this.sameDialect(provider, endpoint) && this.ctx.client(provider.name) !== undefined;
  }

  async tick(now: number, signal: AbortLink): Promise<void> {
    this.ctx.forget();
    await aggregateQueues(this.ctx, now, signal);
    if (!signal.aborted) await pollUpstreamBatches(this.ctx, now, signal);
  }

  async cancelFor(batchId: string, signal: AbortLink): Promise<void> {
    const { store, log } = this.deps;
    const upstreamIds = new Set<string>();
    for (let from = 1; ; ) {
      const page = await store.listLines(batchId, from, PAGE);
      for (const line of page) if (line.upstreamBatchId !== undefined) upstreamIds.add(line.upstreamBatchId);
      const last = page.at(-1);
      if (page.length < PAGE || last === undefined) break;
      from = last.lineNo + 1;
    }
    for (const id of upstreamIds) {
      if (signal.aborted) return;
      try {
        await this.cancelIfAbandoned(id, signal);
      } catch (err) {
        log(`upstream batch ${id}: cancelling it for ${batchId} failed (${toHerdError(err).message})`);
      }
    }
  }

  /** An upstream batch none of whose lines is still wanted (every client batch in it cancelled) is cancelled upstream. */
  private async cancelIfAbandoned(id: string, signal: AbortLink): Promise<void> {
    const { store, log } = this.deps;
    const row = await store.getUpstreamBatch(id);
    const client = row === undefined ? undefined : this.ctx.client(row.provider);
    if (row?.state !== 'running' || row.providerBatchId === undefined || client === undefined) return;
    if (await this.anyWanted(id)) return;
    const status = await client.cancel(row.providerBatchId, signal);
    log(`upstream batch ${id}: every line's batch was cancelled; ${row.provider} batch ${row.providerBatchId} is ${status.upstreamStatus}`);
    // Polled soon: what it answered before the cancel is billed upstream, so it is read and billed here too.
    await store.updateUpstreamBatch(id, { nextPollAt: this.deps.now() + this.deps.config.upstream.poll_min_ms, pollAttempts: 0 });
  }

  private async anyWanted(upstreamBatchId: string): Promise<boolean> {
    let after: string | undefined;
    for (;;) {
      const page: BatchLine[] = await this.deps.store.listUpstreamLines(upstreamBatchId, after, PAGE);
      if (page.some((line) => line.state === 'queued_upstream')) return true;
      if (page.length < PAGE) return false;
      after = page.at(-1)?.requestId;
    }
  }

  /** batch.upstream.providers, else every openai/anthropic provider whose batch discount is above 0. */
  private allowed(provider: CatalogProvider): boolean {
    const listed = this.deps.config.upstream.providers;
    if (listed !== undefined) return listed.includes(provider.name);
    if (provider.type !== 'openai' && provider.type !== 'anthropic') return false;
    const discount = this.deps.billing.batchDiscounts.get(provider.name);
    return discount !== undefined && discount.compare(0) > 0;
  }

  /** Same-dialect pass-through only: a bridged line would need translating both ways, so it runs realtime instead. */
  private sameDialect(provider: CatalogProvider, endpoint: string): boolean {
    if (endpoint === '/v1/messages') return provider.type === 'anthropic';
    if (provider.type !== 'openai' || !OPENAI_BATCH_ENDPOINTS.has(endpoint)) return false;
    if (endpoint === '/v1/responses') return provider.endpoints.includes('responses');
    if (endpoint === '/v1/completions') return provider.endpoints.includes('completions');
    if (endpoint === '/v1/embeddings') return this.deps.providers(provider.name)?.embed !== undefined;
    return true;
  }
}
