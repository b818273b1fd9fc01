// The shared_memory_region / _offset / _byte_size parameters of a gRPC input or output, checked with
// the messages of Triton's ParseSharedMemoryParams.
import { invalidArg } from '../core/errors.ts';
import type { SharedMemoryRef } from '../serving/shared-memory/system-shared-memory-registry.ts';
import type { ParameterMap } from './grpc-messages.ts';

export function parseSharedMemoryParams(tensorName: string, params: ParameterMap): SharedMemoryRef | undefined {
  const region = params['shared_memory_region'];
  const offset = params['shared_memory_offset'];
  const size = params['shared_memory_byte_size'];
  if (region === undefined) {
    if (offset !== undefined) throw invalidArg(`'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor '${tensorName}'`);
    if (size !== undefined) throw invalidArg(`'shared_memory_byte_size' can not be specified without 'shared_memory_region' parameter for tensor '${tensorName}'`);
    return undefined;
  }
  if (region.parameter_choice !== 'string_param') throw invalidArg(`invalid value type for 'shared_memory_region' parameter for tensor '${tensorName}', expected string_param.`);
  if (offset !== undefined && offset.parameter_choice !== 'int64_param') {
    throw invalidArg(`invalid value type for 'shared_memory_offset' parameter for tensor '${tensorName}', expected int64_param.`);
  }
  if (size === undefined) throw invalidArg(`'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '${tensorName}'`);
  if (size.parameter_choice !== 'int64_param') throw invalidArg(`invalid value type for 'shared_memory_byte_size' parameter for tensor '${tensorName}', expected int64_param.`);
  return { region: region.string_param ?? '', offset: Number(offset?.int64_param ?? 0), byteSize: Number(size.int64_param ?? 0) };
}
