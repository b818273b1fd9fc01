// A KServe v2 HTTP infer response body: the JSON object, then (binary tensor data extension) the
// binary outputs' bytes in output order, and the Inference-Header-Content-Length to send with them.
import { internal } from '../errors.ts';
import type { Parameters, Tensor } from '../tensor.ts';
import { computeTensorByteSize, convertTensorDataToBinary, describeTensorDataMismatch } from './kserve-binary-tensor.ts';
import type { DecodedRequestedOutput } from './kserve-infer-request.ts';
import { convertTensorDataToJsonText } from './kserve-json-tensor.ts';

export interface InferResponseContent {
  modelName: string;
  modelVersion: number | string;
  /** Echoed when non-empty (Triton leaves "id" out otherwise). */
  id: string;
  /** Written in this order; the caller has already picked the requested ones (and classified them). */
  outputs: readonly Tensor[];
  parameters?: Parameters;
}

/** What of the request decides JSON or binary per output. */
export interface InferResponseRequestView {
  outputs: readonly Pick<DecodedRequestedOutput, 'name' | 'binaryData'>[];
  /** The request's `binary_data_output` (true for the raw form). */
  binaryDataOutput: boolean;
  /** Outputs written to a shared memory region: name, datatype and shape only, as Triton writes them. */
  sharedMemoryOutputs?: ReadonlySet<string>;
}

export interface InferResponseBody {
  /** JSON, followed by the binary sections when there are any. */
  body: Buffer;
  /** Inference-Header-Content-Length to send, or undefined when the body is JSON only. */
  headerLength: number | undefined;
  contentType: 'application/json' | 'application/octet-stream';
}

/**
 * Builds the response body. An output is binary when its request entry says `binary_data: true`,
 * or says nothing and the request default (`binary_data_output`, or `allBinary`) is true.
 * Numeric binary outputs are not copied until the final concatenation into `body`.
 */
export function createInferResponseBody(content: InferResponseContent, request: InferResponseRequestView, allBinary = false): InferResponseBody {
  const defaultBinary = allBinary || request.binaryDataOutput;
  const chosen = new Map<string, boolean>();
  for (const o of request.outputs) if (o.binaryData !== undefined) chosen.set(o.name, o.binaryData);

  // Key order as Triton writes it: id (when set), model_name, model_version, parameters, outputs.
  let json = content.id === '' ? '{' : `{"id":${JSON.stringify(content.id)},`;
  json += `"model_name":${JSON.stringify(content.modelName)},"model_version":${JSON.stringify(String(content.modelVersion))}`;
  if (content.parameters !== undefined && Object.keys(content.parameters).length > 0) {
    json += `,"parameters":${JSON.stringify(content.parameters)}`;
  }
  json += ',"outputs":[';
  const sections: Uint8Array[] = [];
  let sectionBytes = 0;
  let anyBinary = false;
  content.outputs.forEach((tensor, i) => {
    const mismatch = describeTensorDataMismatch(tensor);
    if (mismatch !== undefined) {
      throw internal(`Failed to write output '${tensor.name}' of model '${content.modelName}': ${mismatch}`);
    }
    if (i > 0) json += ',';
    json += `{"name":${JSON.stringify(tensor.name)},"datatype":"${tensor.datatype}","shape":[${tensor.shape.join(',')}]`;
    if (request.sharedMemoryOutputs?.has(tensor.name)) {
      json += '}';
    } else if (chosen.get(tensor.name) ?? defaultBinary) {
      anyBinary = true;
      const size = computeTensorByteSize(tensor);
      json += `,"parameters":{"binary_data_size":${size}}}`;
      if (size > 0) {
        sections.push(convertTensorDataToBinary(tensor));
        sectionBytes += size;
      }
    } else {
      json += `,"data":${convertTensorDataToJsonText(tensor)}}`;
    }
  });
  json += ']}';

  if (!anyBinary) return { body: Buffer.from(json, 'utf8'), headerLength: undefined, contentType: 'application/json' };
  // One allocation for the whole body: the JSON is written straight into it, then the sections copied once.
  const headLength = Buffer.byteLength(json, 'utf8');
  const body = Buffer.allocUnsafe(headLength + sectionBytes);
  let at = body.write(json, 0, headLength, 'utf8');
  for (const section of sections) {
    body.set(section, at);
    at += section.byteLength;
  }
  return { body, headerLength: headLength, contentType: 'application/octet-stream' };
}
