// Runs session.run calls on one InferenceSession, in whichever thread owns it (the instance's worker, or the
// main thread with execution_thread "main"): builds feeds (reshape), runs, converts outputs, times the phases.
import type * as ort from 'onnxruntime-node';
import type { DataType } from '../../../core/datatype.ts';
import { mapConfigTypeToDataType } from '../../../core/datatype.ts';
import { HerdError, internal } from '../../../core/errors.ts';
import type { Tensor } from '../../../core/tensor.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';
import { convertOrtToTensor, convertTensorToOrt } from './convert-ort-tensor.ts';
import { createOnnxSession, readOnnxSignature, type OnnxSignature } from './onnx-model-file.ts';
import type { OnnxWorkerData } from './onnx-worker-protocol.ts';
import { convertShapeForReshape, type ReshapeRule } from './reshape.ts';
import { validateOnnxConfig } from './validate-onnx-config.ts';

interface OutputPlan {
  dataType: DataType;
  /** Model shape -> config shape, when the config has a reshape. */
  reshape?: ReshapeRule;
}

/**
 * One session.run. The inputs were checked by validateOnnxRequest on the main thread (names, dims, counts,
 * outputs); a run may hold several requests concatenated along the batch dim, which the runner cannot tell.
 */
export interface SessionRun {
  inputs: Tensor[];
  /** Config outputs to fetch, in the order the outputs come back. */
  outputNames: string[];
}

export type SessionRunResult = { ok: true; outputs: Tensor[] } | { ok: false; error: HerdError };

export interface SessionBatchResult {
  /** One per run, in order. */
  results: SessionRunResult[];
  /** process.hrtime.bigint() when every feed was built, just before the first run. */
  inputEnd: bigint;
  /** process.hrtime.bigint() after the last run, before outputs are converted. */
  inferEnd: bigint;
}

type Feeds = Record<string, ort.Tensor>;
/** A run that failed in an earlier phase skips the later ones. */
interface Failed {
  failed: HerdError;
}

const hasFailed = (stage: object): stage is Failed => 'failed' in stage;

/** Opens the session, checks the config against the model and wraps both; releases the session on failure. */
export async function openOnnxSessionRunner({ config, modelFile, options }: OnnxWorkerData): Promise<OnnxSessionRunner> {
  const session = await createOnnxSession(config, modelFile, options);
  try {
    const signature = readOnnxSignature(session);
    validateOnnxConfig(config, signature);
    return new OnnxSessionRunner(config, session, signature);
  } catch (err) {
    await session.release();
    throw err;
  }
}

export class OnnxSessionRunner {
  /** The ONNX file's input names (config inputs plus sequence controls and the like). */
  readonly modelInputs: readonly string[];
  readonly #config: ModelConfig;
  readonly #session: ort.InferenceSession;
  /** Request shape -> model shape, for the inputs whose config has a reshape. */
  readonly #inputReshapes = new Map<string, ReshapeRule>();
  readonly #outputs = new Map<string, OutputPlan>();

  constructor(config: ModelConfig, session: ort.InferenceSession, signature: OnnxSignature) {
    this.#config = config;
    this.#session = session;
    this.modelInputs = signature.inputs.map((io) => io.name);
    const hasBatchDim = (config.max_batch_size ?? 0) > 0;
    for (const input of config.input ?? []) {
      if (input.reshape) this.#inputReshapes.set(input.name, { from: input.dims, to: input.reshape.shape, hasBatchDim });
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
   * One result per run, in order; a run that fails fails alone. Phase by phase over all runs (all feeds,
   * all session.run calls, all outputs) so the two timestamps split the call the way Triton reports it.
   * Runs are sequential: the instance's intra-op threads are its CPU budget.
   */
  async runBatch(runs: readonly SessionRun[]): Promise<SessionBatchResult> {
    const prepared = runs.map((run) => this.#attempt(() => this.#createFeeds(run.inputs)));
    const inputEnd = process.hrtime.bigint();
    const fetched: (ort.InferenceSession.ReturnType | Failed)[] = [];
    for (const [i, feeds] of prepared.entries()) {
      fetched.push(hasFailed(feeds) ? feeds : await this.#runSession(feeds, runs[i].outputNames));
    }
    const inferEnd = process.hrtime.bigint();
    const results = fetched.map((values, i): SessionRunResult => {
      const converted = hasFailed(values) ? values : this.#attempt(() => runs[i].outputNames.map((name) => this.#convertOutput(name, values[name])));
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

  #createFeeds(inputs: readonly Tensor[]): Feeds {
    const feeds: Feeds = {};
    for (const tensor of inputs) {
      const reshape = this.#inputReshapes.get(tensor.name);
      const shape = reshape ? convertShapeForReshape(tensor.name, tensor.shape, reshape) : tensor.shape;
      feeds[tensor.name] = convertTensorToOrt(tensor, shape);
    }
    return feeds;
  }

  async #runSession(feeds: Feeds, outputNames: string[]): Promise<ort.InferenceSession.ReturnType | Failed> {
    try {
      return await this.#session.run(feeds, outputNames);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return { failed: internal(`onnxruntime failed to run model '${this.#config.name}': ${reason}`, { cause: err }) };
    }
  }

  #convertOutput(name: string, value: ort.OnnxValue | undefined): Tensor {
    const plan = this.#outputs.get(name);
    if (!plan) throw internal(`model '${this.#config.name}' has no configured output '${name}'`);
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
