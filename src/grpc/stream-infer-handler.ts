// ModelStreamInfer: a bidirectional stream of infer requests, each answered through InferenceService.streamInfer
// (one response for ordinary models, any number for decoupled ones, each carrying `triton_final_response`).
// Requests are submitted as they arrive, so a sequence's requests reach the sequence batcher in order;
// ordinary models are answered in request order, decoupled ones as their responses come. A failed request
// answers with `error_message` and the stream stays open, unless the client sent the `triton_grpc_error: true`
// header: then the stream ends with the error's status, as in Triton.
import { HerdError } from '../core/errors.ts';
import { isDecoupledModel } from '../serving/repository/loaded-model.ts';
import type { ModelInferRequestMessage } from './grpc-messages.ts';
import { type GrpcServiceDeps, servingTracingOf } from './grpc-service-deps.ts';
import { checkGrpcApiGroup } from './grpc-api-guard.ts';
import { admitGrpcCaller, readMetadata } from './grpc-caller.ts';
import { convertErrorToServiceError } from './map-grpc-status.ts';
import { type Fail, identityOf, resolveStreamRequest, runStreamRequest, type StreamRequestDeps, type Write } from './run-stream-request.ts';
import type { GrpcHttp2Call } from './grpc-http2-call.ts';
import type { GrpcRoute, InferRequestDecoder } from './model-infer-route.ts';
import { encodeModelStreamInferResponse } from './encode-model-infer-response.ts';

export function createStreamInferHandler(deps: HandlerDeps, decode: InferRequestDecoder, maxMessageBytes: number): GrpcRoute {
  const serving = servingTracingOf(deps);
  return (call, encoding) => {
    // As Triton: a restricted inference group ends the stream with its status before any request is read.
    const refusal = checkGrpcApiGroup(deps.apiGuard, 'inference', call.metadata);
    if (refusal !== undefined) {
      call.end(refusal);
      return;
    }
    const peer = call.getPeer();
    // The stream's metadata names every request's trace parent (Triton reads it per stream too).
    const streamDeps: HandlerDeps = { ...deps, tracing: { serving, metadata: call.metadata } };
    const raiseErrors = readMetadata(call.metadata, 'triton_grpc_error') === 'true';
    // One signal for the stream, every request's: it fires when the client cancels, the stream closes early,
    // its deadline passes, or the stream ends with an error while requests are still out.
    const abort = new AbortController();
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
    call.signal.addEventListener(
      'abort',
      () => {
        open = false;
        abort.abort(call.signal.reason);
        settle();
      },
      { once: true },
    );

    const finish = (error?: HerdError) => {
      if (!open) return;
      open = false;
      if (pending.size > 0) abort.abort(error);
      call.end(error ? convertErrorToServiceError(error) : undefined);
    };
    const write: Write = (response) => {
      if (open) call.write(encodeModelStreamInferResponse(response));
    };
    const fail: Fail = (error, request, final) => {
      if (!open) return;
      if (raiseErrors) finish(error);
      else write({ error_message: error.message, infer_response: identityOf(request, final) });
    };
    const finishWhenAnswered = () => {
      void Promise.all(pending)
        .then(() => finish())
        .finally(resolveDone);
    };
    // Shutdown: requests already received are answered, later ones are refused, then the stream ends.
    deps.trackStream({
      done,
      drain: () => {
        draining = true;
        finishWhenAnswered();
      },
    });

    const onRequest = (message: Buffer) => {
      if (!open) return;
      let request: ModelInferRequestMessage;
      try {
        request = decode(message);
      } catch (err) {
        // As grpc-js: a message that does not decode ends the stream.
        open = false;
        if (pending.size > 0) abort.abort(err);
        call.fail(err);
        settle();
        return;
      }
      if (draining) {
        fail(new HerdError('UNAVAILABLE', 'Server is shutting down'), request, true);
        return;
      }
      const { task, inOrder } = submitRequest(streamDeps, call, peer, request, ordered, abort.signal, write, fail);
      if (inOrder) ordered = task;
      pending.add(task);
      void task.finally(() => pending.delete(task));
    };
    call.read(encoding, maxMessageBytes, onRequest, finishWhenAnswered);
  };
}

type HandlerDeps = Pick<GrpcServiceDeps, 'inference' | 'sharedMemory' | 'trackStream' | 'log' | 'callers' | 'apiGuard' | 'traceSettings' | 'tracer'> & StreamRequestDeps;

/**
 * Runs one request of the stream. A decoupled model answers as its responses come; any other model's
 * responses are held until `ordered` (the requests before it) is answered, and its task joins that order.
 */
function submitRequest(
  deps: HandlerDeps,
  call: GrpcHttp2Call,
  peer: string,
  request: ModelInferRequestMessage,
  ordered: Promise<void>,
  signal: AbortSignal,
  write: Write,
  fail: Fail,
): { task: Promise<void>; inOrder: boolean } {
  // Resolved once: the decoupled test, the conversion and the infer share the handle (or its error).
  const resolved = resolveStreamRequest(deps.inference, request, (model) => admitGrpcCaller(deps.callers, model, call.metadata, peer));
  if ('model' in resolved && isDecoupledModel(resolved.model)) return { task: runStreamRequest(deps, request, resolved, signal, write, fail), inOrder: false };
  const held: (() => void)[] = [];
  const result = runStreamRequest(
    deps,
    request,
    resolved,
    signal,
    (r) => held.push(() => write(r)),
    (e, q, f) => held.push(() => fail(e, q, f)),
  );
  const task = Promise.all([ordered, result]).then(() => {
    for (const flush of held) flush();
  });
  return { task, inOrder: true };
}
