// Runs batches of requests on one InferenceSession, inside the instance's worker thread: builds feeds
// (reshape, name checks), runs the session, converts outputs, and times the three phases for statistics.
import type * as ort from 'onnxruntime-node';
import type { DataType } from '../../../core/datatype.ts';
import { mapConfigTypeToDataType } from '../../../core/datatype.ts';
import { HerdError, internal, invalidArg } from '../../../core/errors.ts';
import type { Tensor } from '../../../core/tensor.ts';
import type { ModelConfig } from '../../repository/model-config.ts';
import type { InferenceRequest, InferenceResult } from '../backend.ts';
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

export type SessionRequest = Pick<InferenceRequest, 'inputs' | 'requestedOutputs'>;

export interface SessionBatchResult {
  results: InferenceResult[];
  /** process.hrtime.bigint() when every feed was built, just before the first run. */
  inputEnd: bigint;
  /** process.hrtime.bigint() after the last run, before outputs are converted. */
  inferEnd: bigint;
}

interface Prepared { feeds: Record<string, ort.Tensor>; names: string[] }
interface Fetched { fetched: ort.InferenceSession.ReturnType; names: string[] }
/** A request that failed in an earlier phase skips the later ones. */
interface Failed { failed: HerdError }

const hasFailed = (stage: object): stage is Failed => 'failed' in stage;

export class OnnxSessionRunner {
  readonly #config: ModelConfig;
  readonly #session: ort.InferenceSession;
  readonly #modelInputs: Set<string>;
  readonly #inputs = new Map<string, InputPlan>();
  readonly #outputs = new Map<string, OutputPlan>();

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

  /**
   * One result per request, in order; a bad request fails alone. Phase by phase over the whole batch
   * (all feeds, all runs, all outputs) so the two timestamps split the batch the way Triton reports it.
   * Runs are sequential: the instance's intra-op threads are its CPU budget.
   */
  async runBatch(requests: readonly SessionRequest[]): Promise<SessionBatchResult> {
    const prepared = requests.map((request) => this.#attempt((): Prepared => ({
      feeds: this.#createFeeds(request.inputs),
      names: this.#resolveOutputNames(request.requestedOutputs),
    })));
    const inputEnd = process.hrtime.bigint();
    const ran: (Fetched | Failed)[] = [];
    for (const stage of prepared) {
      ran.push(hasFailed(stage) ? stage : await this.#attemptAsync(async (): Promise<Fetched> => ({
        fetched: await this.#runSession(stage.feeds, stage.names),
        names: stage.names,
      })));
    }
    const inferEnd = process.hrtime.bigint();
    const results = ran.map((stage): InferenceResult => {
      const converted = hasFailed(stage) ? stage : this.#attempt(() => stage.names.map((name) => this.#convertOutput(name, stage.fetched[name])));
      return hasFailed(converted) ? { ok: false, error: converted.failed } : { ok: true, outputs: converted };
    });
    return { results, inputEnd, inferEnd };
  }

  release(): Promise<void> {
    return this.#session.release();
  }

  #attempt<T extends object>(fn: () => T): T | Failed {
    try {
      return fn();
    } catch (err) {
      return { failed: this.#toError(err) };
    }
  }

  async #attemptAsync<T extends object>(fn: () => Promise<T>): Promise<T | Failed> {
    try {
      return await fn();
    } catch (err) {
      return { failed: this.#toError(err) };
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
