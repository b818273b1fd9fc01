// ModelStreamInfer: a bidirectional stream of infer requests, each answered through InferenceService.streamInfer
// (one response for ordinary models, any number for decoupled ones, each carrying `triton_final_response`).
// Requests are submitted as they arrive, so a sequence's requests reach the sequence batcher in order;
// ordinary models are answered in request order, decoupled ones as their responses come. A failed request
// answers with `error_message` and the stream stays open, unless the client sent the `triton_grpc_error: true`
// header: then the stream ends with the error's status, as in Triton.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { InferAnswer } from '../serving/infer-call.ts';
import { isDecoupledModel, type LoadedModel } from '../serving/repository/loaded-model.ts';
import type { InferStreamEvent } from '../serving/response-stream.ts';
import { convertGrpcInferRequest, resolveGrpcModel } from './convert-grpc-infer-request.ts';
import { convertGrpcInferResponse } from './convert-grpc-infer-response.ts';
import type { ModelInferRequestMessage, ModelInferResponseMessage, ModelStreamInferResponseMessage } from './grpc-messages.ts';
import type { GrpcServiceDeps } from './grpc-service-deps.ts';
import { convertErrorToServiceError } from './map-grpc-status.ts';

type StreamCall = ServerDuplexStream<ModelInferRequestMessage, ModelStreamInferResponseMessage>;
type Write = (response: ModelStreamInferResponseMessage) => void;
type Fail = (error: HerdError, request: ModelInferRequestMessage, final: boolean) => void;
/** A request's model, resolved once when it arrives, or why it could not be. */
type Resolved = { model: LoadedModel } | { error: unknown };

export function createStreamInferHandler(deps: Pick<GrpcServiceDeps, 'inference' | 'sharedMemory' | 'trackStream' | 'log'>) {
  const { inference, sharedMemory: shm } = deps;

  /** Runs one request to its final event, writing each response; resolves when it is complete. */
  const run = async (request: ModelInferRequestMessage, resolved: Resolved, signal: AbortSignal, write: Write, fail: Fail): Promise<void> => {
    let events: AsyncIterator<InferStreamEvent<InferAnswer>>;
    let outputRegions: ReturnType<typeof convertGrpcInferRequest>['outputRegions'];
    try {
      if ('error' in resolved) throw resolved.error;
      const converted = convertGrpcInferRequest(request, resolved.model, shm);
      outputRegions = converted.outputRegions;
      events = inference.streamInfer(converted.call, signal, resolved.model)[Symbol.asyncIterator]();
    } catch (err) {
      fail(asHerdError(err, deps.log), request, true);
      return;
    }
    const emptyFinal = request.parameters['triton_enable_empty_final_response']?.bool_param === true;
    // The first step runs now, synchronously up to the scheduler: arrival order is submission order.
    let next = events.next();
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
  };

  return (call: StreamCall) => {
    const raiseErrors = call.metadata.get('triton_grpc_error')[0] === 'true';
    const aborts = new Set<AbortController>();
    // Ordinary models answer in request order: each waits for the one before it.
    let ordered: Promise<void> = Promise.resolve();
    const pending = new Set<Promise<void>>();
    let open = true;
    let draining = false;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    const settle = () => {
      void Promise.all(pending).finally(resolveDone);
    };

    const finish = (error?: HerdError) => {
      if (!open) return;
      open = false;
      for (const a of aborts) a.abort();
      if (error) call.emit('error', convertErrorToServiceError(error));
      else call.end();
    };
    const write: Write = (response) => {
      if (open) call.write(response);
    };
    const fail: Fail = (error, request, final) => {
      if (!open) return;
      if (raiseErrors) finish(error);
      else write({ error_message: error.message, infer_response: identityOf(request, final) });
    };
    // Shutdown: requests already received are answered, later ones are refused, then the stream ends.
    deps.trackStream({
      done,
      drain: () => {
        draining = true;
        void Promise.all(pending)
          .then(() => finish())
          .finally(resolveDone);
      },
    });

    call.on('data', (request: ModelInferRequestMessage) => {
      if (!open) return;
      if (draining) {
        fail(new HerdError('UNAVAILABLE', 'Server is shutting down'), request, true);
        return;
      }
      const abort = new AbortController();
      aborts.add(abort);
      let task: Promise<void>;
      // Resolved once: the decoupled test, the conversion and the infer share the handle (or its error).
      const resolved = resolve(request);
      if ('model' in resolved && isDecoupledModel(resolved.model)) {
        task = run(request, resolved, abort.signal, write, fail);
      } else {
        // Buffer this request's responses until the requests before it are answered.
        const held: (() => void)[] = [];
        const result = run(
          request,
          resolved,
          abort.signal,
          (r) => held.push(() => write(r)),
          (e, q, f) => held.push(() => fail(e, q, f)),
        );
        task = ordered = Promise.all([ordered, result]).then(() => {
          for (const flush of held) flush();
        });
      }
      pending.add(task);
      void task.finally(() => {
        pending.delete(task);
        aborts.delete(abort);
      });
    });
    call.on('end', () => {
      void Promise.all(pending)
        .then(() => finish())
        .finally(resolveDone);
    });
    call.on('cancelled', () => {
      open = false;
      for (const a of aborts) a.abort();
      settle();
    });
    call.on('error', () => {
      open = false;
      for (const a of aborts) a.abort();
      settle();
    });
  };

  function resolve(request: ModelInferRequestMessage): Resolved {
    try {
      return { model: resolveGrpcModel(inference, request) };
    } catch (error) {
      return { error };
    }
  }
}

function asHerdError(err: unknown, log: ((line: string) => void) | undefined): HerdError {
  if (!(err instanceof HerdError)) log?.(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return toHerdError(err);
}

/** A response that only names its request (a failure, or a decoupled model's bare final flag), as Triton fills it. */
function identityOf(request: ModelInferRequestMessage, final: boolean): ModelInferResponseMessage {
  return {
    model_name: request.model_name,
    model_version: request.model_version,
    id: request.id,
    parameters: { triton_final_response: { bool_param: final } },
    outputs: [],
    raw_output_contents: [],
  };
}
