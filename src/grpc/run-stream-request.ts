// One request of a ModelStreamInfer stream run to its final event: converted on the model resolved when it
// arrived, answered through InferenceService.streamInfer, each response (or failure) handed to the stream.
import type { ChatCaller } from '../core/chat-port.ts';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { InferAnswer } from '../serving/infer-call.ts';
import type { LoadedModel } from '../serving/repository/loaded-model.ts';
import type { InferStreamEvent } from '../serving/response-stream.ts';
import { convertGrpcInferRequest, resolveGrpcModel } from './convert-grpc-infer-request.ts';
import { convertGrpcInferResponse } from './convert-grpc-infer-response.ts';
import type { ModelInferRequestMessage, ModelInferResponseMessage, ModelStreamInferResponseMessage } from './grpc-messages.ts';
import { endGrpcTrace, type GrpcServiceDeps, startGrpcInferTrace } from './grpc-service-deps.ts';
import type { InferTrace, ServingTracing } from '../serving/infer-trace.ts';
import type { CallMetadata } from './grpc-call-metadata.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

export type Write = (response: ModelStreamInferResponseMessage) => void;
export type Fail = (error: HerdError, request: ModelInferRequestMessage, final: boolean) => void;
/** A request's model (and who pays, for one that spends), resolved once when it arrives, or why it could not be. */
export type Resolved = { model: LoadedModel; caller: ChatCaller | undefined } | { error: unknown };
export type StreamRequestDeps = Pick<GrpcServiceDeps, 'inference' | 'sharedMemory' | 'log'> & {
  /** Triton's trace settings and the tracer, with the stream's metadata (its traceparent is every request's parent). */
  tracing?: { serving: ServingTracing; metadata: CallMetadata };
};

/** A request's model as it arrives (resolved once: the decoupled test, the conversion and the infer share it), or why not. */
export function resolveStreamRequest(
  inference: StreamRequestDeps['inference'],
  request: ModelInferRequestMessage,
  admit: (model: LoadedModel) => ChatCaller | undefined,
): Resolved {
  try {
    const model = resolveGrpcModel(inference, request);
    return { model, caller: admit(model) };
  } catch (error) {
    return { error };
  }
}

/** Runs one request to its final event, writing each response; resolves when it is complete. */
export async function runStreamRequest(
  deps: StreamRequestDeps,
  request: ModelInferRequestMessage,
  resolved: Resolved,
  signal: AbortSignal,
  write: Write,
  fail: Fail,
): Promise<void> {
  const { inference, sharedMemory: shm } = deps;
  let events: AsyncIterator<InferStreamEvent<InferAnswer>>;
  let outputRegions: ReturnType<typeof convertGrpcInferRequest>['outputRegions'];
  let trace: InferTrace | undefined;
  try {
    if ('error' in resolved) throw resolved.error;
    const converted = convertGrpcInferRequest(request, resolved.model, shm);
    if (resolved.caller !== undefined) converted.call.caller = resolved.caller;
    converted.call.signal = signal;
    if (deps.tracing !== undefined) trace = startGrpcInferTrace(deps.tracing.serving, resolved.model.name, deps.tracing.metadata);
    if (trace !== undefined) converted.call.trace = trace;
    outputRegions = converted.outputRegions;
    events = inference.streamInfer(converted.call, signal, resolved.model)[Symbol.asyncIterator]();
  } catch (err) {
    if (trace !== undefined) endGrpcTrace(trace, err);
    fail(asHerdError(err, deps.log), request, true);
    return;
  }
  try {
    await relayEvents(deps, request, events, outputRegions, write, fail, trace);
  } finally {
    if (trace !== undefined) {
      // relayEvents stops at the final event: finishing the iteration runs streamInfer's REQUEST_END first.
      await events.return?.();
      // After the last response was written: InferRequest ends, Triton mode's records go to the file.
      endGrpcTrace(trace);
    }
  }
}

/** Every event of one request to the stream, in order, until the final one. */
async function relayEvents(
  deps: StreamRequestDeps,
  request: ModelInferRequestMessage,
  events: AsyncIterator<InferStreamEvent<InferAnswer>>,
  outputRegions: ReturnType<typeof convertGrpcInferRequest>['outputRegions'],
  write: Write,
  fail: Fail,
  trace: InferTrace | undefined,
): Promise<void> {
  const shm = deps.sharedMemory;
  const emptyFinal = request.parameters['triton_enable_empty_final_response']?.bool_param === true;
  // The first step runs now, synchronously up to the scheduler: arrival order is submission order.
  let next = events.next();
  const first = next;
  for (;;) {
    let step: IteratorResult<InferStreamEvent<InferAnswer>>;
    try {
      step = await next;
    } catch (err) {
      fail(asHerdError(err, deps.log), request, true);
      return;
    }
    if (step.done) return;
    const event = step.value;
    // Triton's stream handler stamps the request's first response only.
    if (trace !== undefined && next === first) trace.responseComplete();
    if (event.error) {
      fail(event.error, request, event.final);
    } else if (event.answer) {
      try {
        const response = convertGrpcInferResponse(event.answer, outputRegions, shm);
        response.parameters['triton_final_response'] = { bool_param: event.final };
        write({ error_message: '', infer_response: response });
      } catch (err) {
        fail(asHerdError(err, deps.log), request, event.final);
      }
    } else if (emptyFinal) {
      write({ error_message: '', infer_response: identityOf(request, true) });
    }
    if (event.final) return;
    next = events.next();
  }
}

function asHerdError(err: unknown, log: ((line: string) => void) | undefined): HerdError {
  if (!(err instanceof HerdError)) log?.(`internal error: ${formatErrorForLog(err)}`);
  return toHerdError(err);
}

/** A response that only names its request (a failure, or a decoupled model's bare final flag), as Triton fills it. */
export function identityOf(request: ModelInferRequestMessage, final: boolean): ModelInferResponseMessage {
  return {
    model_name: request.model_name,
    model_version: request.model_version,
    id: request.id,
    parameters: { triton_final_response: { bool_param: final } },
    outputs: [],
    raw_output_contents: [],
  };
}
