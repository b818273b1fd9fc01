// An inference request and its answer as the serving side's callers write them (transports, ensembles,
// the inference port): plain data, so a caller needs none of the service that runs it.
import type { AbortLink } from '../core/abort-link.ts';
import type { ChatCaller } from '../core/chat-port.ts';
import type { Parameters, Tensor } from '../core/tensor.ts';
import type { ComputeDurations } from './backends/backend.ts';
import type { InferTraceParent } from './infer-trace.ts';

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
  /**
   * Set when an ensemble runs this call as one of its steps: the ensemble's name (outer ones first,
   * `outer/inner`), so whatever the step shows a user (an llm step's ledger origin) names the ensemble.
   */
  ensemble?: string;
  /** Set by a transport for a model that spends (LoadedModel.spending): who pays; ensemble steps inherit it. */
  caller?: ChatCaller;
  /** Set when the request is traced (Triton's trace settings sampled it): where its model's trace hangs. */
  trace?: InferTraceParent;
  /**
   * Fires when the client is gone (HTTP disconnect, gRPC cancel or deadline, stream cancelled): a queued
   * request leaves the queue, a running one is told (JS AbortSignal, Python is_cancelled, llm upstream abort).
   * Ensemble steps inherit it.
   */
  signal?: AbortLink;
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
