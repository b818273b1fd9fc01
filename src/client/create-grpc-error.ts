// gRPC statuses back to Herd's taxonomy (the inverse of Triton's CodeToStatus), keeping the server's message.
import { status as Status, type ServiceError } from '@grpc/grpc-js';
import { HerdError, type ErrorCode } from '../core/errors.ts';

export function mapGrpcStatusToErrorCode(code: number): ErrorCode {
  switch (code) {
    case Status.INVALID_ARGUMENT:
      return 'INVALID_ARG';
    case Status.NOT_FOUND:
      return 'NOT_FOUND';
    case Status.ALREADY_EXISTS:
      return 'ALREADY_EXISTS';
    case Status.CANCELLED:
      return 'CANCELLED';
    case Status.UNKNOWN:
      return 'UNKNOWN';
    case Status.UNIMPLEMENTED:
      return 'UNSUPPORTED';
    case Status.UNAVAILABLE:
    case Status.DEADLINE_EXCEEDED:
      return 'UNAVAILABLE';
    case Status.UNAUTHENTICATED:
      return 'UNAUTHENTICATED';
    case Status.PERMISSION_DENIED:
      return 'PERMISSION_DENIED';
    case Status.RESOURCE_EXHAUSTED:
      return 'RATE_LIMITED';
    default:
      return 'INTERNAL';
  }
}

/** A failed call as a HerdError: the status's details are the server's message; `grpcCode` keeps the status. */
export function createGrpcError(err: Partial<ServiceError>): HerdError & { grpcCode: number } {
  const code = typeof err.code === 'number' ? err.code : Status.UNKNOWN;
  const error = new HerdError(mapGrpcStatusToErrorCode(code), err.details || err.message || `gRPC call failed with status ${code}`, { cause: err });
  return Object.assign(error, { grpcCode: code });
}
