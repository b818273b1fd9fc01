// ModelStreamInfer: a bidirectional stream of infer requests. Each request is submitted when it arrives
// (so a sequence's requests reach the sequence batcher in order) and answered in arrival order. A failed
// request answers with `error_message` and the stream stays open, unless the client sent the
// `triton_grpc_error: true` header: then the stream ends with the error's status, as in Triton.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { HerdError, toHerdError } from '../core/errors.ts';
import { convertGrpcInferRequest, parseGrpcVersion } from './convert-grpc-infer-request.ts';
import { convertGrpcInferResponse } from './convert-grpc-infer-response.ts';
import type { ModelInferRequestMessage, ModelInferResponseMessage, ModelStreamInferResponseMessage } from './grpc-messages.ts';
import type { GrpcServiceDeps } from './grpc-inference-service.ts';
import { convertErrorToServiceError } from './map-grpc-status.ts';

type StreamCall = ServerDuplexStream<ModelInferRequestMessage, ModelStreamInferResponseMessage>;

export function createStreamInferHandler(deps: Pick<GrpcServiceDeps, 'inference' | 'sharedMemory' | 'trackStream' | 'log'>) {
  const { inference, sharedMemory: shm } = deps;

  const answer = async (request: ModelInferRequestMessage): Promise<ModelStreamInferResponseMessage> => {
    try {
      inference.config(request.model_name, parseGrpcVersion(request.model_version));
      const { call, outputRegions } = convertGrpcInferRequest(request, shm);
      const pending = inference.infer(call);
      const response = convertGrpcInferResponse(await pending, outputRegions, shm);
      response.parameters['triton_final_response'] = { bool_param: true };
      return { error_message: '', infer_response: response };
    } catch (err) {
      if (!(err instanceof HerdError)) deps.log?.(`internal error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      throw new StreamRequestError(toHerdError(err), request);
    }
  };

  return (call: StreamCall) => {
    const raiseErrors = call.metadata.get('triton_grpc_error')[0] === 'true';
    // Answers are written in request order: each waits for the one before it.
    let tail: Promise<void> = Promise.resolve();
    let open = true;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => { resolveDone = resolve; });
    let draining = false;
    // Shutdown: requests already received are answered, later ones are refused, then the stream ends.
    deps.trackStream({ done, drain: () => { draining = true; void tail.then(() => finish()).finally(resolveDone); } });

    const finish = (error?: HerdError) => {
      if (!open) return;
      open = false;
      if (error) call.emit('error', convertErrorToServiceError(error));
      else call.end();
    };
    call.on('data', (request: ModelInferRequestMessage) => {
      if (!open) return;
      const result = draining ? Promise.reject(new StreamRequestError(new HerdError('UNAVAILABLE', 'Server is shutting down'), request)) : answer(request);
      // Unhandled until its turn: mark it handled now, the chain reads it below.
      result.catch(() => undefined);
      tail = tail.then(() => result.then(
        (response) => { if (open) call.write(response); },
        (err: StreamRequestError) => {
          if (!open) return;
          if (raiseErrors) {
            finish(err.cause);
            return;
          }
          call.write({ error_message: err.cause.message, infer_response: errorResponse(err.request) });
        },
      ));
    });
    call.on('end', () => { void tail.then(() => finish()).finally(resolveDone); });
    call.on('cancelled', () => { open = false; void tail.finally(resolveDone); });
    call.on('error', () => { open = false; void tail.finally(resolveDone); });
  };
}

class StreamRequestError extends Error {
  constructor(override readonly cause: HerdError, readonly request: ModelInferRequestMessage) {
    super(cause.message);
  }
}

/** The failed request's identity, so the client knows which request failed (Triton repopulates the id). */
function errorResponse(request: ModelInferRequestMessage): ModelInferResponseMessage {
  return {
    model_name: request.model_name, model_version: request.model_version, id: request.id,
    parameters: { triton_final_response: { bool_param: true } }, outputs: [], raw_output_contents: [],
  };
}
