// A serving-side HerdError (in process, or a remote server's HTTP status) as the UpstreamError the
// router reads: an unloaded model or a full queue is `unavailable`, so fallbacks to hosted APIs work.
import { type ErrorCode, HerdError, toHerdError } from '../../../core/errors.ts';
import { UpstreamError, type UpstreamFailure } from '../../protocol/upstream-error.ts';

const FAILURE_BY_CODE: Partial<Record<ErrorCode, UpstreamFailure>> = {
  NOT_FOUND: 'unavailable',
  UNAVAILABLE: 'unavailable',
  INVALID_ARG: 'invalid_request',
  UNSUPPORTED: 'invalid_request',
  PAYLOAD_TOO_LARGE: 'invalid_request',
  RATE_LIMITED: 'rate_limited',
  // An ensemble with an llm step reports its own upstream's failure.
  UPSTREAM_UNAVAILABLE: 'unavailable',
  UPSTREAM_TIMEOUT: 'timeout',
  UPSTREAM_RATE_LIMITED: 'rate_limited',
};

export function mapTritonError(provider: string, model: string, err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const error = err instanceof HerdError ? err : toHerdError(err);
  return new UpstreamError(`${provider}: model '${model}': ${error.message}`, {
    provider,
    failure: FAILURE_BY_CODE[error.code] ?? 'server_error',
    upstreamType: error.code,
    retryAfterSeconds: error.retryAfterSeconds,
    cause: error,
  });
}
