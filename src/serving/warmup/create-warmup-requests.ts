// Builds the requests of a model's warmup samples as Triton's GenerateWarmupData does: `batch_size`
// requests per sample, each of batch 1 (the batch dim only for batching models and real inputs), data
// from zeros, random bytes, or a file under the version's `warmup/` folder.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { elementByteSize, mapConfigTypeToDataType } from '../../core/datatype.ts';
import { invalidArg } from '../../core/errors.ts';
import { elementCount, type Tensor, type TensorData } from '../../core/tensor.ts';
import type { InferenceRequest } from '../backends/backend.ts';
import type { ModelConfig, ModelWarmup, ModelWarmupInput } from '../model-config/model-config.ts';

/** Triton's kWarmupDataFolder. */
export const WARMUP_DATA_FOLDER = 'warmup';

export interface WarmupSample {
  name: string;
  count: number;
  /** Executed together, as one batch, `count` times. */
  requests: InferenceRequest[];
}

/** Samples with batch_size 0 are skipped, as Triton skips them. Throws INVALID_ARG with Triton's messages. */
export function createWarmupSamples(config: ModelConfig, versionPath: string, version: number): WarmupSample[] {
  const samples: WarmupSample[] = [];
  for (const warmup of config.model_warmup) {
    if (warmup.batch_size === 0) continue;
    const limit = Math.max(1, config.max_batch_size);
    // Triton hands the backend the whole sample as one execution; its backends refuse a batch over the limit.
    if (warmup.batch_size > limit) {
      throw invalidArg(`warmup sample '${warmup.name}' has batch_size ${warmup.batch_size}, more than the model's maximum batch size ${limit}`);
    }
    const inputs = createSampleInputs(config, warmup, versionPath);
    const requests = Array.from(
      { length: warmup.batch_size },
      (_, i): InferenceRequest => ({
        id: `warmup_${warmup.name}_${i}`,
        modelName: config.name,
        modelVersion: version,
        inputs,
        requestedOutputs: [],
        parameters: {},
      }),
    );
    samples.push({ name: warmup.name, count: Math.max(1, warmup.count), requests });
  }
  return samples;
}

function createSampleInputs(config: ModelConfig, warmup: ModelWarmup, versionPath: string): Tensor[] {
  const known = new Set(config.input.map((i) => i.name));
  return Object.entries(warmup.inputs).map(([name, input]) => {
    const datatype = mapConfigTypeToDataType(input.data_type);
    if (!datatype) throw invalidArg(`warmup sample '${warmup.name}' input '${name}' has unsupported data type ${input.data_type}`);
    if (input.dims.some((d) => d < 0)) {
      throw invalidArg(`warmup setting expects all variable-size dimensions are specified for input '${name}'`);
    }
    const count = elementCount(input.dims);
    // Control inputs (sequence batching) carry no batch dim in Triton's warmup requests; original inputs of a batching model do.
    const shape = config.max_batch_size > 0 && known.has(name) ? [1, ...input.dims] : [...input.dims];
    return { name, datatype, shape, data: createData(warmup, name, input, datatype, count, versionPath) };
  });
}

function createData(warmup: ModelWarmup, name: string, input: ModelWarmupInput, datatype: Tensor['datatype'], count: number, versionPath: string): TensorData {
  const size = elementByteSize(datatype);
  if (input.input_data_file !== undefined) {
    const file = join(versionPath, WARMUP_DATA_FOLDER, input.input_data_file);
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      // The code, not the message: Node's message repeats the path.
      throw invalidArg(`warmup sample '${warmup.name}' input '${name}': cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (size === undefined) return parseLengthPrefixedStrings(bytes, count, warmup.name, name);
    if (bytes.length < count * size) {
      throw invalidArg(`warmup setting expects ${count * size} bytes, but the data provided from ${input.input_data_file} only has ${bytes.length} bytes`);
    }
    return viewAs(datatype, new Uint8Array(bytes.subarray(0, count * size)));
  }
  if (size === undefined) {
    // Triton uses zeros for BYTES random data too: 4 zero bytes per element, i.e. empty strings.
    return Array.from({ length: count }, () => new Uint8Array(0));
  }
  if (input.random_data) {
    const bytes = new Uint8Array(count * size);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
    // Herd's BOOL tensors hold 0/1; any other byte would not be a valid boolean.
    if (datatype === 'BOOL') for (let i = 0; i < bytes.length; i++) bytes[i] = (bytes[i] as number) & 1;
    return viewAs(datatype, bytes);
  }
  if (input.zero_data) return viewAs(datatype, new Uint8Array(count * size));
  throw invalidArg(`warmup setting expects input '${name}' to have input_data_type set`);
}

/** Triton's BYTES serialisation: each element a 4-byte little-endian length, then its bytes. */
function parseLengthPrefixedStrings(bytes: Buffer, count: number, sample: string, name: string): Uint8Array[] {
  const elements: Uint8Array[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw invalidArg(`warmup sample '${sample}' input '${name}': truncated length prefix at byte ${offset}`);
    const length = bytes.readUInt32LE(offset);
    offset += 4;
    if (offset + length > bytes.length)
      throw invalidArg(`warmup sample '${sample}' input '${name}': element ${elements.length} needs ${length} bytes, the file has ${bytes.length - offset} left`);
    elements.push(new Uint8Array(bytes.subarray(offset, offset + length)));
    offset += length;
  }
  if (elements.length !== count) {
    throw invalidArg(`warmup sample '${sample}' input '${name}': the data file holds ${elements.length} strings, the dims need ${count}`);
  }
  return elements;
}

/** A typed array over `bytes` (a fresh, aligned copy), little-endian as the wire format. */
function viewAs(datatype: Tensor['datatype'], bytes: Uint8Array): TensorData {
  const buffer = bytes.buffer;
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
      return bytes;
    case 'INT8':
      return new Int8Array(buffer);
    case 'UINT16':
    case 'FP16':
    case 'BF16':
      return new Uint16Array(buffer);
    case 'INT16':
      return new Int16Array(buffer);
    case 'UINT32':
      return new Uint32Array(buffer);
    case 'INT32':
      return new Int32Array(buffer);
    case 'UINT64':
      return new BigUint64Array(buffer);
    case 'INT64':
      return new BigInt64Array(buffer);
    case 'FP32':
      return new Float32Array(buffer);
    case 'FP64':
      return new Float64Array(buffer);
    case 'BYTES':
      throw new Error('BYTES has no fixed-size view');
  }
}
