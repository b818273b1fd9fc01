// The client side of a KServe v2 HTTP infer request: tensors to a body (JSON data, or a JSON header
// followed by binary sections). Element encoding is core's codecs; this file only lays out the document.
import { computeTensorByteSize, convertTensorDataToBinary, describeTensorDataMismatch } from '../core/codecs/kserve-binary-tensor.ts';
import { convertTensorDataToJsonText } from '../core/codecs/kserve-json-tensor.ts';
import { invalidArg } from '../core/errors.ts';
import type { Parameters } from '../core/tensor.ts';
import type { InferInput, RequestedOutput, SharedMemoryPlacement } from './kserve-types.ts';

export interface InferRequestBodyOptions {
  id?: string;
  /** Inputs as binary sections (default true). */
  binaryInputs?: boolean;
  /** Default for outputs: binary data (default true); sent as `binary_data_output`. */
  binaryOutputs?: boolean;
  outputs?: readonly RequestedOutput[];
  parameters?: Parameters;
  /** Inputs referenced in a shared memory region instead of carried in the body. */
  inputsInSharedMemory?: Readonly<Record<string, SharedMemoryPlacement>>;
}

export interface InferRequestBody {
  body: Buffer;
  /** The Inference-Header-Content-Length to send, or undefined when the body is JSON only. */
  headerLength: number | undefined;
  contentType: 'application/json' | 'application/octet-stream';
}

/**
 * Encodes one infer request. Numeric binary inputs are copied once, into the final body; the result
 * can be sent any number of times (a load generator encodes once and sends many).
 */
export function createInferRequestBody(inputs: readonly InferInput[], options: InferRequestBodyOptions = {}): InferRequestBody {
  const binaryInputs = options.binaryInputs ?? true;
  const binaryOutputs = options.binaryOutputs ?? true;
  const parameters: Parameters = { ...options.parameters };
  // Only written when true: a JSON-only request stays byte-identical to what curl users send.
  if (binaryOutputs) parameters['binary_data_output'] = true;

  let json = options.id !== undefined && options.id !== '' ? `{"id":${JSON.stringify(options.id)},` : '{';
  if (Object.keys(parameters).length > 0) json += `"parameters":${JSON.stringify(parameters)},`;
  json += '"inputs":[';
  const sections: Uint8Array[] = [];
  let sectionBytes = 0;
  inputs.forEach((tensor, i) => {
    const placement = options.inputsInSharedMemory?.[tensor.name];
    if (placement !== undefined) {
      if (i > 0) json += ',';
      json += `{"name":${JSON.stringify(tensor.name)},"datatype":"${tensor.datatype}","shape":[${tensor.shape.join(',')}],"parameters":${writeSharedMemoryParameters(placement)}}`;
      return;
    }
    const mismatch = describeTensorDataMismatch(tensor);
    if (mismatch !== undefined) throw invalidArg(`cannot encode input: ${mismatch}`);
    if (i > 0) json += ',';
    json += `{"name":${JSON.stringify(tensor.name)},"datatype":"${tensor.datatype}","shape":[${tensor.shape.join(',')}]`;
    if (binaryInputs) {
      const size = computeTensorByteSize(tensor);
      json += `,"parameters":{"binary_data_size":${size}}}`;
      sections.push(convertTensorDataToBinary(tensor));
      sectionBytes += size;
    } else {
      json += `,"data":${convertTensorDataToJsonText(tensor)}}`;
    }
  });
  json += ']';
  if (options.outputs !== undefined && options.outputs.length > 0) {
    json += `,"outputs":[${options.outputs.map(writeRequestedOutput).join(',')}]`;
  }
  json += '}';

  const head = Buffer.from(json, 'utf8');
  if (!binaryInputs || sections.length === 0) return { body: head, headerLength: undefined, contentType: 'application/json' };
  const body = Buffer.concat([head, ...sections], head.byteLength + sectionBytes);
  return { body, headerLength: head.byteLength, contentType: 'application/octet-stream' };
}

function writeRequestedOutput(output: RequestedOutput): string {
  const parameters: Parameters = {};
  if (output.binary !== undefined) parameters['binary_data'] = output.binary;
  if (output.classCount !== undefined) parameters['classification'] = output.classCount;
  const name = JSON.stringify(output.name);
  if (output.sharedMemory !== undefined) {
    const shm = writeSharedMemoryParameters(output.sharedMemory);
    return Object.keys(parameters).length === 0
      ? `{"name":${name},"parameters":${shm}}`
      : `{"name":${name},"parameters":{${JSON.stringify(parameters).slice(1, -1)},${shm.slice(1)}}`;
  }
  return Object.keys(parameters).length === 0 ? `{"name":${name}}` : `{"name":${name},"parameters":${JSON.stringify(parameters)}}`;
}

function writeSharedMemoryParameters(p: SharedMemoryPlacement): string {
  return `{"shared_memory_region":${JSON.stringify(p.region)},"shared_memory_offset":${p.offset},"shared_memory_byte_size":${p.byteSize}}`;
}
