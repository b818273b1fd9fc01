// What the upstream half of the batch worker shares (aggregator, poller, results): its dependencies, the
// deployments by key, each provider's batch client, the effective packing limits, and the backoff between polls.
import type { BatchConfig } from '../../config/batch-config-schema.ts';
import type { BillingService, FinishBase } from '../billing/billing-service.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { Provider } from '../providers/provider.ts';
import { isBatchCapable, type UpstreamBatchClient, type UpstreamBatchLimits } from '../providers/upstream-batch-client.ts';
import type { CatalogDeployment, GatewayCatalog } from '../router/gateway-catalog.ts';
import type { Batch, BatchDialect, BatchStore } from './batch-store.ts';
import type { FileStore } from './file-store.ts';

export interface UpstreamBatchingDeps {
  store: BatchStore;
  fileStore: FileStore;
  /** The gateway's provider instances by name (a batch-capable one carries `.batches`). */
  providers: (name: string) => Provider | undefined;
  catalog: GatewayCatalog;
  billing: BillingService;
  /** The batch owner's key as billing wants it (name, team, tags); undefined: a key gone since, billed by id alone. */
  keyOf: (keyId: string) => Promise<FinishBase['key'] | undefined>;
  config: Pick<BatchConfig, 'upstream' | 'deadline' | 'worker'>;
  /** This replica's worker id: the lease owner of the upstream batches it works on. */
  owner: string;
  now: () => number;
  log: (line: string) => void;
}

/** A line is claimed (planned) at most this often before a failed upstream batch errors it instead of requeueing it. */
export const UPSTREAM_MAX_ATTEMPTS = 3;

export class UpstreamContext {
  private readonly deployments = new Map<string, CatalogDeployment>();
  private readonly batches = new Map<string, Batch | undefined>();
  private readonly inputRefs = new Map<string, string | undefined>();

  constructor(readonly deps: UpstreamBatchingDeps) {
    for (const model of deps.catalog.models.values()) for (const d of model.deployments) if (!this.deployments.has(d.key)) this.deployments.set(d.key, d);
  }

  deployment(key: string): CatalogDeployment | undefined {
    return this.deployments.get(key);
  }

  /** The provider's batch client, when it has one. */
  client(provider: string): UpstreamBatchClient | undefined {
    const instance = this.deps.providers(provider);
    return instance !== undefined && isBatchCapable(instance) ? instance.batches : undefined;
  }

  /** batch.upstream's limits under the upstream's own (never above them). */
  limits(client: UpstreamBatchClient): UpstreamBatchLimits {
    const { max_lines: lines, max_bytes: bytes } = this.deps.config.upstream;
    return { maxLines: Math.min(lines ?? Number.POSITIVE_INFINITY, client.limits.maxLines), maxBytes: Math.min(bytes ?? Number.POSITIVE_INFINITY, client.limits.maxBytes) };
  }

  /** The client batch, read once per tick (its expiry, owner and dialect do not move). */
  async batch(id: string): Promise<Batch | undefined> {
    if (!this.batches.has(id)) this.batches.set(id, await this.deps.store.getBatch(id));
    return this.batches.get(id);
  }

  /** Where the batch's input file's bytes are (undefined: the file is gone). */
  async inputRef(batch: Batch): Promise<string | undefined> {
    if (!this.inputRefs.has(batch.inputFileId)) this.inputRefs.set(batch.inputFileId, (await this.deps.store.getFile(batch.inputFileId))?.storageRef);
    return this.inputRefs.get(batch.inputFileId);
  }

  /** Whether no line of this batch may go upstream any more (batch.deadline.margin_ms before its expiry). */
  pastDeadline(batch: Batch, now: number): boolean {
    return now >= batch.expiresAt - this.deps.config.deadline.margin_ms;
  }

  /** The wait before the next poll after `attempts` polls found the batch running: poll_min doubled each time, at most poll_max. */
  pollDelay(attempts: number): number {
    const { poll_min_ms: min, poll_max_ms: max } = this.deps.config.upstream;
    return Math.min(max, min * 2 ** Math.min(attempts, 30));
  }

  /** Drops the per-tick caches. */
  forget(): void {
    this.batches.clear();
    this.inputRefs.clear();
  }
}

/** The dialect's error body, as its realtime endpoint would answer a failure. */
export function dialectErrorBody(dialect: BatchDialect, type: string, message: string): JsonObject {
  return dialect === 'anthropic' ? { type: 'error', error: { type, message } } : { error: { message, type, param: null, code: null } };
}
