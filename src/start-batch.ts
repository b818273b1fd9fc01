// The batch half as `herd serve` runs it, over the opened batch parts and the running flow: the service the batch
// APIs answer through, and this replica's worker (lines run realtime through the same codecs and flow as the
// HTTP routes; replicas share the work through the store's leases).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { HerdConfig } from './config/herd-config-schema.ts';
import type { BillingService } from './gateway/billing/billing-service.ts';
import { BatchService } from './gateway/batch/batch-service.ts';
import { BatchWorker } from './gateway/batch/batch-worker.ts';
import { UpstreamBatcher } from './gateway/batch/upstream-batching.ts';
import type { Provider } from './gateway/providers/provider.ts';
import { LightAbortController } from './core/abort-link.ts';
import type { BatchParts } from './gateway/batch/open-batch-parts.ts';
import type { ChatGateway } from './gateway/flow/chat-gateway.ts';
import type { EmbeddingsGateway } from './gateway/flow/embeddings-gateway.ts';
import type { Authenticator } from './gateway/keys/authenticator.ts';
import type { GatewayCatalog } from './gateway/router/gateway-catalog.ts';
import { BATCH_LINE_DECODERS } from './http/batch-line-decoders.ts';
import { createBatchLineRunner, encodeLineError } from './http/batch-line-runner.ts';

/** A running gateway's batch half: the opened parts, the service /v1/batches and /v1/messages/batches answer through, the worker. */
export interface RunningBatch extends BatchParts {
  service: BatchService;
  /** Undefined with batch.worker.enabled: false (this replica only takes submissions). */
  worker: BatchWorker | undefined;
  close(): Promise<void>;
}

export interface BatchFlow {
  catalog: GatewayCatalog;
  billing: BillingService | undefined;
  flow: ChatGateway;
  embeddings: EmbeddingsGateway;
  authenticator: Authenticator;
  /** The chat service's provider instances (a batch-capable one carries its upstream's batch API). */
  providers: Readonly<Record<string, Provider>>;
  log: (line: string) => void;
}

/** Anthropic's limit on a Message Batch's body; its requests are counted by the validator (batch.max_lines), not as lines of text. */
const MESSAGE_BATCH_MAX_BYTES = 256 * 1024 * 1024;

export function startBatch(config: HerdConfig, parts: BatchParts, flow: BatchFlow): RunningBatch {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const upstream = config.batch.worker.enabled ? createUpstreamBatcher(config, parts, flow, owner) : undefined;
  const cancelUpstream = (batchId: string) => {
    void upstream?.cancelFor(batchId, new LightAbortController().signal).catch((err: unknown) => flow.log(`batch: cancelling ${batchId} upstream: ${String(err)}`));
  };
  const service = createBatchService(config, parts, flow.catalog, flow.billing, cancelUpstream);
  const worker = config.batch.worker.enabled ? createBatchWorker(config, parts, flow, owner, upstream) : undefined;
  worker?.start();
  return {
    ...parts,
    service,
    worker,
    async close() {
      await worker?.stop();
      await parts.store.close();
    },
  };
}

function createBatchService(
  config: HerdConfig,
  parts: BatchParts,
  catalog: GatewayCatalog,
  billing: BillingService | undefined,
  onCancelled: (batchId: string) => void,
): BatchService {
  return new BatchService({
    onCancelled,
    store: parts.store,
    fileStore: parts.fileStore,
    files: parts.files,
    catalog,
    decoders: BATCH_LINE_DECODERS,
    billing,
    maxLines: config.batch.max_lines,
    maxLineBytes: config.server.http_max_input_size,
    // The hold outlives expires_at by a day, so results arriving late still settle against it.
    reservationMarginMs: 86_400_000,
    now: Date.now,
    inlineLimits: {
      maxBytes: MESSAGE_BATCH_MAX_BYTES,
      maxLines: Number.MAX_SAFE_INTEGER,
      describe: "a Message Batch's body exceeds Anthropic's maximum of {max} bytes; split the requests into several batches",
    },
  });
}

/** Lines whose deployment's upstream has a batch API go up through it (needs billing: its answers are priced at the batch price). */
function createUpstreamBatcher(config: HerdConfig, parts: BatchParts, flow: BatchFlow, owner: string): UpstreamBatcher | undefined {
  const billing = flow.billing;
  if (billing === undefined) return undefined;
  return new UpstreamBatcher({
    store: parts.store,
    fileStore: parts.fileStore,
    providers: (name) => flow.providers[name],
    catalog: flow.catalog,
    billing,
    keyOf: async (keyId) => {
      const found = flow.authenticator.authenticateKeyId(keyId);
      return 'key' in found ? found.key : undefined;
    },
    config: config.batch,
    owner,
    now: Date.now,
    log: (line) => flow.log(`batch upstream: ${line}`),
  });
}

function createBatchWorker(config: HerdConfig, parts: BatchParts, flow: BatchFlow, owner: string, upstream: UpstreamBatcher | undefined): BatchWorker {
  return new BatchWorker({
    store: parts.store,
    fileStore: parts.fileStore,
    files: parts.files,
    catalog: flow.catalog,
    keyOf: (keyId) => flow.authenticator.authenticateKeyId(keyId),
    runRealtime: createBatchLineRunner({ gateway: flow.flow, embeddings: flow.embeddings }),
    encodeError: encodeLineError,
    upstream,
    ledger: flow.billing?.ledger,
    config: config.batch,
    owner,
    log: (line) => flow.log(`batch: ${line}`),
  });
}
