// The response cache key of one request: Triton hashes the model name, version and every input's name
// and bytes (inputs sorted by name); Herd also hashes datatypes, shapes and the requested outputs, so
// two requests share an entry only when their answers must be identical.
import { createHash } from 'node:crypto';
import { isBytesData, type Tensor } from '../../core/tensor.ts';

export interface CacheKeyRequest {
  modelName: string;
  modelVersion: number;
  inputs: readonly Tensor[];
  requestedOutputs: readonly string[];
}

const SEPARATOR = Buffer.from([0]);

export function createInferenceCacheKey(request: CacheKeyRequest): string {
  const hash = createHash('sha256');
  hash.update(`${request.modelName}\0${request.modelVersion}\0`);
  const inputs = [...request.inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const tensor of inputs) {
    hash.update(`${tensor.name}\0${tensor.datatype}\0${tensor.shape.join(',')}\0`);
    const data = tensor.data;
    if (isBytesData(data)) {
      const length = Buffer.alloc(4);
      for (const element of data) {
        length.writeUInt32LE(element.byteLength, 0);
        hash.update(length);
        hash.update(element);
      }
    } else {
      hash.update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    }
    hash.update(SEPARATOR);
  }
  hash.update([...request.requestedOutputs].sort().join('\0'));
  return hash.digest('hex');
}
