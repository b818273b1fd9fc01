// The one mapping from Herd's error taxonomy to gRPC status codes, as Triton's GrpcStatusUtil::CodeToStatus
// maps its error kinds; the message is the one HTTP answers.
import { status as Status, type ServiceError } from '@grpc/grpc-js';
import { toHerdError, type ErrorCode, type HerdError } from '../core/errors.ts';

const STATUS: Record<ErrorCode, Status> = {
  INVALID_ARG: Status.INVALID_ARGUMENT,
  NOT_FOUND: Status.NOT_FOUND,
  PAYLOAD_TOO_LARGE: Status.RESOURCE_EXHAUSTED,
  UNAVAILABLE: Status.UNAVAILABLE,
  UNSUPPORTED: Status.UNIMPLEMENTED,
  ALREADY_EXISTS: Status.ALREADY_EXISTS,
  CANCELLED: Status.CANCELLED,
  UNKNOWN: Status.UNKNOWN,
  INTERNAL: Status.INTERNAL,
  UNAUTHENTICATED: Status.UNAUTHENTICATED,
  PERMISSION_DENIED: Status.PERMISSION_DENIED,
  RATE_LIMITED: Status.RESOURCE_EXHAUSTED,
  BUDGET_EXCEEDED: Status.RESOURCE_EXHAUSTED,
  UPSTREAM_ERROR: Status.UNAVAILABLE,
  UPSTREAM_TIMEOUT: Status.DEADLINE_EXCEEDED,
  UPSTREAM_UNAVAILABLE: Status.UNAVAILABLE,
  UPSTREAM_RATE_LIMITED: Status.RESOURCE_EXHAUSTED,
};

export function mapErrorCodeToGrpcStatus(code: ErrorCode): Status {
  return STATUS[code];
}

/** Any thrown value as the ServiceError grpc-js sends (code + details). */
export function convertErrorToServiceError(err: unknown): Partial<ServiceError> & { code: Status; details: string } {
  const herd: HerdError = toHerdError(err);
  return { code: STATUS[herd.code], details: herd.message, message: herd.message, name: 'ServiceError' };
}
