// The trail of upstream attempts behind one request (for x-herd-attempts, logs and tests), and the
// error a routed request fails with, which keeps that trail beside the upstream failure it ends on.
import { UpstreamError, type UpstreamErrorOptions, type UpstreamFailure } from '../protocol/upstream-error.ts';

export interface AttemptRecord {
  /** Public model name. */
  model: string;
  provider: string;
  upstreamModel: string;
  outcome: 'ok' | UpstreamFailure;
  /** Upstream HTTP status, when the failure had one. */
  status?: number;
  /** The failure's message (already safe to show a client). */
  message?: string;
  durationMs: number;
  /** After a failure: what the router did next. */
  next?: 'retry' | 'next-deployment' | 'next-model' | 'answer';
  /** After a failure: the wait before the retry. */
  waitMs?: number;
}

export interface UpstreamRouteErrorOptions extends UpstreamErrorOptions {
  attempts: readonly AttemptRecord[];
}

/** An upstream failure that ended a routed request, after whatever retries and fallbacks applied. */
export class UpstreamRouteError extends UpstreamError {
  readonly attempts: readonly AttemptRecord[];

  constructor(message: string, options: UpstreamRouteErrorOptions) {
    super(message, options);
    this.name = 'UpstreamRouteError';
    this.attempts = options.attempts;
  }

  /** The same failure, with the trail attached (message, kind, status and Retry-After unchanged). */
  static wrap(error: UpstreamError, attempts: readonly AttemptRecord[], message = error.message): UpstreamRouteError {
    return new UpstreamRouteError(message, {
      provider: error.provider,
      failure: error.failure,
      status: error.status,
      upstreamType: error.upstreamType,
      retryAfterSeconds: error.retryAfterSeconds,
      cause: error,
      attempts,
    });
  }
}
