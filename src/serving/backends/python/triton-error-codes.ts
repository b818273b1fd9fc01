// pb_utils.TritonError codes (TRITONSERVER_Error_Code) and Herd's error codes, both ways: a model's
// error response keeps its code to the client (HTTP and gRPC status as Triton maps it), and a BLS
// caller sees the code of the error Herd raised.
import type { ErrorCode } from '../../../core/errors.ts';

export const TRITON_ERROR_CODES = { UNKNOWN: 0, INTERNAL: 1, NOT_FOUND: 2, INVALID_ARG: 3, UNAVAILABLE: 4, UNSUPPORTED: 5, ALREADY_EXISTS: 6, CANCELLED: 7 } as const;

const HERD_BY_TRITON: readonly ErrorCode[] = ['UNKNOWN', 'INTERNAL', 'NOT_FOUND', 'INVALID_ARG', 'UNAVAILABLE', 'UNSUPPORTED', 'ALREADY_EXISTS', 'CANCELLED'];

/** A TritonError code as Herd's (the same name; a number outside Triton's list is INTERNAL, TritonError's default). */
export function mapTritonErrorCode(code: unknown): ErrorCode {
  return (typeof code === 'number' && HERD_BY_TRITON[code]) || 'INTERNAL';
}

/** Herd's code as the TritonError code a BLS caller sees; Herd's own codes fall to the nearest of Triton's. */
export function mapHerdErrorCode(code: ErrorCode): number {
  switch (code) {
    case 'PAYLOAD_TOO_LARGE':
      return TRITON_ERROR_CODES.INVALID_ARG;
    case 'RATE_LIMITED':
    case 'UPSTREAM_UNAVAILABLE':
      return TRITON_ERROR_CODES.UNAVAILABLE;
    default: {
      const index = HERD_BY_TRITON.indexOf(code);
      return index >= 0 ? index : TRITON_ERROR_CODES.INTERNAL;
    }
  }
}
