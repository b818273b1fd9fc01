// What the batch worker is handed from above the gateway: the client dialects' codecs live in ingress/, which
// batch/ may not import, so the HTTP layer runs a line with the same codecs and flow its realtime routes use
// (one flow per dialect, whether a request came over HTTP or out of a batch file); and the upstream half's port.
import type { AbortLink } from '../../core/abort-link.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import type { CatalogDeployment } from '../router/gateway-catalog.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { Batch, BatchLine, LineResult } from './batch-store.ts';

export interface LineRun {
  batch: Batch;
  line: BatchLine;
  /** The batch owner's key as it is now (a key revoked since submission is not run: the worker errors the line). */
  key: KeyInfo;
  /** The line's request body (OpenAI: the line's `body`; Anthropic: the item's `params`). */
  body: JsonObject;
  signal: AbortLink;
}

/**
 * Runs one line as its realtime endpoint would answer it: the batch's endpoint's operation, the owner's key,
 * priority BATCH, the line's request id, origin `batch:<batch id>`, billed as a line of the batch at the realtime
 * price (GatewayCaller.batch). Never throws: a failure is an `errored` result with the dialect's error body.
 */
export type RunLineRealtime = (run: LineRun) => Promise<LineResult>;

/** The upstream half of the worker (upstream-batching.ts): aggregation, submission, polling, results. */
export interface UpstreamBatching {
  /**
   * Whether a line of `endpoint` routed to this deployment goes up in an upstream batch: same-dialect pass-through only
   * (OpenAI endpoints to `type: openai` providers offering that endpoint, /v1/messages to `type: anthropic`), the provider's
   * batch API allowed by batch.upstream.providers (default: every such provider with a batch discount above 0).
   */
  accepts(deployment: CatalogDeployment, endpoint: string): boolean;
  /** One pass: pack due queues into upstream batches and submit them, poll the due ones, split ended ones' results onto their lines (billing each once). */
  tick(now: number, signal: AbortLink): Promise<void>;
  /** A client batch was cancelled: cancel upstream every upstream batch all of whose lines belong to cancelled client batches. */
  cancelFor(batchId: string, signal: AbortLink): Promise<void>;
}
