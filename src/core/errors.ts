// One error taxonomy for all of Herd. Domain code throws HerdError; each transport maps the code
// to its own status (KServe HTTP, gRPC, OpenAI) in exactly one place.

export type ErrorCode =
  | 'INVALID_ARG'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'UNSUPPORTED'
  | 'ALREADY_EXISTS'
  | 'INTERNAL'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'RATE_LIMITED'
  | 'BUDGET_EXCEEDED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_RATE_LIMITED';

export interface HerdErrorOptions {
  cause?: unknown;
  /** OpenAI-style `param` naming the offending field, where there is one. */
  param?: string;
  /** Seconds a client should wait before retrying (RATE_LIMITED, UNAVAILABLE). */
  retryAfterSeconds?: number;
}

export class HerdError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: HerdErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HerdError';
    this.code = code;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const invalidArg = (message: string, options?: HerdErrorOptions) => new HerdError('INVALID_ARG', message, options);
export const notFound = (message: string, options?: HerdErrorOptions) => new HerdError('NOT_FOUND', message, options);
export const unavailable = (message: string, options?: HerdErrorOptions) => new HerdError('UNAVAILABLE', message, options);
export const unsupported = (message: string, options?: HerdErrorOptions) => new HerdError('UNSUPPORTED', message, options);
export const internal = (message: string, options?: HerdErrorOptions) => new HerdError('INTERNAL', message, options);

/** Any thrown value as a HerdError; unknown errors become INTERNAL with their message kept. */
export function toHerdError(err: unknown): HerdError {
  if (err instanceof HerdError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new HerdError('INTERNAL', message, { cause: err });
}
