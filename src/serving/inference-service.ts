// The serving side's one entry point for transports: resolve the model, validate the request
// against its config, schedule it, then shape the outputs (subset, classification).
import { HerdError, toHerdError } from '../core/errors.ts';
import type { ComputeDurations } from './backends/backend.ts';
import type { Parameters, Tensor } from '../core/tensor.ts';
import { classifyTensor } from './classification.ts';
import { createSequenceControls } from './scheduler/sequence-controls.ts';
import { createModelMetadata, type ModelMetadata } from './model-metadata.ts';
import type { LoadedModel, ModelRepositoryManager } from './repository/model-repository-manager.ts';
import type { ModelStatistics } from './stats.ts';
import { validateInferRequest } from './validate-infer-request.ts';

export interface RequestedOutput {
  name: string;
  /** Top-k classification instead of raw values (classification extension). */
  classCount?: number;
}

export interface InferCall {
  modelName: string;
  version?: number;
  id: string;
  parameters: Parameters;
  inputs: Tensor[];
  /** Empty: every output of the model. */
  outputs: RequestedOutput[];
}

export interface InferAnswer {
  modelName: string;
  modelVersion: number;
  id: string;
  outputs: Tensor[];
  parameters?: Parameters;
  /** The compute time of the execution that answered (an ensemble sums its steps'), for ensemble statistics. */
  compute?: ComputeDurations;
}

export interface InferStreamEvent {
  /** Absent on a bare completion (a decoupled model may close with no last response). */
  answer?: InferAnswer;
  error?: HerdError;
  /** True on the last event of the request. */
  final: boolean;
}

/** Shared by every request that asks for all outputs (most do): nothing downstream mutates it. */
const NO_OUTPUT_NAMES: readonly string[] = [];

export class InferenceService {
  constructor(private readonly repository: ModelRepositoryManager) {}

  async infer(call: InferCall): Promise<InferAnswer> {
    const model = this.repository.get(call.modelName, call.version);
    const outputNames = call.outputs.length === 0 ? NO_OUTPUT_NAMES : call.outputs.map((o) => o.name);
    validateInferRequest(model.config, { id: call.id, inputs: call.inputs, outputs: outputNames });
    const batchSize = model.config.max_batch_size > 0 ? (call.inputs[0]?.shape[0] ?? 1) : 1;
    const controls = createSequenceControls(model.config, call.parameters, batchSize);
    const result = await model.scheduler.submit({
      id: call.id,
      modelName: model.name,
      modelVersion: model.version,
      inputs: controls.length > 0 ? [...call.inputs, ...controls] : call.inputs,
      requestedOutputs: outputNames,
      parameters: call.parameters,
    });
    if (!result.ok) throw result.error;
    return {
      modelName: model.name,
      modelVersion: model.version,
      id: call.id,
      outputs: shapeOutputs(model, result.outputs, call.outputs),
      ...(result.parameters ? { parameters: result.parameters } : {}),
      ...(result.compute ? { compute: result.compute } : {}),
    };
  }

  /** Every response of one request, in order, ending with `final: true`; an ordinary model yields exactly one. */
  async *streamInfer(call: InferCall, _signal?: AbortSignal): AsyncIterable<InferStreamEvent> {
    let event: InferStreamEvent;
    try {
      event = { answer: await this.infer(call), final: true };
    } catch (err) {
      event = { error: toHerdError(err), final: true };
    }
    yield event;
  }

  /**
   * For transports, before decoding a request: the 503 it would get anyway because the model's queue is
   * full at every priority level (counted as a failed request, as the scheduler counts it). Undefined when
   * the request may be accepted, or the model is unknown (the full path then reports that).
   */
  refuseIfQueueFull(name: string, version?: number): HerdError | undefined {
    if (!this.repository.isModelReady(name, version)) return undefined;
    return this.repository.get(name, version).scheduler.refuseIfFull();
  }

  metadata(name: string, version?: number): ModelMetadata {
    const model = this.repository.get(name, version);
    const versions = version !== undefined
      ? [version]
      : this.repository.loadedModels().filter((m) => m.name === name).map((m) => m.version).sort((a, b) => a - b);
    return createModelMetadata(model.config, versions);
  }

  config(name: string, version?: number): LoadedModel['config'] {
    return this.repository.get(name, version).config;
  }

  /** Statistics of every loaded version, of one model, or of one version (Triton's three forms). */
  statistics(name?: string, version?: number): ModelStatistics[] {
    if (name === undefined) return this.repository.loadedModels().map((m) => m.stats.snapshot());
    if (version !== undefined) return [this.repository.get(name, version).stats.snapshot()];
    this.repository.get(name);
    return this.repository.loadedModels().filter((m) => m.name === name).map((m) => m.stats.snapshot());
  }

  isModelReady(name: string, version?: number): boolean {
    return this.repository.isModelReady(name, version);
  }
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
