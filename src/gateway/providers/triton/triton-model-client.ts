// What the triton provider needs from wherever its models live — this Herd's repository (in process)
// or a remote KServe server — in core's plain shapes; every failure leaves as an UpstreamError.
import type { AbortLink } from '../../../core/abort-link.ts';
import type { TraceParent } from '../../../tracing/trace-parent.ts';
import type { InferencePortAnswer, InferencePortModel, InferencePortRequest } from '../../../core/inference-port.ts';

export interface TritonCallOptions {
  signal: AbortLink;
  /** Until the answer (infer) or the first response (stream). */
  timeoutMs: number;
  /** stream(): longest silence between two responses. */
  idleTimeoutMs?: number;
  /** The attempt span's context: a remote Triton gets it as traceparent; absent: nothing sent. */
  traceParent?: TraceParent | undefined;
}

export interface TritonModelClient {
  /** Undefined when the model (or that version) is unknown or not ready: the caller answers `unavailable`. */
  describe(model: string, version: number | undefined, options: TritonCallOptions): Promise<InferencePortModel | undefined>;
  /** One request of a model that is not decoupled; `model` is what describe() answered. */
  infer(request: InferencePortRequest, model: InferencePortModel, options: TritonCallOptions): Promise<InferencePortAnswer>;
  /** Every response of one request (many for a decoupled model), as they arrive. */
  stream(request: InferencePortRequest, model: InferencePortModel, options: TritonCallOptions): AsyncIterable<InferencePortAnswer>;
  close(): Promise<void>;
}
