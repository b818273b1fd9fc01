// The one error type for upstream failures: a HerdError (UPSTREAM_* code) that also keeps what the
// router needs to decide on retries and fallbacks — the failure kind, upstream status and error type.
import { HerdError } from '../../core/errors.ts';

export type UpstreamErrorCode = 'UPSTREAM_ERROR' | 'UPSTREAM_TIMEOUT' | 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_RATE_LIMITED';

/** Why the attempt failed; the router's retry and fallback policy keys off this. */
export type UpstreamFailure =
  | 'rate_limited' // 429: wait (retryAfterSeconds) and retry, or fall back
  | 'quota_exceeded' // 429 insufficient_quota and the like: retrying the same account will not help
  | 'unavailable' // 503, Anthropic 529 overloaded, connection refused / DNS failure
  | 'server_error' // 500, 502, other 5xx, Anthropic api_error
  | 'timeout' // Herd's per-attempt timer, 408, 504
  | 'interrupted' // connection reset or closed mid-body / mid-stream
  | 'malformed' // body or SSE that is not what the wire format promises
  | 'context_length' // prompt too long for the model: a bigger-context fallback may work
  | 'invalid_request' // other 4xx: the request itself is wrong for this upstream
  | 'auth' // 401/403: the provider key is wrong or lacks access
  | 'not_found' // 404: usually an unknown upstream model id
  | 'content_filter'; // the upstream refused the prompt on safety grounds (e.g. Gemini blockReason)

const CODE_BY_FAILURE: Record<UpstreamFailure, UpstreamErrorCode> = {
  rate_limited: 'UPSTREAM_RATE_LIMITED',
  quota_exceeded: 'UPSTREAM_RATE_LIMITED',
  unavailable: 'UPSTREAM_UNAVAILABLE',
  server_error: 'UPSTREAM_ERROR',
  timeout: 'UPSTREAM_TIMEOUT',
  interrupted: 'UPSTREAM_ERROR',
  malformed: 'UPSTREAM_ERROR',
  context_length: 'UPSTREAM_ERROR',
  invalid_request: 'UPSTREAM_ERROR',
  auth: 'UPSTREAM_ERROR',
  not_found: 'UPSTREAM_ERROR',
  content_filter: 'UPSTREAM_ERROR',
};

/** Every failure kind (docs/errors.md lists each). */
export const UPSTREAM_FAILURES = Object.keys(CODE_BY_FAILURE) as UpstreamFailure[];

const TRANSIENT = new Set<UpstreamFailure>(['rate_limited', 'unavailable', 'server_error', 'timeout', 'interrupted', 'malformed']);

export interface UpstreamErrorOptions {
  provider: string;
  failure: UpstreamFailure;
  /** HTTP status of the upstream response, when there was one. */
  status?: number;
  /** The upstream's own error type/code (`overloaded_error`, `RESOURCE_EXHAUSTED`, ...). */
  upstreamType?: string;
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class UpstreamError extends HerdError {
  declare readonly code: UpstreamErrorCode;
  readonly provider: string;
  readonly failure: UpstreamFailure;
  readonly status: number | undefined;
  readonly upstreamType: string | undefined;

  /** `message` must already be safe to show a client: no key, no request body. */
  constructor(message: string, options: UpstreamErrorOptions) {
    super(CODE_BY_FAILURE[options.failure], message, { cause: options.cause, retryAfterSeconds: options.retryAfterSeconds });
    this.name = 'UpstreamError';
    this.provider = options.provider;
    this.failure = options.failure;
    this.status = options.status;
    this.upstreamType = options.upstreamType;
  }

  /** Whether the same request to the same upstream may succeed later (a hint; the router decides). */
  get transient(): boolean {
    return TRANSIENT.has(this.failure);
  }
}

/** The failure an HTTP error status means, before looking at the body. */
export function mapStatusToFailure(status: number): UpstreamFailure {
  if (status === 429) return 'rate_limited';
  if (status === 503 || status === 529) return 'unavailable';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 500) return 'server_error';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  return 'invalid_request';
}

/** What a provider reads out of its own error body (each dialect nests these differently). */
export interface UpstreamErrorBody {
  type?: string;
  message?: string;
  /** Overrides the failure the HTTP status implies (e.g. context_length for a 400). */
  failure?: UpstreamFailure;
  retryAfterSeconds?: number;
}
