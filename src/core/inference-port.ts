// Where the gateway meets the serving side in the other direction: a `type: triton` deployment or a
// local embedding model runs a model of this Herd's repository through this interface, and app.ts plugs
// in the InferenceService. Plain data only (core tensors), so gateway needs nothing from serving/.
import type { HerdError } from './errors.ts';
import type { Parameters, Tensor } from './tensor.ts';

export interface InferencePortRequest {
  model: string;
  /** Absent: the model's version policy picks (as a KServe request without a version). */
  version?: number;
  id?: string;
  parameters?: Parameters;
  inputs: Tensor[];
  /** Output names to return; absent or empty: every output. */
  outputs?: string[];
}

export interface InferencePortAnswer {
  model: string;
  version: number;
  outputs: Tensor[];
  parameters?: Parameters;
}

export interface InferencePortEvent {
  answer?: InferencePortAnswer;
  error?: HerdError;
  /** True on the last event of the request. */
  final: boolean;
}

/** Inputs and outputs a caller needs to shape a request (KServe model metadata, trimmed). */
export interface InferencePortModel {
  name: string;
  versions: number[];
  inputs: { name: string; datatype: string; shape: number[] }[];
  outputs: { name: string; datatype: string; shape: number[] }[];
  /** 0: the model takes no batch dimension. */
  maxBatchSize: number;
  decoupled: boolean;
  /** The config's `parameters` (string values), e.g. a text model's prompt_template. */
  parameters: Readonly<Record<string, string>>;
}

export interface InferencePort {
  /** One request, one answer; rejects with a HerdError (INVALID_ARG, NOT_FOUND, UNAVAILABLE, ...). */
  infer(request: InferencePortRequest): Promise<InferencePortAnswer>;
  /** Every response of a request (many for a decoupled model); never throws, errors arrive as events. */
  stream(request: InferencePortRequest, signal?: AbortSignal): AsyncIterable<InferencePortEvent>;
  /** Undefined when the model is unknown or not ready. */
  describe(model: string, version?: number): InferencePortModel | undefined;
}
