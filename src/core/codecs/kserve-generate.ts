// Triton's generate extension (server src/http_server.cc: ConvertGenerateRequest, ExactMappingInput,
// FinalizeResponse): a flat JSON object in, a flat JSON object out. A top-level key, or a key inside
// `parameters`, that names a model input becomes that tensor; every other key becomes a request parameter.
// Answers are one object per response: id (when given), model_name, model_version, the response's
// parameters and its outputs, in key order; a single-element output is written as a scalar.
import type { DataType } from '../datatype.ts';
import { HerdError, invalidArg } from '../errors.ts';
import { elementCount, type Parameters, type Tensor } from '../tensor.ts';
import { convertTensorToJsonData, parseJsonTensorData, type JsonTensorValue } from './kserve-json-tensor.ts';

/** An input as model metadata reports it (batch dim included as -1). */
export interface GenerateInputSpec {
  name: string;
  datatype: DataType;
  shape: readonly number[];
}

export interface DecodedGenerateRequest {
  id: string;
  parameters: Parameters;
  inputs: Tensor[];
}

const utf8 = new TextEncoder();

/** The generate request body (already parsed JSON; an empty body is `{}`) to an inference request. */
export function parseGenerateRequest(body: unknown, inputs: readonly GenerateInputSpec[], maxInputSize: number): DecodedGenerateRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidArg('generate request must be a JSON object');
  const document = body as Record<string, unknown>;
  const id = document['id'];
  if (id !== undefined && typeof id !== 'string') throw invalidArg("Unable to parse 'id': expected a string");
  const byName = new Map(inputs.map((i) => [i.name, i]));
  const out: DecodedGenerateRequest = { id: id ?? '', parameters: {}, inputs: [] };
  const consumed = { bytes: 0 };
  for (const [key, value] of Object.entries(document)) {
    if (key === 'id') continue;
    if (key === 'parameters') {
      if (byName.has(key)) throw invalidArg("Keyword 'parameters' for nested schema also given as input tensor name");
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidArg("Expected JSON object for keyword: 'parameters'");
      for (const [inner, innerValue] of Object.entries(value as Record<string, unknown>)) {
        try {
          mapEntry(inner, innerValue, byName, out, consumed, maxInputSize);
        } catch (err) {
          if (err instanceof HerdError) throw new HerdError(err.code, `Converting keyword: 'parameters': ${err.message}`);
          throw err;
        }
      }
      continue;
    }
    mapEntry(key, value, byName, out, consumed, maxInputSize);
  }
  return out;
}

function mapEntry(
  key: string,
  value: unknown,
  byName: ReadonlyMap<string, GenerateInputSpec>,
  out: DecodedGenerateRequest,
  consumed: { bytes: number },
  maxInputSize: number,
): void {
  const spec = byName.get(key);
  if (!spec) {
    if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') {
      out.parameters[key] = value;
      return;
    }
    throw invalidArg(`parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`);
  }
  const values = Array.isArray(value) ? value : [value];
  const bytes =
    spec.datatype === 'BYTES' ? values.reduce<number>((sum, v) => sum + (typeof v === 'string' ? utf8.encode(v).length + 4 : 0), 0) : values.length * byteWidth(spec.datatype);
  if (bytes + consumed.bytes > maxInputSize) {
    throw invalidArg(
      `request size of ${consumed.bytes} bytes with input '${key}' of size ${bytes} bytes exceeds the maximum allowed input size of ${maxInputSize}. Use --http-max-input-size to increase the limit.`,
    );
  }
  consumed.bytes += bytes;
  const shape = fitShape(key, values.length, spec.shape);
  out.inputs.push({ name: key, datatype: spec.datatype, shape, data: parseJsonTensorData(values, { name: key, datatype: spec.datatype, shape }) });
}

/**
 * Triton's two passes: fixed dims take their share of the element count, the innermost dynamic dim
 * the rest, other dynamic dims 1.
 */
function fitShape(name: string, count: number, metadataShape: readonly number[]): number[] {
  const shape = [...metadataShape];
  let remaining = count;
  const fail = () => invalidArg(`The schema can not convert input '${name}' to tensor with proper shape`);
  for (const d of shape) {
    if (d === -1) continue;
    if (d === 0 || remaining % d !== 0) throw fail();
    remaining /= d;
  }
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] === -1) {
      shape[i] = remaining;
      remaining = 1;
    }
  }
  if (remaining !== 1) throw fail();
  return shape;
}

function byteWidth(datatype: DataType): number {
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
    case 'INT8':
      return 1;
    case 'UINT16':
    case 'INT16':
    case 'FP16':
    case 'BF16':
      return 2;
    case 'UINT32':
    case 'INT32':
    case 'FP32':
      return 4;
    default:
      return 8;
  }
}

export interface GenerateAnswerView {
  id: string;
  modelName: string;
  modelVersion: number;
  outputs: readonly Tensor[];
  parameters?: Parameters;
}

/** One response as the generate object; keys in byte order, as Triton's std::map emits them. */
export function createGenerateResponse(answer: GenerateAnswerView): Record<string, JsonTensorValue | JsonTensorValue[]> {
  const entries = new Map<string, JsonTensorValue | JsonTensorValue[]>();
  if (answer.id !== '') entries.set('id', answer.id);
  entries.set('model_name', answer.modelName);
  entries.set('model_version', String(answer.modelVersion));
  for (const [name, value] of Object.entries(answer.parameters ?? {})) if (!entries.has(name)) entries.set(name, value);
  for (const tensor of answer.outputs) {
    if (entries.has(tensor.name)) continue;
    const data = convertTensorToJsonData(tensor);
    entries.set(tensor.name, elementCount(tensor.shape) === 1 ? (data[0] as JsonTensorValue) : data);
  }
  const out: Record<string, JsonTensorValue | JsonTensorValue[]> = {};
  for (const key of [...entries.keys()].sort(compareBytes)) out[key] = entries.get(key) as JsonTensorValue | JsonTensorValue[];
  return out;
}

function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
