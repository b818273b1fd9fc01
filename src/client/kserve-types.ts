// The KServe v2 / Triton HTTP documents the client reads, as plain data. Structural copies of what
// the server writes (client depends on core only, so it cannot import serving's types).
import type { DataType } from '../core/datatype.ts';
import type { Parameters, Tensor } from '../core/tensor.ts';

export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

export interface TensorMetadata {
  name: string;
  /** A KServe datatype name; kept as a string because a server may report one this client does not know. */
  datatype: string;
  /** -1 marks a variable dim; a batching model's first dim is the batch dim (see ModelConfigDocument.max_batch_size). */
  shape: number[];
}

export interface ModelMetadata {
  name: string;
  versions?: string[];
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
}

/**
 * The fields of GET /v2/models/{m}/config the client and `herd bench` rely on. The document has many
 * more (Triton prints every default); they stay reachable through the index signature.
 */
export interface ModelConfigDocument {
  name: string;
  max_batch_size: number;
  input: { name: string; data_type: string; dims: number[]; optional?: boolean }[];
  output: { name: string; data_type: string; dims: number[] }[];
  sequence_batching?: unknown;
  model_transaction_policy?: { decoupled?: boolean };
  [field: string]: unknown;
}

export interface StatDuration {
  count: number;
  ns: number;
}

/** One model version's entry in GET /v2/models/{m}/stats (Triton's field names). */
export interface ModelStatistics {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: {
    success: StatDuration;
    fail: StatDuration;
    queue: StatDuration;
    compute_input: StatDuration;
    compute_infer: StatDuration;
    compute_output: StatDuration;
    cache_hit?: StatDuration;
    cache_miss?: StatDuration;
  };
}

/** An output to ask for; without any, the server returns every output. */
export interface RequestedOutput {
  name: string;
  /** Binary tensor data for this output; default: the request's binaryOutputs. */
  binary?: boolean;
  /** Classification extension: the top-N classes as strings. */
  classCount?: number;
  /** Have the server write this output into a registered system shared memory region. */
  sharedMemory?: SharedMemoryPlacement;
}

/** A tensor's place in a registered shared memory region (the shared_memory_* parameters). */
export interface SharedMemoryPlacement {
  region: string;
  offset: number;
  byteSize: number;
}

export interface InferOptions {
  /** A model version; default: the server's choice (the latest ready one). */
  version?: string;
  /** Request id, echoed in the response. */
  id?: string;
  /** Send inputs with the binary tensor data extension (default true, as tritonclient does). */
  binaryInputs?: boolean;
  /** Ask for outputs as binary data unless an output says otherwise (default true). */
  binaryOutputs?: boolean;
  outputs?: RequestedOutput[];
  /** Request parameters (priority, timeout, custom ones); keys starting with `triton_` are the server's. */
  parameters?: Parameters;
  /** Inputs whose data the client put in a registered region: sent as a reference, their `data` is not sent. */
  inputsInSharedMemory?: Readonly<Record<string, SharedMemoryPlacement>>;
}

export interface InferResult {
  modelName: string;
  modelVersion: string;
  /** '' when the response carried none. */
  id: string;
  parameters: Parameters;
  outputs: Tensor[];
}

/** A tensor to send: the core Tensor with its datatype checked against the model by the server. */
export type InferInput = Tensor;

export type { DataType };
