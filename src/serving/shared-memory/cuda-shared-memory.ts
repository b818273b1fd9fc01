// CUDA shared memory on a server without GPUs, answered as a CPU-only tritonserver answers it:
// registering fails, the status lists nothing, unregistering finds nothing to do.
import { invalidArg, notFound } from '../../core/errors.ts';

export interface CudaSharedMemoryStatus {
  name: string;
  device_id: number;
  byte_size: number;
}

export function registerCudaSharedMemory(name: string): never {
  throw invalidArg(`failed to register CUDA shared memory region: '${name}', GPUs not supported`);
}

export function describeCudaSharedMemory(name?: string): CudaSharedMemoryStatus[] {
  if (name) throw notFound(`Unable to find cuda shared memory region: '${name}'`);
  return [];
}
