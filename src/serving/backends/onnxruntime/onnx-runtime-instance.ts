// One loaded instance of an ONNX model: owns one InferenceSession and runs requests on it.
// Requests run one at a time for now; feeds/outputs are built by helpers so a concatenated batch can reuse them.
// Note: onnxruntime-node 1.30's session.run() computes on the JS thread (its promise only defers with
// setImmediate), so a run blocks the event loop for its whole duration and instances on one thread add no
// parallelism; moving each instance's session into a worker thread is the fix (measured, not done here).
import type * as ort from 'onnxruntime-node';
import type { DataType } from '../../../core/datatype.ts';
import { mapConfigTypeToDataType } from '../../../core/datatype.ts';
import { HerdError, internal, invalidArg, unavailable } from '../../../core/errors.ts';
import type { Tensor } from '../../../core/tensor.ts';
import type { ModelConfig } from '../../repository/model-config.ts';
import type { Backend, InferenceRequest, InferenceResult } from '../backend.ts';
import { convertOrtToTensor, convertTensorToOrt } from './convert-ort-tensor.ts';
import type { OnnxSignature } from './onnx-model-file.ts';
import { convertShapeForReshape, type ReshapeRule } from './reshape.ts';

interface InputPlan {
  /** Request shape -> model shape, when the config has a reshape. */
  reshape?: ReshapeRule;
  optional: boolean;
}

interface OutputPlan {
  dataType: DataType;
  /** Model shape -> config shape, when the config has a reshape. */
  reshape?: ReshapeRule;
}

export class OnnxRuntimeInstance implements Backend {
  readonly #config: ModelConfig;
  readonly #session: ort.InferenceSession;
  readonly #modelInputs: Set<string>;
  readonly #inputs = new Map<string, InputPlan>();
  readonly #outputs = new Map<string, OutputPlan>();
  readonly #pending = new Set<Promise<unknown>>();
  #released = false;

  constructor(config: ModelConfig, session: ort.InferenceSession, signature: OnnxSignature) {
    this.#config = config;
    this.#session = session;
    this.#modelInputs = new Set(signature.inputs.map((io) => io.name));
    const hasBatchDim = (config.max_batch_size ?? 0) > 0;
    for (const input of config.input ?? []) {
      this.#inputs.set(input.name, {
        optional: input.optional,
        reshape: input.reshape ? { from: input.dims, to: input.reshape.shape, hasBatchDim } : undefined,
      });
    }
    for (const output of config.output ?? []) {
      const dataType = mapConfigTypeToDataType(output.data_type);
      // validateOnnxConfig ran before construction, so an unmappable type here is a bug, not user error.
      if (!dataType) throw internal(`model '${config.name}': output '${output.name}' has unusable datatype ${output.data_type}`);
      this.#outputs.set(output.name, {
        dataType,
        reshape: output.reshape ? { from: output.reshape.shape, to: output.dims, hasBatchDim } : undefined,
      });
    }
  }

  async execute(requests: InferenceRequest[]): Promise<InferenceResult[]> {
    if (this.#released) {
      throw unavailable(`model '${this.#config.name}' instance has been unloaded`);
    }
    const run = (async () => {
      const results: InferenceResult[] = [];
      // Sequential: ORT computes on this thread anyway, and the instance's intra-op threads are its CPU budget.
      for (const request of requests) results.push(await this.#runRequest(request));
      return results;
    })();
    this.#pending.add(run);
    try {
      return await run;
    } finally {
      this.#pending.delete(run);
    }
  }

  async unload(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    // Let running batches finish: releasing a session under a running call is undefined behaviour in ORT.
    await Promise.allSettled(this.#pending);
    await this.#session.release();
  }

  async #runRequest(request: InferenceRequest): Promise<InferenceResult> {
    try {
      const feeds = this.#createFeeds(request.inputs);
      const names = this.#resolveOutputNames(request.requestedOutputs);
      const fetched = await this.#runSession(feeds, names);
      return { ok: true, outputs: names.map((name) => this.#convertOutput(name, fetched[name])) };
    } catch (err) {
      return { ok: false, error: this.#toError(err) };
    }
  }

  #createFeeds(inputs: readonly Tensor[]): Record<string, ort.Tensor> {
    const feeds: Record<string, ort.Tensor> = {};
    for (const tensor of inputs) {
      if (!this.#modelInputs.has(tensor.name)) {
        throw invalidArg(`unexpected inference input '${tensor.name}' for model '${this.#config.name}', allowed inputs are: ${[...this.#modelInputs].join(', ')}`);
      }
      const plan = this.#inputs.get(tensor.name);
      const shape = plan?.reshape ? convertShapeForReshape(tensor.name, tensor.shape, plan.reshape) : tensor.shape;
      feeds[tensor.name] = convertTensorToOrt(tensor, shape);
    }
    for (const [name, plan] of this.#inputs) {
      if (!plan.optional && !(name in feeds)) {
        throw invalidArg(`expected input '${name}' for model '${this.#config.name}' is missing from the request`);
      }
    }
    return feeds;
  }

  /** The config's outputs the request asked for, in request order; all of them when it asked for none. */
  #resolveOutputNames(requested: readonly string[]): string[] {
    if (requested.length === 0) return [...this.#outputs.keys()];
    for (const name of requested) {
      if (!this.#outputs.has(name)) {
        throw invalidArg(`unexpected inference output '${name}' for model '${this.#config.name}', allowed outputs are: ${[...this.#outputs.keys()].join(', ')}`);
      }
    }
    return [...new Set(requested)];
  }

  async #runSession(feeds: Record<string, ort.Tensor>, outputNames: string[]): Promise<ort.InferenceSession.ReturnType> {
    try {
      return await this.#session.run(feeds, outputNames);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw internal(`onnxruntime failed to run model '${this.#config.name}': ${reason}`, { cause: err });
    }
  }

  #convertOutput(name: string, value: ort.OnnxValue | undefined): Tensor {
    const plan = this.#outputs.get(name)!;
    if (value === undefined) throw internal(`model '${this.#config.name}' produced no output '${name}'`);
    const modelShape = [...value.dims];
    const shape = plan.reshape ? convertShapeForReshape(name, modelShape, plan.reshape) : modelShape;
    return convertOrtToTensor(name, value, plan.dataType, shape);
  }

  #toError(err: unknown): HerdError {
    if (err instanceof HerdError) return err;
    const reason = err instanceof Error ? err.message : String(err);
    return internal(`model '${this.#config.name}': ${reason}`, { cause: err });
  }
}
