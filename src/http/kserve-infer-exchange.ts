// One KServe infer exchange, bytes in and bytes out: shared by the Fastify route and the fast path
// so both answer identically (same checks, same order, same encoding).
import { parseInferRequestBody, type DecodedInferRequest } from '../core/codecs/kserve-infer-request.ts';
import { createInferResponseBody } from '../core/codecs/kserve-infer-response.ts';
import { HerdError } from '../core/errors.ts';
import type { InferenceService, RequestedOutput } from '../serving/inference-service.ts';

export interface InferReply {
  body: Buffer;
  contentType: string;
  /** Inference-Header-Content-Length to send, when the body has binary sections. */
  headerLength: number | undefined;
}

export async function runInferExchange(
  inference: InferenceService, modelName: string, rawVersion: string | undefined, body: Buffer, headerLength: string | string[] | undefined,
): Promise<InferReply> {
  const version = parseVersion(rawVersion);
  // The model first, as Triton does: a request to an unknown model says so, whatever its body.
  const config = inference.config(modelName, version);
  if (config.model_transaction_policy?.decoupled === true) {
    throw new HerdError('UNSUPPORTED', "HTTP end point doesn't support models with decoupled transaction policy");
  }
  const decoded = parseInferRequestBody(body, headerLength, { modelName, rawInput: config });
  const answer = await inference.infer({
    modelName,
    version,
    id: decoded.id,
    parameters: decoded.parameters,
    inputs: decoded.inputs,
    outputs: decoded.outputs.length === 0 ? NO_OUTPUTS : decoded.outputs.map(toRequestedOutput),
  });
  const encoded = createInferResponseBody(answer, decoded);
  return { body: encoded.body, contentType: encoded.contentType, headerLength: encoded.headerLength };
}

const NO_OUTPUTS: RequestedOutput[] = [];

function toRequestedOutput(o: DecodedInferRequest['outputs'][number]): RequestedOutput {
  // classification 0 means no classification, as in Triton.
  return o.classification ? { name: o.name, classCount: o.classification } : { name: o.name };
}

export function parseVersion(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9]+$/.test(raw)) throw new HerdError('INVALID_ARG', `failed to parse model version '${raw}': versions are non-negative integers`);
  const version = Number(raw);
  if (!Number.isSafeInteger(version)) {
    throw new HerdError('INVALID_ARG', `failed to parse model version '${raw}': out of range (at most ${Number.MAX_SAFE_INTEGER})`);
  }
  return version;
}
