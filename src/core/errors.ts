// One error taxonomy for all of Herd. Domain code throws HerdError; each transport maps the code
// (and, where one is set, the reason) to its own status (KServe HTTP, gRPC, OpenAI) in exactly one place.
// docs/errors.md is the catalog; test/http/error-catalog.test.ts keeps it and the mappings in step.

export const ERROR_CODES = [
  'INVALID_ARG',
  'NOT_FOUND',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
  'CANCELLED',
  'UNKNOWN',
  'INTERNAL',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'RATE_LIMITED',
  'BUDGET_EXCEEDED',
  'PAYLOAD_TOO_LARGE',
  'UPSTREAM_ERROR',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_RATE_LIMITED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * A finer kind inside a code, set where the error is made, for transports whose wire format tells
 * such cases apart (OpenAI's `code`): a wrong key versus no key, a model the key may not use versus
 * an admin-only route. Transports never look at the message to decide.
 */
export const ERROR_REASONS = [
  'invalid_api_key',
  'key_rotated',
  'key_expired',
  'key_revoked',
  'key_blocked',
  'address_not_allowed',
  'model_not_allowed',
  'admin_only',
  'csrf_failed',
  'unknown_object',
] as const;

export type ErrorReason = (typeof ERROR_REASONS)[number];

export interface HerdErrorOptions {
  cause?: unknown;
  /** OpenAI-style `param` naming the offending field, where there is one. */
  param?: string;
  /** Seconds a client should wait before retrying (RATE_LIMITED, UNAVAILABLE). */
  retryAfterSeconds?: number;
  /** The finer kind, where the code alone does not say enough. */
  reason?: ErrorReason;
}

export class HerdError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly reason: ErrorReason | undefined;

  constructor(code: ErrorCode, message: string, options: HerdErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HerdError';
    this.code = code;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.reason = options.reason;
  }
}

export const invalidArg = (message: string, options?: HerdErrorOptions) => new HerdError('INVALID_ARG', message, options);
export const notFound = (message: string, options?: HerdErrorOptions) => new HerdError('NOT_FOUND', message, options);
export const unavailable = (message: string, options?: HerdErrorOptions) => new HerdError('UNAVAILABLE', message, options);
export const unsupported = (message: string, options?: HerdErrorOptions) => new HerdError('UNSUPPORTED', message, options);
export const internal = (message: string, options?: HerdErrorOptions) => new HerdError('INTERNAL', message, options);
/** A request whose client went away or cancelled it before its answer (Triton's CANCELLED). */
export const cancelled = (message = 'Request cancelled: the client went away or cancelled before its answer') => new HerdError('CANCELLED', message);

/** Any thrown value as a HerdError; unknown errors become INTERNAL with their message kept. */
export function toHerdError(err: unknown): HerdError {
  if (err instanceof HerdError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new HerdError('INTERNAL', message, { cause: err });
}
