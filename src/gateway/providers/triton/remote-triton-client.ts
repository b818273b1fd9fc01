// The triton provider's client for a remote KServe/Triton server: model metadata and config by GET,
// then Triton's generate extension (generate_stream SSE for a decoupled model), or KServe infer JSON
// where the server answers generate with 404 (no generate extension).
import type { InferencePortAnswer, InferencePortModel, InferencePortRequest } from '../../../core/inference-port.ts';
import { convertTensorToJsonData, parseJsonTensorData } from '../../../core/codecs/kserve-json-tensor.ts';
import { isDataType } from '../../../core/datatype.ts';
import type { Tensor } from '../../../core/tensor.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { HttpUpstream } from '../http-upstream.ts';
import type { UpstreamErrorBody } from '../../protocol/upstream-error.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';
import type { TritonCallOptions, TritonModelClient } from './triton-model-client.ts';

export interface RemoteTritonOptions {
  provider: string;
  baseUrl: string;
  headers: Record<string, string>;
  /** Sent as a Bearer token when non-empty. */
  apiKey: string;
  timeoutMs: number;
  connections?: number;
}

/** How long a model's metadata and config are reused before they are read again. */
const DESCRIPTION_TTL_MS = 10_000;

/** KServe errors are `{"error": "<message>"}`. */
function parseKserveErrorBody(body: unknown): UpstreamErrorBody {
  return isJsonObject(body) && typeof body.error === 'string' ? { message: body.error } : {};
}

export function createRemoteTritonClient(options: RemoteTritonOptions): TritonModelClient {
  const { provider } = options;
  const upstream = createKserveUpstream(options);
  const described = new Map<string, { model: InferencePortModel; at: number }>();
  // Models whose server answered generate with 404: they are called through infer from then on.
  const noGenerate = new Set<string>();
  const modelPath = (model: string, version: number | undefined) => `/v2/models/${encodeURIComponent(model)}${version !== undefined ? `/versions/${version}` : ''}`;

  async function describe(model: string, version: number | undefined, call: TritonCallOptions): Promise<InferencePortModel | undefined> {
    const key = `${model}:${version ?? ''}`;
    const cached = described.get(key);
    if (cached && Date.now() - cached.at < DESCRIPTION_TTL_MS) return cached.model;
    const path = modelPath(model, version);
    let metadata: unknown;
    let config: unknown;
    try {
      [metadata, config] = await Promise.all([
        upstream.getJson({ path, signal: call.signal, timeoutMs: call.timeoutMs, traceParent: call.traceParent }),
        upstream.getJson({ path: `${path}/config`, signal: call.signal, timeoutMs: call.timeoutMs, traceParent: call.traceParent }),
      ]);
    } catch (err) {
      // Triton answers an unknown or unloaded model with 400 (Herd with 404): not there, so `unavailable`.
      if (err instanceof UpstreamError && err.status !== undefined && err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 403) {
        described.delete(key);
        return undefined;
      }
      throw err;
    }
    const result = convertDescription(upstream, model, metadata, config);
    described.set(key, { model: result, at: Date.now() });
    return result;
  }

  async function infer(request: InferencePortRequest, model: InferencePortModel, call: TritonCallOptions): Promise<InferencePortAnswer> {
    const path = modelPath(request.model, request.version);
    if (!noGenerate.has(path)) {
      try {
        const body = await upstream.postJson({
          path: `${path}/generate`,
          body: createGenerateBody(request),
          signal: call.signal,
          timeoutMs: call.timeoutMs,
          traceParent: call.traceParent,
        });
        return convertGenerateAnswer(upstream, request, model, body);
      } catch (err) {
        if (!(err instanceof UpstreamError && err.status === 404)) throw err;
        noGenerate.add(path);
      }
    }
    let body: unknown;
    try {
      body = await upstream.postJson({ path: `${path}/infer`, body: createInferBody(request), signal: call.signal, timeoutMs: call.timeoutMs, traceParent: call.traceParent });
    } catch (err) {
      if (!(err instanceof UpstreamError && err.status === 404)) throw err;
      // infer too says 404: the model went away since describe(), not the generate extension.
      noGenerate.delete(path);
      described.delete(`${request.model}:${request.version ?? ''}`);
      throw new UpstreamError(err.message, { provider, failure: 'unavailable', status: 404, cause: err });
    }
    return convertInferAnswer(upstream, request, body);
  }

  async function* stream(request: InferencePortRequest, model: InferencePortModel, call: TritonCallOptions): AsyncGenerator<InferencePortAnswer> {
    if (!model.decoupled) {
      yield await infer(request, model, call);
      return;
    }
    yield* streamGenerate(upstream, request, model, call, modelPath(request.model, request.version));
  }

  return { describe, infer, stream, close: () => upstream.close() };
}

function createKserveUpstream(options: RemoteTritonOptions): HttpUpstream {
  return new HttpUpstream({
    provider: options.provider,
    baseUrl: options.baseUrl,
    headers: { ...options.headers, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
    secrets: options.apiKey ? [options.apiKey] : [],
    parseErrorBody: parseKserveErrorBody,
    timeoutMs: options.timeoutMs,
    connections: options.connections,
  });
}

/** A decoupled model's answers over generate_stream SSE, one answer per event. */
async function* streamGenerate(
  upstream: HttpUpstream,
  request: InferencePortRequest,
  model: InferencePortModel,
  call: TritonCallOptions,
  path: string,
): AsyncGenerator<InferencePortAnswer> {
  const provider = upstream.provider;
  let events: AsyncGenerator<{ data: string }>;
  try {
    events = upstream.postSse({
      path: `${path}/generate_stream`,
      body: createGenerateBody(request),
      signal: call.signal,
      timeoutMs: call.timeoutMs,
      idleTimeoutMs: call.idleTimeoutMs,
      traceParent: call.traceParent,
    });
    for await (const event of events) {
      const data = upstream.parseJson(event.data, 'generate_stream event');
      if (isJsonObject(data) && typeof data.error === 'string') {
        throw new UpstreamError(`${provider}: model '${request.model}': ${upstream.safe(data.error)}`, { provider, failure: 'server_error' });
      }
      yield convertGenerateAnswer(upstream, request, model, data);
    }
  } catch (err) {
    if (err instanceof UpstreamError && err.status === 404) {
      throw new UpstreamError(`${provider}: model '${request.model}' is decoupled and the server has no generate_stream (Triton's generate extension), which streaming needs`, {
        provider,
        failure: 'invalid_request',
        status: 404,
        cause: err,
      });
    }
    throw err;
  }
}

function createGenerateBody(request: InferencePortRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (request.id !== undefined) body['id'] = request.id;
  for (const tensor of request.inputs) {
    const values = convertTensorToJsonData(tensor);
    body[tensor.name] = values.length === 1 ? values[0] : values;
  }
  if (request.parameters && Object.keys(request.parameters).length > 0) body['parameters'] = request.parameters;
  return body;
}

function createInferBody(request: InferencePortRequest): Record<string, unknown> {
  return {
    ...(request.id !== undefined ? { id: request.id } : {}),
    ...(request.parameters && Object.keys(request.parameters).length > 0 ? { parameters: request.parameters } : {}),
    inputs: request.inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape, data: convertTensorToJsonData(t) })),
    ...(request.outputs?.length ? { outputs: request.outputs.map((name) => ({ name })) } : {}),
  };
}

function modelVersion(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : NaN;
  return Number.isInteger(n) ? n : 0;
}

/** A generate answer: `{model_name, model_version, <output>: scalar | array, ...}`; unknown keys are ignored. */
function convertGenerateAnswer(upstream: HttpUpstream, request: InferencePortRequest, model: InferencePortModel, body: unknown): InferencePortAnswer {
  if (!isJsonObject(body)) throw upstream.malformed(`model '${request.model}': generate answer is not a JSON object`);
  const outputs: Tensor[] = [];
  for (const spec of model.outputs) {
    const value = body[spec.name];
    if (value === undefined || !isDataType(spec.datatype)) continue;
    const values = Array.isArray(value) ? value : [value];
    outputs.push(parseOutput(upstream, request.model, spec.name, spec.datatype, [values.length], values));
  }
  return { model: String(body.model_name ?? request.model), version: modelVersion(body.model_version), outputs };
}

function convertInferAnswer(upstream: HttpUpstream, request: InferencePortRequest, body: unknown): InferencePortAnswer {
  if (!isJsonObject(body) || !Array.isArray(body.outputs)) throw upstream.malformed(`model '${request.model}': infer answer has no outputs`);
  const outputs = body.outputs.map((o: unknown) => {
    if (!isJsonObject(o) || typeof o.name !== 'string' || typeof o.datatype !== 'string' || !isDataType(o.datatype) || !Array.isArray(o.shape)) {
      throw upstream.malformed(`model '${request.model}': an infer output is not {name, datatype, shape, data}`);
    }
    return parseOutput(upstream, request.model, o.name, o.datatype, o.shape as number[], o.data);
  });
  return { model: String(body.model_name ?? request.model), version: modelVersion(body.model_version), outputs };
}

function parseOutput(upstream: HttpUpstream, model: string, name: string, datatype: Tensor['datatype'], shape: number[], data: unknown): Tensor {
  try {
    return { name, datatype, shape, data: parseJsonTensorData(data, { name, datatype, shape, role: 'output' }) };
  } catch (err) {
    throw upstream.malformed(`model '${model}': output '${name}': ${upstream.safe((err as Error).message)}`, err);
  }
}

function convertDescription(upstream: HttpUpstream, model: string, metadata: unknown, config: unknown): InferencePortModel {
  const tensors = (list: unknown, what: string) => {
    if (!Array.isArray(list)) throw upstream.malformed(`model '${model}': metadata has no ${what}`);
    return list.map((t: unknown) => {
      if (!isJsonObject(t) || typeof t.name !== 'string' || typeof t.datatype !== 'string' || !Array.isArray(t.shape)) {
        throw upstream.malformed(`model '${model}': a metadata ${what} entry is not {name, datatype, shape}`);
      }
      return { name: t.name, datatype: t.datatype, shape: t.shape.map(Number) };
    });
  };
  if (!isJsonObject(metadata)) throw upstream.malformed(`model '${model}': metadata is not a JSON object`);
  const settings = isJsonObject(config) ? config : {};
  const policy = isJsonObject(settings.model_transaction_policy) ? settings.model_transaction_policy : {};
  const parameters: Record<string, string> = {};
  if (isJsonObject(settings.parameters)) {
    for (const [key, value] of Object.entries(settings.parameters)) {
      if (isJsonObject(value) && typeof value.string_value === 'string') parameters[key] = value.string_value;
    }
  }
  return {
    name: typeof metadata.name === 'string' ? metadata.name : model,
    versions: Array.isArray(metadata.versions) ? metadata.versions.map(Number) : [],
    inputs: tensors(metadata.inputs, 'inputs'),
    outputs: tensors(metadata.outputs, 'outputs'),
    maxBatchSize: typeof settings.max_batch_size === 'number' ? settings.max_batch_size : 0,
    decoupled: policy.decoupled === true,
    parameters,
  };
}
