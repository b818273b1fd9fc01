// Triton's API groups on gRPC: each GRPCInferenceService method names its group where it is registered (as server
// src/grpc/grpc_server.cc files them); a restricted group's call without the master key or Triton's metadata is refused.
import { type Metadata, status as Status } from '@grpc/grpc-js';
import type { ApiGroup, ApiGroupGuard } from '../core/api-groups.ts';
import { convertErrorToServiceError } from './map-grpc-status.ts';
import { readMetadata } from './grpc-caller.ts';

/** What grpc-js sends for a refusal. */
export type GrpcRefusal = ReturnType<typeof convertErrorToServiceError>;

/** Undefined when the call may use `group`; else the status to answer. */
export function checkGrpcApiGroup(guard: ApiGroupGuard | undefined, group: ApiGroup, metadata: Metadata): GrpcRefusal | undefined {
  if (guard === undefined || !guard.isRestricted(group)) return undefined;
  const refusal = guard.check(group, (name) => readMetadata(metadata, name));
  if (refusal === undefined) return undefined;
  if ('kind' in refusal) {
    // Triton's own status and words for its restricted-protocol metadata (grpc_server.cc): UNAVAILABLE.
    const details = `This protocol is restricted, expecting header '${refusal.header}'`;
    return { code: Status.UNAVAILABLE, details, message: details, name: 'ServiceError' };
  }
  return convertErrorToServiceError(refusal);
}
