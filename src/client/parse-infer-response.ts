// The client side of a KServe v2 HTTP infer response: JSON header plus binary sections in output
// order, to tensors. Element decoding is core's codecs; a malformed answer is an INTERNAL error.
import { parseBinaryTensorData } from '../core/codecs/kserve-binary-tensor.ts';
import { LossyIntegerError, parseJsonTensorData } from '../core/codecs/kserve-json-tensor.ts';
import { parseLosslessJson } from '../core/codecs/lossless-json.ts';
import { isDataType } from '../core/datatype.ts';
import { type HerdError, internal } from '../core/errors.ts';
import { allocateTensorData, type Parameters, type Tensor } from '../core/tensor.ts';
import type { InferResult } from './kserve-types.ts';

/**
 * Decodes an infer response body. `headerLength` is the Inference-Header-Content-Length the server
 * sent (undefined: the whole body is JSON). Binary outputs are views on `body` where aligned.
 * Outputs named in `sharedMemoryOutputs` were written to a region: they come back without data.
 */
export function parseInferResponseBody(body: Buffer, headerLength: number | undefined, sharedMemoryOutputs?: ReadonlySet<string>): InferResult {
  if (headerLength !== undefined && (!Number.isSafeInteger(headerLength) || headerLength < 0 || headerLength > body.byteLength)) {
    throw internal(`malformed infer response: Inference-Header-Content-Length ${headerLength} outside the ${body.byteLength}-byte body`);
  }
  const jsonLength = headerLength ?? body.byteLength;
  const text = body.toString('utf8', 0, jsonLength);
  try {
    return convertResponseDocument(parseJson(text), body, jsonLength, sharedMemoryOutputs);
  } catch (err) {
    // An INT64/UINT64 output beyond 2^53 that JSON.parse rounded: read the header again, exactly.
    if (!(err instanceof LossyIntegerError)) throw wrapMalformed(err);
    try {
      return convertResponseDocument(parseLosslessJson(text), body, jsonLength, sharedMemoryOutputs);
    } catch (again) {
      throw wrapMalformed(again);
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Triton writes NaN/Infinity as bare tokens, which only the lossless reader accepts.
    return parseLosslessJson(text);
  }
}

function convertResponseDocument(document: unknown, body: Buffer, jsonLength: number, sharedMemoryOutputs: ReadonlySet<string> | undefined): InferResult {
  if (!isObject(document)) throw new Error('the document root is not an object');
  const outputsValue = document['outputs'];
  if (!Array.isArray(outputsValue)) throw new Error("'outputs' is not an array");
  let offset = jsonLength;
  const outputs = outputsValue.map((item: unknown, i): Tensor => {
    if (!isObject(item)) throw new Error(`outputs[${i}] is not an object`);
    const name = item['name'];
    const datatype = item['datatype'];
    const shapeValue = item['shape'];
    if (typeof name !== 'string') throw new Error(`outputs[${i}] has no name`);
    if (typeof datatype !== 'string' || !isDataType(datatype)) throw new Error(`output '${name}' has unknown datatype ${JSON.stringify(datatype)}`);
    if (!Array.isArray(shapeValue)) throw new Error(`output '${name}' has no shape`);
    const shape = shapeValue.map(Number);
    const params = isObject(item['parameters']) ? item['parameters'] : {};
    const size = params['binary_data_size'];
    if (size === undefined && item['data'] === undefined && sharedMemoryOutputs?.has(name) === true) return { name, datatype, shape, data: allocateTensorData(datatype, 0) };
    if (size === undefined) {
      return { name, datatype, shape, data: parseJsonTensorData(item['data'], { name, datatype, shape, role: 'output' }) };
    }
    const byteSize = Number(size);
    if (!Number.isSafeInteger(byteSize) || byteSize < 0 || offset + byteSize > body.byteLength) {
      throw new Error(`output '${name}' declares ${String(size)} binary bytes but ${body.byteLength - offset} remain`);
    }
    const bytes = body.subarray(offset, offset + byteSize);
    offset += byteSize;
    return { name, datatype, shape, data: parseBinaryTensorData(bytes, { name, datatype, shape }) };
  });
  if (offset !== body.byteLength) throw new Error(`${body.byteLength - offset} bytes follow the last binary output`);
  const modelVersion = document['model_version'];
  const id = document['id'];
  return {
    modelName: String(document['model_name'] ?? ''),
    modelVersion: modelVersion === undefined ? '' : String(modelVersion),
    id: typeof id === 'string' ? id : '',
    parameters: convertParameters(document['parameters']),
    outputs,
  };
}

function convertParameters(value: unknown): Parameters {
  if (!isObject(value)) return {};
  const out: Parameters = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
    else if (typeof v === 'bigint') out[key] = Number(v);
  }
  return out;
}

function wrapMalformed(err: unknown): HerdError {
  const message = err instanceof Error ? err.message : String(err);
  return internal(`malformed infer response: ${message}`, { cause: err });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
