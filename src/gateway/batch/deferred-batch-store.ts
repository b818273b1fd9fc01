// A batch store on PostgreSQL that the server does not wait for: Herd starts and serves while the database is
// down (as its ledger does), the store connects in the background with backoff, and until then every call
// answers UNAVAILABLE naming the store, so a client of /v1/files retries rather than the server refusing to start.
import { HerdError } from '../../core/errors.ts';
import { RetryUntilReady } from '../billing/retry-until-ready.ts';
import type { BackoffPolicy } from '../resilience/backoff.ts';
import type { BatchStore, FileBlobStore } from './batch-store.ts';

export interface DeferredBatchStoreOptions {
  open: () => Promise<BatchStore>;
  /** For messages: the store and where it is, without credentials. */
  label: string;
  backoff?: BackoffPolicy;
  log?: (line: string) => void;
}

const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 200, capMs: 10_000 };

type Method = Exclude<keyof BatchStore, 'close' | 'blobs' | 'kind'>;

export class DeferredBatchStore implements BatchStore {
  readonly kind = 'postgres' as const;
  private store: BatchStore | undefined;
  private readonly retry: RetryUntilReady;
  private closed = false;

  constructor(private readonly options: DeferredBatchStoreOptions) {
    this.retry = new RetryUntilReady({
      step: async () => {
        const store = await options.open();
        if (this.closed) await store.close();
        else this.store = store;
      },
      backoff: options.backoff ?? DEFAULT_BACKOFF,
      onFailure: (error, _attempt, retryInMs) => options.log?.(`${options.label} is unreachable (${describe(error)}); retrying in ${(retryInMs / 1000).toFixed(1)} s`),
      onReady: () => options.log?.(`${options.label} reached`),
    });
  }

  /** One attempt now; on failure, keeps trying in the background. Never rejects. */
  async start(): Promise<void> {
    if (!(await this.retry.attempt())) this.retryInBackground();
  }

  get isReady(): boolean {
    return this.store !== undefined;
  }

  insertFile = this.forward('insertFile');
  getFile = this.forward('getFile');
  listFiles = this.forward('listFiles');
  markFileDeleted = this.forward('markFileDeleted');
  insertBatch = this.forward('insertBatch');
  getBatch = this.forward('getBatch');
  listBatches = this.forward('listBatches');
  updateBatch = this.forward('updateBatch');
  insertLines = this.forward('insertLines');
  listLines = this.forward('listLines');
  claimLines = this.forward('claimLines');
  updateLine = this.forward('updateLine');
  countLines = this.forward('countLines');
  deleteBatch = this.forward('deleteBatch');
  finishLines = this.forward('finishLines');
  returnUnsentLines = this.forward('returnUnsentLines');
  listBatchesByStatus = this.forward('listBatchesByStatus');
  listQueuedDeployments = this.forward('listQueuedDeployments');
  listQueuedLines = this.forward('listQueuedLines');
  insertUpstreamBatch = this.forward('insertUpstreamBatch');
  getUpstreamBatch = this.forward('getUpstreamBatch');
  claimUpstreamBatches = this.forward('claimUpstreamBatches');
  updateUpstreamBatch = this.forward('updateUpstreamBatch');
  listUpstreamLines = this.forward('listUpstreamLines');
  getLineByRequestId = this.forward('getLineByRequestId');
  requeueUpstreamLines = this.forward('requeueUpstreamLines');
  readonly blobs: FileBlobStore = {
    begin: async (...args) => this.connected().blobs.begin(...args),
    putChunk: async (...args) => this.connected().blobs.putChunk(...args),
    complete: async (...args) => this.connected().blobs.complete(...args),
    get: async (...args) => this.connected().blobs.get(...args),
    chunks: async (...args) => this.connected().blobs.chunks(...args),
    delete: async (...args) => this.connected().blobs.delete(...args),
    listIncomplete: async (...args) => this.connected().blobs.listIncomplete(...args),
  };

  async close(): Promise<void> {
    this.closed = true;
    this.retry.stop();
    await this.store?.close();
    this.store = undefined;
  }

  private retryInBackground(): void {
    if (!this.closed) this.retry.retryInBackground();
  }

  private forward<M extends Method>(method: M): BatchStore[M] {
    const call = async (...args: unknown[]): Promise<unknown> => {
      const store = this.connected();
      return (store[method] as (...a: unknown[]) => unknown).apply(store, args);
    };
    return call as BatchStore[M];
  }

  /** The store once reached; until then UNAVAILABLE, naming why (every call is async, so it rejects). */
  private connected(): BatchStore {
    const store = this.store;
    if (store === undefined) throw new HerdError('UNAVAILABLE', `${this.options.label} is unreachable: ${describe(this.retry.lastError)}; retrying in the background`);
    return store;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : 'not connected yet';
}
