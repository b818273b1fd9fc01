// The serving side's one entry point for transports: resolve the model (once per request: a transport
// that resolved it passes the handle on), validate the request against its config, schedule it, then
// shape the outputs (subset, classification). Decoupled models (several responses per request) answer
// through streamInfer.
import { HerdError, toHerdError } from '../core/errors.ts';
import type { Parameters, Tensor } from '../core/tensor.ts';
import type { ComputeDurations, InferenceRequest, InferenceResult, ResponseSender } from './backends/backend.ts';
import { classifyTensor } from './classification.ts';
import type { InferAnswer, InferCall, RequestedOutput } from './infer-call.ts';
import type { ModelTrace } from './infer-trace.ts';
import { submitTraced } from './trace-submit.ts';
import { ResponseStream, type InferStreamEvent } from './response-stream.ts';
import { createSequenceControls } from './scheduler/sequence-controls.ts';
import { createModelMetadata, type ModelMetadata } from './model-metadata.ts';
import { isDecoupledModel, type LoadedModel } from './repository/loaded-model.ts';
import type { ModelRepositoryManager } from './repository/model-repository-manager.ts';
import { convertCacheEntryToResponse, convertResponseToCacheEntry, type CachedResponse } from './response-cache/convert-cached-response.ts';
import { createInferenceCacheKey } from './response-cache/create-inference-cache-key.ts';
import type { InferenceResponseCache } from './response-cache/inference-response-cache.ts';
import type { ModelStatistics } from './stats.ts';
import { validateInferRequest } from './validate-infer-request.ts';

/** Shared by every request that asks for all outputs (most do): nothing downstream mutates it. */
const NO_OUTPUT_NAMES: readonly string[] = [];

export class InferenceService {
  /** `cache` is the server-wide response cache (--cache-config); models opt in with response_cache { enable: true }. */
  constructor(
    private readonly repository: ModelRepositoryManager,
    private readonly cache?: InferenceResponseCache,
  ) {}

  /**
   * The model version a request names, with Triton's errors (unknown model, no ready version, version not
   * ready). A transport resolves once and passes the handle to infer or streamInfer.
   */
  resolve(name: string, version?: number): LoadedModel {
    return this.repository.get(name, version);
  }

  /**
   * One request, one answer, on `model` when the caller resolved it, else on the model the call names.
   * A decoupled model answers UNSUPPORTED here: its responses need streamInfer.
   */
  infer(call: InferCall, model?: LoadedModel): Promise<InferAnswer> {
    if (model !== undefined) return this.inferOn(model, call);
    let resolved: LoadedModel;
    try {
      resolved = this.repository.get(call.modelName, call.version);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.inferOn(resolved, call);
  }

  /** A traced call's model trace starts and ends around the inference; an untraced one costs a property read. */
  private inferOn(model: LoadedModel, call: InferCall): Promise<InferAnswer> {
    if (call.trace === undefined) return this.runOn(model, call, undefined);
    const trace = call.trace.startModel(model.name, model.version, call.id);
    return this.runOn(model, call, trace).then(
      (answer) => {
        trace.end();
        return answer;
      },
      (err: unknown) => {
        trace.end(err);
        throw err;
      },
    );
  }

  private async runOn(model: LoadedModel, call: InferCall, trace: ModelTrace | undefined): Promise<InferAnswer> {
    if (isDecoupledModel(model)) {
      throw new HerdError('UNSUPPORTED', `model '${model.name}' has a decoupled transaction policy (several responses per request): use a streaming endpoint`);
    }
    const outputNames = call.outputs.length === 0 ? NO_OUTPUT_NAMES : call.outputs.map((o) => o.name);
    validateInferRequest(model.config, { id: call.id, inputs: call.inputs, outputs: outputNames });
    // Triton caches only where both the server has a cache and the model enables it.
    if (this.cache && model.config.response_cache?.enable) return this.inferThroughCache(model, call, outputNames, this.cache, trace);
    const result = await this.schedule(model, call, outputNames, undefined, trace);
    if (!result.ok) throw result.error;
    return answer(model, call, result.outputs, result.parameters, result.compute);
  }

  /**
   * Every response of one request, in order, ending with `final: true`; never throws (errors are events).
   * An ordinary model yields exactly one event. Aborting `signal` cancels the request: a decoupled model's
   * backend sees its sender's signal aborted, and so does stopping the iteration early. `resolved`: the
   * model the caller resolved already.
   */
  async *streamInfer(call: InferCall, signal?: AbortSignal, resolved?: LoadedModel): AsyncGenerator<InferStreamEvent<InferAnswer>, void, undefined> {
    let model: LoadedModel;
    try {
      model = resolved ?? this.repository.get(call.modelName, call.version);
      if (!isDecoupledModel(model)) {
        yield { answer: await this.inferOn(model, call), final: true };
        return;
      }
    } catch (err) {
      yield { error: toHerdError(err), final: true };
      return;
    }
    // The transport's own stream signal, else the call's (a gRPC cancel or an HTTP disconnect).
    const stream = new ResponseStream<InferAnswer>((result) => answer(model, call, result.outputs, result.parameters, result.compute), signal ?? call.signal);
    // Refusals before execution (validation, a full queue, a timeout) come back here, not through the sender.
    let submitted: Promise<InferenceResult>;
    const trace = call.trace?.startModel(model.name, model.version, call.id);
    try {
      const outputNames = call.outputs.length === 0 ? NO_OUTPUT_NAMES : call.outputs.map((o) => o.name);
      validateInferRequest(model.config, { id: call.id, inputs: call.inputs, outputs: outputNames });
      submitted = this.schedule(model, call, outputNames, stream, trace);
    } catch (err) {
      trace?.end(err);
      yield { error: toHerdError(err), final: true };
      return;
    }
    void submitted.then((result) => {
      if (!result.ok && !stream.closed) stream.send(result, true);
    });
    try {
      yield* stream;
    } finally {
      // REQUEST_END once the last response went out (or the caller stopped reading).
      trace?.end();
    }
  }

  private schedule(model: LoadedModel, call: InferCall, outputNames: readonly string[], responseSender: ResponseSender | undefined, trace?: ModelTrace): Promise<InferenceResult> {
    const batchSize = model.config.max_batch_size > 0 ? (call.inputs[0]?.shape[0] ?? 1) : 1;
    const controls = createSequenceControls(model.config, call.parameters, batchSize);
    const request: InferenceRequest = {
      id: call.id,
      modelName: model.name,
      modelVersion: model.version,
      inputs: controls.length > 0 ? [...call.inputs, ...controls] : call.inputs,
      requestedOutputs: outputNames,
      parameters: call.parameters,
    };
    if (responseSender) request.responseSender = responseSender;
    if (call.ensemble !== undefined) request.ensemble = call.ensemble;
    if (call.caller !== undefined) request.caller = call.caller;
    if (call.signal !== undefined) request.signal = call.signal;
    // A traced request's tensors and a decoupled model's responses are watched on the way (infer-trace.ts).
    if (trace !== undefined) return submitTraced(request, model.scheduler, trace);
    return model.scheduler.submit(request);
  }

  /** A hit skips scheduling and execution; a miss executes, then stores a successful answer. */
  private async inferThroughCache(
    model: LoadedModel,
    call: InferCall,
    outputNames: readonly string[],
    cache: InferenceResponseCache,
    trace: ModelTrace | undefined,
  ): Promise<InferAnswer> {
    const start = process.hrtime.bigint();
    const key = createInferenceCacheKey({ modelName: model.name, modelVersion: model.version, inputs: call.inputs, requestedOutputs: outputNames });
    const entry = await cache.lookup(key);
    const lookupEnd = process.hrtime.bigint();
    // An entry that does not decode (written by another version of Herd into a shared Redis) is a miss.
    const cached = entry === undefined ? undefined : decodeEntry(entry);
    if (cached !== undefined) {
      const end = process.hrtime.bigint();
      model.stats.recordCacheHit(Number(end - start), 0, Number(lookupEnd - start));
      return answer(model, call, cached.outputs, cached.parameters);
    }
    const result = await this.schedule(model, call, outputNames, undefined, trace);
    if (!result.ok) throw result.error;
    const insertStart = process.hrtime.bigint();
    await cache.insert(key, convertResponseToCacheEntry({ outputs: result.outputs, ...(result.parameters ? { parameters: result.parameters } : {}) }));
    model.stats.recordCacheMiss(Number(lookupEnd - start) + Number(process.hrtime.bigint() - insertStart));
    return answer(model, call, result.outputs, result.parameters, result.compute);
  }

  /**
   * For transports, before decoding a request: the 503 it would get anyway because the model's queue is
   * full at every priority level (counted as a failed request, as the scheduler counts it). Undefined when
   * the request may be accepted.
   */
  refuseIfQueueFull(model: LoadedModel): HerdError | undefined {
    return model.scheduler.refuseIfFull();
  }

  metadata(name: string, version?: number): ModelMetadata {
    const model = this.repository.get(name, version);
    const versions =
      version !== undefined
        ? [version]
        : this.repository
            .loadedModels()
            .filter((m) => m.name === name)
            .map((m) => m.version)
            .sort((a, b) => a - b);
    return createModelMetadata(model.config, versions);
  }

  config(name: string, version?: number): LoadedModel['config'] {
    return this.repository.get(name, version).config;
  }

  /**
   * Statistics of every loaded version, of one model, or of one version (Triton's three forms). A model
   * or version with nothing ready is INVALID_ARG with Triton's wording (core tritonserver.cc
   * TRITONSERVER_ServerModelStatistics), whether the name is unknown, failed or unloaded.
   */
  statistics(name?: string, version?: number): ModelStatistics[] {
    if (name === undefined) return this.repository.loadedModels().map((m) => m.stats.snapshot());
    const ready = this.repository.loadedModels().filter((m) => m.name === name);
    if (ready.length === 0) throw new HerdError('INVALID_ARG', `requested model '${name}' is not available`);
    if (version === undefined) return ready.map((m) => m.stats.snapshot());
    const one = ready.find((m) => m.version === version);
    if (!one) throw new HerdError('INVALID_ARG', `requested model version is not available for model '${name}'`);
    return [one.stats.snapshot()];
  }

  /** Whether the model (or that version) is loaded and ready; never throws. */
  isModelReady(name: string, version?: number): boolean {
    return this.repository.isModelReady(name, version);
  }

  /** Throws what an infer would get (unknown model, no ready version, version not ready); returns when ready. */
  requireModelReady(name: string, version?: number): void {
    this.repository.get(name, version);
  }
}

function decodeEntry(entry: Buffer): CachedResponse | undefined {
  try {
    return convertCacheEntryToResponse(entry);
  } catch {
    return undefined;
  }
}

function answer(model: LoadedModel, call: InferCall, outputs: Tensor[], parameters: Parameters | undefined, compute?: ComputeDurations): InferAnswer {
  return {
    modelName: model.name,
    modelVersion: model.version,
    id: call.id,
    outputs: shapeOutputs(model, outputs, call.outputs),
    ...(parameters ? { parameters } : {}),
    ...(compute ? { compute } : {}),
  };
}

function shapeOutputs(model: LoadedModel, produced: Tensor[], requested: readonly RequestedOutput[]): Tensor[] {
  if (requested.length === 0) return produced;
  return requested.map((want) => {
    const tensor = produced.find((t) => t.name === want.name);
    if (!tensor) throw new HerdError('INTERNAL', `model '${model.name}' did not produce requested output '${want.name}'`);
    if (want.classCount === undefined) return tensor;
    return classifyTensor(tensor, {
      classCount: want.classCount,
      batching: model.config.max_batch_size > 0,
      labels: model.labels.get(want.name),
    });
  });
}
