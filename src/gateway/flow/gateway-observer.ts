// What the request flow tells whoever watches it (metrics, wired in app.ts): one plain-data event per
// client request, however it ended. Narrow on purpose, so the gateway never depends on a metrics library.
import type { ErrorCode, HerdError } from '../../core/errors.ts';
import type { Usage } from '../protocol/chat-types.ts';

export type StatusClass = '2xx' | '4xx' | '5xx';

/** Whether the exact-match cache answered, was asked and had nothing, or was not consulted. */
export type CacheOutcome = 'hit' | 'miss' | 'off';

/** `model` when the request resolved to no configured model: labels never carry the client's string. */
export const UNKNOWN_MODEL = 'unknown';
/** `provider` when no upstream was tried (refused before routing, or nothing was attempted). */
export const NO_PROVIDER = 'none';

export interface GatewayRequestEvent {
  /** Canonical model from config that answered (after fallbacks), else the one routed to, else UNKNOWN_MODEL. */
  model: string;
  /** Provider that answered (a cache hit: the one that first did), else the last one tried, else NO_PROVIDER. */
  provider: string;
  /** From the HTTP status the transport answers; a stream that fails after its first chunk was a 200. */
  statusClass: StatusClass;
  cache: CacheOutcome;
  stream: boolean;
  /** What the upstream used for this request; absent for cache hits (nothing was bought) and failures. */
  tokens?: Usage;
  /** The request's price in true USD micro-units (billing's), when billing runs and something answered. */
  usdMicros?: number;
  /** A cache hit: what the original answer cost, in USD micro-units. */
  savedUsdMicros?: number;
  /** Time waiting on upstreams, failed attempts included; a stream: until its last chunk. */
  upstreamMs?: number;
  /** A stream: from arrival to its first chunk being ready. */
  ttftMs?: number;
  /** Time queued for admission (priority queue, provider limits). */
  queuedMs?: number;
  /**
   * Herd's own time in the request flow: elapsed − upstream − waits (a stream: until its first
   * chunk). Absent when an upstream call failed, where the split is not known.
   */
  overheadMs?: number;
}

export interface GatewayObserver {
  /** Called exactly once per request, after it ended (a stream: after its last chunk). Errors it throws are logged and ignored. */
  onRequestFinished(event: GatewayRequestEvent): void;
}

/** The class of an HTTP status. Anything below 400 counts as success. */
export function mapStatusToClass(status: number): StatusClass {
  return status >= 500 ? '5xx' : status >= 400 ? '4xx' : '2xx';
}

// The client's own doing (or its quota); every other code is the server's or an upstream's. Used only
// when the transport passes no mapping of its own (it knows finer cases, e.g. upstream 400s).
const CLIENT_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_ARG',
  'UNSUPPORTED',
  'PAYLOAD_TOO_LARGE',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'RATE_LIMITED',
  'BUDGET_EXCEEDED',
  'UPSTREAM_RATE_LIMITED',
]);

/** A representative status for an error, by its code alone. */
export function estimateErrorStatus(error: HerdError): number {
  return CLIENT_ERROR_CODES.has(error.code) ? 400 : 500;
}
