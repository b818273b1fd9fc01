// `--shared-memory system`: as perf_analyzer does it, each input's bytes go once into a region of its
// own under /dev/shm (made here, as tritonclient.utils.shared_memory makes them) and each output gets a
// region the server writes into; requests then carry only references.
import { rmSync, writeFileSync } from 'node:fs';
import { convertTensorDataToBinary } from '../../core/codecs/kserve-binary-tensor.ts';
import { elementByteSize, isDataType } from '../../core/datatype.ts';
import { elementCount } from '../../core/tensor.ts';
import type { InferInput, ModelMetadata, RequestedOutput, SharedMemoryPlacement } from '../../client/kserve-types.ts';
import type { BenchTransport } from './bench-transport.ts';

export interface BenchSharedMemory {
  inputsInSharedMemory: Record<string, SharedMemoryPlacement>;
  outputs: RequestedOutput[];
  /** Unregisters the regions and removes their files. */
  release(): Promise<void>;
}

export interface SharedMemoryPlan {
  inputs: readonly InferInput[];
  metadata: ModelMetadata;
  /** The batch dim to put in outputs' shapes (undefined: the model does not batch). */
  batchSize: number | undefined;
  /** Bytes per output region when the output's size is not known in advance (--output-shared-memory-size). */
  outputByteSize: number;
  shmDirectory?: string;
}

export async function placeInSystemSharedMemory<R extends { readonly body: Buffer }>(transport: BenchTransport<R>, plan: SharedMemoryPlan): Promise<BenchSharedMemory> {
  const directory = plan.shmDirectory ?? '/dev/shm';
  const registered: string[] = [];
  const files: string[] = [];
  const release = async (): Promise<void> => {
    for (const name of registered) await transport.unregisterSystemSharedMemory(name).catch(() => undefined);
    for (const file of files) rmSync(file, { force: true });
  };
  const create = async (name: string, bytes: Uint8Array): Promise<SharedMemoryPlacement> => {
    const key = `/${name}`;
    const file = `${directory}${key}`;
    writeFileSync(file, bytes);
    files.push(file);
    await transport.registerSystemSharedMemory(name, key, bytes.byteLength);
    registered.push(name);
    return { region: name, offset: 0, byteSize: bytes.byteLength };
  };
  const prefix = `herd_bench_${process.pid}`;
  try {
    const inputsInSharedMemory: Record<string, SharedMemoryPlacement> = {};
    for (const [i, input] of plan.inputs.entries()) inputsInSharedMemory[input.name] = await create(`${prefix}_input${i}`, convertTensorDataToBinary(input));
    const outputs: RequestedOutput[] = [];
    for (const [i, output] of plan.metadata.outputs.entries()) {
      const size = computeOutputByteSize(output.datatype, output.shape, plan.batchSize) ?? plan.outputByteSize;
      outputs.push({ name: output.name, sharedMemory: await create(`${prefix}_output${i}`, new Uint8Array(size)) });
    }
    return { inputsInSharedMemory, outputs, release };
  } catch (err) {
    await release();
    throw err;
  }
}

/** An output's size when its datatype and dims fix it; undefined for BYTES and variable dims. */
export function computeOutputByteSize(datatype: string, shape: readonly number[], batchSize: number | undefined): number | undefined {
  if (!isDataType(datatype)) return undefined;
  const elementBytes = elementByteSize(datatype);
  const dims = batchSize === undefined ? shape : [batchSize, ...shape.slice(1)];
  if (elementBytes === undefined || dims.some((d) => d < 0)) return undefined;
  return elementCount(dims) * elementBytes;
}
