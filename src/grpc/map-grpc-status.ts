// The one mapping from Herd's error taxonomy to gRPC status codes, as Triton's GrpcStatusUtil::CodeToStatus
// maps its error kinds; the message is the one HTTP answers.
import { toHerdError, type ErrorCode } from '../core/errors.ts';

/** grpc's status codes (grpc/include/grpcpp/impl/status_code_enum.h), the ones Herd answers. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

const STATUS: Record<ErrorCode, number> = {
  INVALID_ARG: GrpcCode.INVALID_ARGUMENT,
  NOT_FOUND: GrpcCode.NOT_FOUND,
  PAYLOAD_TOO_LARGE: GrpcCode.RESOURCE_EXHAUSTED,
  UNAVAILABLE: GrpcCode.UNAVAILABLE,
  UNSUPPORTED: GrpcCode.UNIMPLEMENTED,
  ALREADY_EXISTS: GrpcCode.ALREADY_EXISTS,
  CANCELLED: GrpcCode.CANCELLED,
  UNKNOWN: GrpcCode.UNKNOWN,
  INTERNAL: GrpcCode.INTERNAL,
  UNAUTHENTICATED: GrpcCode.UNAUTHENTICATED,
  PERMISSION_DENIED: GrpcCode.PERMISSION_DENIED,
  RATE_LIMITED: GrpcCode.RESOURCE_EXHAUSTED,
  BUDGET_EXCEEDED: GrpcCode.RESOURCE_EXHAUSTED,
  UPSTREAM_ERROR: GrpcCode.UNAVAILABLE,
  UPSTREAM_TIMEOUT: GrpcCode.DEADLINE_EXCEEDED,
  UPSTREAM_UNAVAILABLE: GrpcCode.UNAVAILABLE,
  UPSTREAM_RATE_LIMITED: GrpcCode.RESOURCE_EXHAUSTED,
};

export function mapErrorCodeToGrpcStatus(code: ErrorCode): number {
  return STATUS[code];
}

/** A status to end a call with: a code of grpc's Status and its details. */
export interface GrpcStatus {
  code: number;
  details: string;
}

/** Any thrown value as the status it answers (code + details). */
export function convertErrorToServiceError(err: unknown): GrpcStatus {
  const herd = toHerdError(err);
  return { code: STATUS[herd.code], details: herd.message };
}
