// The contract between the scheduler and a backend (ONNX Runtime, in-process JS, ...).
// A backend instance is one loaded copy of one model version; it knows nothing about HTTP.
import type { AbortLink } from '../../core/abort-link.ts';
import type { ChatCaller, ModelSpending } from '../../core/chat-port.ts';
import type { HerdError } from '../../core/errors.ts';
import type { Parameters, Tensor } from '../../core/tensor.ts';
import type { ModelConfig } from '../model-config/model-config.ts';
import type { ModelTrace } from '../infer-trace.ts';

export interface InferenceRequest {
  /** Client-supplied id, echoed in the response; '' when none was given. */
  id: string;
  modelName: string;
  modelVersion: number;
  /** Validated against the config: names known, datatypes and shapes (batch dim included) right. */
  inputs: Tensor[];
  /** Output names the client asked for; empty means every output of the model. */
  requestedOutputs: readonly string[];
  parameters: Parameters;
  /** Present exactly when the model is decoupled (`model_transaction_policy { decoupled: true }`). */
  responseSender?: ResponseSender;
  /** The ensemble running this request as one of its steps (InferCall.ensemble). */
  ensemble?: string;
  /** Who pays for a spending model's call (InferCall.caller). */
  caller?: ChatCaller;
  /** This request's trace when it is traced: the scheduler marks its queue and compute, a backend hands on its context(). */
  trace?: ModelTrace;
  /**
   * Fires when the client went away or cancelled (InferCall.signal): the scheduler drops the request while
   * it is queued; a backend that can stop early reads it while running.
   */
  signal?: AbortLink;
}

/** How a decoupled model's backend answers one request: any number of responses, then the final flag. */
export interface ResponseSender {
  /** One response; `final: true` also completes the request (TRITONSERVER_RESPONSE_COMPLETE_FINAL). */
  send(result: InferenceResult, final?: boolean): void;
  /** Completes the request with no further response (the final flag alone). Idempotent. */
  close(): void;
  /** True once the request is complete: later sends are refused. */
  readonly closed: boolean;
  /** Aborted when the client went away or cancelled the request (the Python backend's is_cancelled()). */
  readonly signal: AbortSignal;
}

export type InferenceResult = { ok: true; outputs: Tensor[]; parameters?: Parameters; compute?: ComputeDurations } | { ok: false; error: HerdError };

/** The compute time of the execution that answered a request, set by the scheduler (an ensemble sums its steps'). */
export interface ComputeDurations {
  inputNs: number;
  inferNs: number;
  outputNs: number;
}

/** Everything a backend needs to load one instance of one model version. */
export interface BackendLoadContext {
  config: ModelConfig;
  /** Absolute path of `<repo>/<model>`. */
  modelPath: string;
  /** Absolute path of `<repo>/<model>/<version>`. */
  versionPath: string;
  version: number;
  /** Instance name as Triton names it, e.g. `my_model_0_1`. */
  instanceName: string;
  instanceKind: 'KIND_CPU' | 'KIND_GPU' | 'KIND_MODEL';
}

/**
 * Filled by a backend during execute() with process.hrtime.bigint() readings, so statistics can split
 * compute time into input preparation, inference and output conversion as Triton reports it.
 * A backend that fills nothing has all its time counted as inference.
 */
export interface ExecutionMarks {
  inputEnd?: bigint;
  inferEnd?: bigint;
}

export interface Backend {
  /**
   * One result per request, in order. A thrown error fails every request of the batch. For a decoupled
   * model without executeDecoupled, each result is sent as that request's one final response.
   */
  execute(requests: InferenceRequest[], marks?: ExecutionMarks): Promise<InferenceResult[]>;
  /**
   * Decoupled models: every response goes through each request's responseSender, any number of them,
   * possibly after this resolves (which frees the instance). A thrown error fails every request of the
   * batch that is not complete yet.
   */
  executeDecoupled?(requests: InferenceRequest[], marks?: ExecutionMarks): Promise<void>;
  unload(): Promise<void>;
}

export interface BackendFactory {
  /** Backend name as written in config.pbtxt (`onnxruntime`, `js`). */
  readonly name: string;
  /** Fills what config.pbtxt leaves out from the model file itself (Triton's auto-complete). */
  autoCompleteConfig?(config: ModelConfig, modelPath: string, versionPath: string): Promise<ModelConfig>;
  load(context: BackendLoadContext): Promise<Backend>;
  /** How a model of this backend spends on a paid upstream; undefined (or no method): it never does. */
  describeSpending?(config: ModelConfig): ModelSpending | undefined;
}
