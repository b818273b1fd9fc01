// A traced request on its way to its scheduler: its inputs recorded, a decoupled model's responses watched
// through its sender, a single answer's outputs recorded (Triton's InferenceResponse::Send traces them there).
import type { InferenceRequest, InferenceResult, ResponseSender } from './backends/backend.ts';
import type { ModelTrace } from './infer-trace.ts';

/** How a traced request reaches its model: the model's scheduler (or an ensemble's). */
export interface TracedScheduler {
  submit(request: InferenceRequest): Promise<InferenceResult>;
}

/** Submits `request` traced by `trace`: TENSOR_QUEUE_INPUT, then each response or the one answer reported to it. */
export function submitTraced(request: InferenceRequest, scheduler: TracedScheduler, trace: ModelTrace): Promise<InferenceResult> {
  request.trace = trace;
  trace.recordTensors('TENSOR_QUEUE_INPUT', request.inputs);
  if (request.responseSender !== undefined) {
    request.responseSender = new TracedResponseSender(request.responseSender, trace);
    return scheduler.submit(request);
  }
  const result = scheduler.submit(request);
  if (!trace.tensors) return result;
  return result.then((r) => {
    if (r.ok) trace.recordTensors('TENSOR_BACKEND_OUTPUT', r.outputs);
    return r;
  });
}

/** A decoupled request's sender that tells its trace of every response, then passes it on unchanged. */
export class TracedResponseSender implements ResponseSender {
  constructor(
    private readonly inner: ResponseSender,
    private readonly trace: ModelTrace,
  ) {}

  send(result: InferenceResult, final = false): void {
    // A send the inner sender refuses (after the final response) is no response.
    if (!this.inner.closed) this.trace.response(result, final);
    this.inner.send(result, final);
  }

  close(): void {
    this.inner.close();
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  get signal(): AbortSignal {
    return this.inner.signal;
  }
}
