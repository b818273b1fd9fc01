// The one mapping from Herd's error taxonomy to KServe HTTP answers: `{"error": "..."}` with
// Triton's status codes (400 invalid argument, unknown model or existing name, 503 unavailable, 501 unsupported).
import type { ErrorCode } from '../core/errors.ts';

const STATUS: Record<ErrorCode, number> = {
  INVALID_ARG: 400,
  NOT_FOUND: 400,
  PAYLOAD_TOO_LARGE: 400,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  ALREADY_EXISTS: 400,
  INTERNAL: 500,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  RATE_LIMITED: 429,
  BUDGET_EXCEEDED: 429,
  UPSTREAM_ERROR: 502,
  UPSTREAM_TIMEOUT: 504,
  UPSTREAM_UNAVAILABLE: 503,
  UPSTREAM_RATE_LIMITED: 429,
};

export function mapErrorCodeToKserveStatus(code: ErrorCode): number {
  return STATUS[code];
}
