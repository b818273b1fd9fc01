// The batch half as `herd serve` runs it, over the opened batch parts and the running flow: the service the batch
// APIs answer through, and this replica's worker (lines run realtime through the same codecs and flow as the
// HTTP routes; replicas share the work through the store's leases).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { HerdConfig } from './config/herd-config-schema.ts';
import type { BillingService } from './gateway/billing/billing-service.ts';
import { BatchService } from './gateway/batch/batch-service.ts';
import { BatchWorker } from './gateway/batch/batch-worker.ts';
import type { BatchParts } from './gateway/batch/open-batch-parts.ts';
import type { ChatGateway } from './gateway/flow/chat-gateway.ts';
import type { EmbeddingsGateway } from './gateway/flow/embeddings-gateway.ts';
import type { Authenticator } from './gateway/keys/authenticator.ts';
import type { JsonObject } from './gateway/protocol/check-json-value.ts';
import type { GatewayCatalog } from './gateway/router/gateway-catalog.ts';
import { BATCH_LINE_DECODERS } from './http/batch-line-decoders.ts';
import { createBatchLineRunner } from './http/batch-line-runner.ts';
import { mapErrorToAnthropic } from './http/map-anthropic-error.ts';
import { mapErrorToOpenAI } from './http/map-openai-error.ts';

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
  log: (line: string) => void;
}

/** Anthropic's limit on a Message Batch's body; its requests are counted by the validator (batch.max_lines), not as lines of text. */
const MESSAGE_BATCH_MAX_BYTES = 256 * 1024 * 1024;

export function startBatch(config: HerdConfig, parts: BatchParts, flow: BatchFlow): RunningBatch {
  const service = createBatchService(config, parts, flow.catalog, flow.billing);
  const worker = config.batch.worker.enabled ? createBatchWorker(config, parts, flow) : undefined;
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

function createBatchService(config: HerdConfig, parts: BatchParts, catalog: GatewayCatalog, billing: BillingService | undefined): BatchService {
  return new BatchService({
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
    inlineLimits: { maxBytes: MESSAGE_BATCH_MAX_BYTES, maxLines: Number.MAX_SAFE_INTEGER },
  });
}

function createBatchWorker(config: HerdConfig, parts: BatchParts, flow: BatchFlow): BatchWorker {
  return new BatchWorker({
    store: parts.store,
    fileStore: parts.fileStore,
    files: parts.files,
    catalog: flow.catalog,
    keyOf: (keyId) => flow.authenticator.authenticateKeyId(keyId),
    runRealtime: createBatchLineRunner({ gateway: flow.flow, embeddings: flow.embeddings }),
    encodeError: (endpoint, error) => {
      const mapped = endpoint === '/v1/messages' ? mapErrorToAnthropic(error) : mapErrorToOpenAI(error);
      return { statusCode: mapped.status, body: mapped.body as unknown as JsonObject };
    },
    upstream: undefined,
    ledger: flow.billing?.ledger,
    config: config.batch,
    owner: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    log: (line) => flow.log(`batch: ${line}`),
  });
}
