// One KServe infer exchange, bytes in and bytes out: shared by the Fastify route and the fast path
// so both answer identically (same checks, same order, same encoding). The caller resolves the model
// once (resolveInferModel) and the exchange runs on that handle.
import { convertTensorDataToBinary } from '../core/codecs/kserve-binary-tensor.ts';
import { parseInferRequestBody, type DecodedInferRequest } from '../core/codecs/kserve-infer-request.ts';
import { createInferResponseBody } from '../core/codecs/kserve-infer-response.ts';
import type { AbortLink } from '../core/abort-link.ts';
import { HerdError, invalidArg } from '../core/errors.ts';
import { parseModelVersion } from '../core/parse-model-version.ts';
import type { ChatCaller } from '../core/chat-port.ts';
import type { InferCall, RequestedOutput } from '../serving/infer-call.ts';
import { type InferTrace, startInferTrace, type ServingTracing } from '../serving/infer-trace.ts';
import { extractFromHeaders } from '../tracing/index.ts';
import type { InferenceService } from '../serving/inference-service.ts';
import { isDecoupledModel, type LoadedModel } from '../serving/repository/loaded-model.ts';
import type { SharedMemoryRef, SystemSharedMemoryRegistry } from '../serving/shared-memory/system-shared-memory-registry.ts';
import { checkJsonDepth } from './parse-json-body.ts';

export interface InferReply {
  body: Buffer;
  contentType: string;
  /** Inference-Header-Content-Length to send, when the body has binary sections. */
  headerLength: number | undefined;
}

/**
 * The model first, as Triton does: a request to an unknown model (or an unparsable version) says so,
 * whatever its body. The version is parsed here, once.
 */
export function resolveInferModel(inference: InferenceService, modelName: string, rawVersion: string | undefined): LoadedModel {
  return inference.resolve(modelName, parseVersion(rawVersion));
}

export async function runInferExchange(
  inference: InferenceService,
  shm: SystemSharedMemoryRegistry,
  model: LoadedModel,
  body: Buffer,
  headerLength: string | string[] | undefined,
  /** Who pays, for a model that spends (kserve-caller.ts). */
  caller?: ChatCaller,
  /** The request's trace when Triton's trace settings sampled it (the caller ends it once the answer is sent). */
  trace?: InferTrace,
  /** Fires when the client goes away before the answer (ClientGoneSignal): the request is cancelled. */
  signal?: AbortLink,
): Promise<InferReply> {
  if (isDecoupledModel(model)) {
    throw new HerdError('UNSUPPORTED', "HTTP end point doesn't support models with decoupled transaction policy");
  }
  const modelName = model.name;
  checkJsonDepth(body, jsonHeaderEnd(body, headerLength));
  const decoded = parseInferRequestBody(body, headerLength, { modelName, rawInput: model.config, readSharedMemory: (ref) => shm.read(ref) });
  const outputRegions = findOutputRegions(decoded, shm);
  const call: InferCall = {
    modelName,
    version: model.version,
    id: decoded.id,
    parameters: decoded.parameters,
    inputs: decoded.inputs,
    outputs: decoded.outputs.length === 0 ? NO_OUTPUTS : decoded.outputs.map(toRequestedOutput),
  };
  if (caller !== undefined) call.caller = caller;
  if (trace !== undefined) call.trace = trace;
  if (signal !== undefined) call.signal = signal;
  const answer = await inference.infer(call, model);
  trace?.responseComplete();
  if (outputRegions) {
    for (const tensor of answer.outputs) {
      const region = outputRegions.get(tensor.name);
      if (region) shm.write(region, tensor.name, convertTensorDataToBinary(tensor));
    }
  }
  const encoded = createInferResponseBody(answer, outputRegions ? { ...decoded, sharedMemoryOutputs: new Set(outputRegions.keys()) } : decoded);
  return { body: encoded.body, contentType: encoded.contentType, headerLength: encoded.headerLength };
}

const NO_OUTPUTS: RequestedOutput[] = [];

/** Where the JSON header ends: the whole body, or Inference-Header-Content-Length when valid (the codec refuses an invalid one). */
function jsonHeaderEnd(body: Buffer, headerLength: string | string[] | undefined): number {
  if (headerLength === undefined) return body.length;
  const n = Number(headerLength);
  return Number.isSafeInteger(n) && n >= 0 && n <= body.length ? n : 0;
}

/** Requested outputs to write into shared memory regions, checked before inference as Triton checks them. */
function findOutputRegions(decoded: DecodedInferRequest, shm: SystemSharedMemoryRegistry): Map<string, SharedMemoryRef> | undefined {
  let regions: Map<string, SharedMemoryRef> | undefined;
  for (const output of decoded.outputs) {
    const p = output.parameters;
    const region = p['shared_memory_region'];
    if (region === undefined) continue;
    if (p['classification'] !== undefined) throw invalidArg("Output can't set both 'shared_memory_region' and 'classification'");
    if (p['binary_data'] === true) throw invalidArg("Output can't set both 'shared_memory_region' and 'binary_data'");
    if (typeof region !== 'string') throw invalidArg("Unable to parse 'shared_memory_region'");
    const offset = p['shared_memory_offset'] ?? 0;
    const byteSize = p['shared_memory_byte_size'] ?? 0;
    if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) throw invalidArg("Unable to parse 'shared_memory_offset'");
    if (typeof byteSize !== 'number' || !Number.isSafeInteger(byteSize) || byteSize < 0) throw invalidArg("Unable to parse 'shared_memory_byte_size'");
    const ref = { region, offset, byteSize };
    shm.check(ref);
    (regions ??= new Map()).set(output.name, ref);
  }
  return regions;
}

function toRequestedOutput(o: DecodedInferRequest['outputs'][number]): RequestedOutput {
  // classification 0 means no classification, as in Triton.
  return o.classification ? { name: o.name, classCount: o.classification } : { name: o.name };
}

export function parseVersion(raw: string | undefined): number | undefined {
  return parseModelVersion(raw);
}

/**
 * The trace of an HTTP infer when its model's trace setting samples it; its parent is the request's W3C
 * traceparent/tracestate, which in OpenTelemetry mode makes it always traced.
 */
export function startHttpInferTrace(
  tracing: ServingTracing | undefined,
  model: LoadedModel,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  /** Monotonic ms when the request began arriving, when that was before now (HTTP_RECV_START). */
  receivedAt?: number,
): InferTrace | undefined {
  // Triton reads the context in OpenTelemetry mode only.
  const parent = tracing?.settings.mode === 'opentelemetry' ? extractFromHeaders(headers) : undefined;
  const trace = tracing === undefined ? undefined : startInferTrace(tracing, model.name, parent, receivedAt);
  trace?.capture('HTTP_RECV_START', receivedAt);
  return trace;
}

/** The answer was handed to the socket: HTTP_SEND_END, then the trace ends (a failure recorded on InferRequest). */
export function endHttpTrace(trace: InferTrace, error?: unknown): void {
  trace.capture('HTTP_SEND_END');
  trace.end(error);
}
