// The tensors `herd bench` sends: one per model input, shaped from metadata (+ --shape for variable
// dims) with the batch dim set to -b, filled with random or zero data of the input's datatype.
import { convertFloatToBf16Bits, convertFloatToHalfBits } from '../../core/codecs/fp16.ts';
import { isDataType, type DataType } from '../../core/datatype.ts';
import { invalidArg, unsupported } from '../../core/errors.ts';
import { allocateTensorData, elementCount, type Tensor, type TensorData } from '../../core/tensor.ts';
import type { ModelConfigDocument, ModelMetadata } from '../../client/kserve-types.ts';

export type InputDataKind = 'random' | 'zero';

export interface BenchInputSpec {
  metadata: ModelMetadata;
  config: ModelConfigDocument;
  batchSize: number;
  /** --shape overrides: input name → dims without the batch dim. */
  shapes: ReadonlyMap<string, readonly number[]>;
  inputData: InputDataKind;
  /** Characters per BYTES element. */
  stringLength: number;
  random: () => number;
}

/** Random integers stay in [0, 100): valid as indices or ids for most models, and in range for every integer type. */
const INTEGER_SPAN = 100;
const STRING_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ';

export function createBenchInputs(spec: BenchInputSpec): Tensor[] {
  const { metadata, config, batchSize } = spec;
  const model = metadata.name;
  if (config.sequence_batching !== undefined) {
    throw unsupported(`model '${model}' uses sequence batching; herd bench does not drive sequences yet`);
  }
  if (config.model_transaction_policy?.decoupled === true) {
    throw unsupported(`model '${model}' is decoupled (several responses per request); herd bench measures one response per request`);
  }
  const maxBatch = config.max_batch_size;
  if (maxBatch === 0 && batchSize > 1) {
    throw invalidArg(`model '${model}' does not support batching (max_batch_size 0): -b must be 1, got ${batchSize}`);
  }
  if (maxBatch > 0 && batchSize > maxBatch) {
    throw invalidArg(`-b ${batchSize} exceeds the max_batch_size ${maxBatch} of model '${model}'`);
  }
  const optional = new Set(config.input.filter((i) => i.optional === true).map((i) => i.name));
  const names = new Set(metadata.inputs.map((i) => i.name));
  for (const name of spec.shapes.keys()) {
    if (!names.has(name)) {
      throw invalidArg(`--shape names '${name}', which is not an input of model '${model}' (inputs: ${[...names].join(', ')})`);
    }
  }

  const tensors: Tensor[] = [];
  for (const input of metadata.inputs) {
    // Optional inputs are left out unless the user shaped them: a benchmark should not guess their dims.
    if (optional.has(input.name) && !spec.shapes.has(input.name)) continue;
    if (!isDataType(input.datatype)) {
      throw unsupported(`input '${input.name}' of model '${model}' has datatype ${input.datatype}, which herd bench cannot generate`);
    }
    const dims = maxBatch > 0 ? input.shape.slice(1) : [...input.shape];
    const shape = resolveDims(input.name, dims, spec.shapes.get(input.name));
    const fullShape = maxBatch > 0 ? [batchSize, ...shape] : shape;
    const count = elementCount(fullShape);
    tensors.push({
      name: input.name,
      datatype: input.datatype,
      shape: fullShape,
      data: spec.inputData === 'zero' ? createZeroData(input.datatype, count, spec.stringLength) : createRandomData(input.datatype, count, spec),
    });
  }
  if (tensors.length === 0) throw invalidArg(`model '${model}' has no required inputs to send`);
  return tensors;
}

function resolveDims(name: string, dims: readonly number[], override: readonly number[] | undefined): number[] {
  const shown = `[${dims.join(',')}]`;
  if (override === undefined) {
    if (dims.some((d) => d < 0)) {
      throw invalidArg(`input '${name}' has variable dims ${shown}: give its shape with --shape ${name}:${dims.map((d) => (d < 0 ? 'N' : d)).join(',')} (without the batch dim)`);
    }
    return [...dims];
  }
  if (override.length !== dims.length) {
    throw invalidArg(`--shape ${name}:${override.join(',')} has ${override.length} dims but input '${name}' has ${dims.length}: ${shown} (without the batch dim)`);
  }
  override.forEach((d, i) => {
    const fixed = dims[i] as number;
    if (fixed >= 0 && fixed !== d) {
      throw invalidArg(`--shape ${name}:${override.join(',')} does not fit input '${name}' dims ${shown}: dim ${i} is fixed at ${fixed}`);
    }
  });
  return [...override];
}

function createZeroData(datatype: DataType, count: number, stringLength: number): TensorData {
  if (datatype !== 'BYTES') return allocateTensorData(datatype, count);
  return Array.from({ length: count }, () => new Uint8Array(stringLength).fill(0x30)); // '0' characters
}

function createRandomData(datatype: DataType, count: number, spec: BenchInputSpec): TensorData {
  const { random } = spec;
  const int = () => Math.floor(random() * INTEGER_SPAN);
  const data = allocateTensorData(datatype, count);
  switch (datatype) {
    case 'BYTES': {
      const out = data as Uint8Array[];
      for (let i = 0; i < count; i++) {
        const bytes = new Uint8Array(spec.stringLength);
        for (let j = 0; j < bytes.length; j++) bytes[j] = STRING_ALPHABET.charCodeAt(Math.floor(random() * STRING_ALPHABET.length));
        out[i] = bytes;
      }
      return out;
    }
    case 'BOOL': {
      const out = data as Uint8Array;
      for (let i = 0; i < count; i++) out[i] = random() < 0.5 ? 0 : 1;
      return out;
    }
    case 'FP16':
    case 'BF16': {
      const out = data as Uint16Array;
      const convert = datatype === 'FP16' ? convertFloatToHalfBits : convertFloatToBf16Bits;
      for (let i = 0; i < count; i++) out[i] = convert(random());
      return out;
    }
    case 'FP32':
    case 'FP64': {
      const out = data as Float32Array | Float64Array;
      for (let i = 0; i < count; i++) out[i] = random();
      return out;
    }
    case 'INT64':
    case 'UINT64': {
      const out = data as BigInt64Array | BigUint64Array;
      for (let i = 0; i < count; i++) out[i] = BigInt(int());
      return out;
    }
    default: {
      const out = data as Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array;
      for (let i = 0; i < count; i++) out[i] = int();
      return out;
    }
  }
}
