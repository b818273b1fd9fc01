// Triton's API groups on gRPC: each GRPCInferenceService method names its group where it is registered (as server
// src/grpc/grpc_server.cc files them); a restricted group's call without the master key or Triton's metadata is refused.
import type { ApiGroup, ApiGroupGuard } from '../core/api-groups.ts';
import { readMetadata } from './grpc-caller.ts';
import type { CallMetadata } from './grpc-call-metadata.ts';
import { convertErrorToServiceError, GrpcCode, type GrpcStatus } from './map-grpc-status.ts';

/** Undefined when the call may use `group`; else the status to answer. */
export function checkGrpcApiGroup(guard: ApiGroupGuard | undefined, group: ApiGroup, metadata: CallMetadata): GrpcStatus | undefined {
  if (guard === undefined || !guard.isRestricted(group)) return undefined;
  const refusal = guard.check(group, (name) => readMetadata(metadata, name));
  if (refusal === undefined) return undefined;
  // Triton's own status and words for its restricted-protocol metadata (grpc_server.cc): UNAVAILABLE.
  if ('kind' in refusal) return { code: GrpcCode.UNAVAILABLE, details: `This protocol is restricted, expecting header '${refusal.header}'` };
  return convertErrorToServiceError(refusal);
}
