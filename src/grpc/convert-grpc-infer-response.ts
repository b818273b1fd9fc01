// The serving side's InferAnswer to a ModelInferResponse as Triton writes it: every output in
// raw_output_contents, one entry per output (empty when the output went to a shared memory region).
import { convertTensorDataToBinary, describeTensorDataMismatch } from '../core/codecs/kserve-binary-tensor.ts';
import { internal } from '../core/errors.ts';
import type { InferAnswer } from '../serving/infer-call.ts';
import type { SharedMemoryRef, SystemSharedMemoryRegistry } from '../serving/shared-memory/system-shared-memory-registry.ts';
import { convertParametersToGrpc } from './convert-grpc-parameters.ts';
import type { ModelInferResponseMessage } from './grpc-messages.ts';

const EMPTY = new Uint8Array(0);

export function convertGrpcInferResponse(
  answer: InferAnswer,
  outputRegions: ReadonlyMap<string, SharedMemoryRef> | undefined,
  shm: SystemSharedMemoryRegistry,
): ModelInferResponseMessage {
  const outputs = new Array<ModelInferResponseMessage['outputs'][number]>(answer.outputs.length);
  const raw = new Array<Uint8Array>(answer.outputs.length);
  for (let i = 0; i < answer.outputs.length; i++) {
    const tensor = answer.outputs[i]!;
    const mismatch = describeTensorDataMismatch(tensor);
    if (mismatch) throw internal(mismatch);
    outputs[i] = { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape };
    const region = outputRegions?.get(tensor.name);
    const bytes = convertTensorDataToBinary(tensor);
    if (region) {
      shm.write(region, tensor.name, bytes);
      raw[i] = EMPTY;
    } else {
      raw[i] = bytes;
    }
  }
  return {
    model_name: answer.modelName,
    model_version: String(answer.modelVersion),
    id: answer.id,
    parameters: convertParametersToGrpc(answer.parameters),
    outputs,
    raw_output_contents: raw,
  };
}
