// ModelInfer's own path: the request decoded straight off the DATA (decode-model-infer-request.ts; typed contents
// through proto-loader), run with the call's signal, the answer encoded once and sent as one message and trailers.
import { HerdError } from '../core/errors.ts';
import type { ServingTracing } from '../serving/infer-trace.ts';
import { convertGrpcInferRequest, resolveGrpcModel } from './convert-grpc-infer-request.ts';
import { convertGrpcInferResponse } from './convert-grpc-infer-response.ts';
import { encodeModelInferResponse } from './encode-model-infer-response.ts';
import { checkGrpcApiGroup } from './grpc-api-guard.ts';
import { admitGrpcCaller } from './grpc-caller.ts';
import type { MessageEncoding } from './grpc-frames.ts';
import type { GrpcHttp2Call } from './grpc-http2-call.ts';
import { logUnexpectedError } from './grpc-inference-service.ts';
import type { ModelInferRequestMessage } from './grpc-messages.ts';
import { endGrpcTrace, type GrpcServiceDeps, servingTracingOf, startGrpcInferTrace } from './grpc-service-deps.ts';
import { decodeModelInferRequest } from './decode-model-infer-request.ts';
import { UndecodableMessage } from './protobuf-reader.ts';

export const MODEL_INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

/** How a route starts a call: the call, and the coding its request messages use. */
export type GrpcRoute = (call: GrpcHttp2Call, encoding: MessageEncoding) => void;

/** Decodes one ModelInferRequest: the hand-written reader, or proto-loader's for typed contents. */
export type InferRequestDecoder = (message: Buffer) => ModelInferRequestMessage;

export function createInferRequestDecoder(deserialize: (message: Buffer) => unknown): InferRequestDecoder {
  return (message) => {
    try {
      return decodeModelInferRequest(message) ?? (deserialize(message) as ModelInferRequestMessage);
    } catch (err) {
      throw err instanceof HerdError ? err : new UndecodableMessage();
    }
  };
}

export function createModelInferRoute(deps: GrpcServiceDeps, decode: InferRequestDecoder, maxMessageBytes: number): GrpcRoute {
  const tracing = servingTracingOf(deps);
  return (call, encoding) => {
    const refusal = checkGrpcApiGroup(deps.apiGuard, 'inference', call.metadata);
    if (refusal !== undefined) {
      call.end(refusal);
      return;
    }
    call.readUnary(MODEL_INFER_PATH, encoding, maxMessageBytes, (message) => {
      let request: ModelInferRequestMessage;
      try {
        request = decode(message);
      } catch (err) {
        call.fail(err);
        return;
      }
      modelInfer(deps, tracing, request, call).then(
        (frame) => call.sendUnary(frame),
        (err: unknown) => {
          logUnexpectedError(err, deps.log);
          call.fail(err);
        },
      );
    });
  };
}

/** One request, traced when Triton's trace settings sample it (its parent from the call's metadata). */
async function modelInfer(deps: GrpcServiceDeps, tracing: ServingTracing, request: ModelInferRequestMessage, grpcCall: GrpcHttp2Call): Promise<Buffer> {
  const { inference, sharedMemory: shm } = deps;
  const model = resolveGrpcModel(inference, request);
  const caller = admitGrpcCaller(deps.callers, model, grpcCall.metadata, grpcCall.getPeer());
  const { call, outputRegions } = convertGrpcInferRequest(request, model, shm);
  if (caller !== undefined) call.caller = caller;
  call.signal = grpcCall.signal;
  const trace = startGrpcInferTrace(tracing, model.name, grpcCall.metadata);
  if (trace === undefined) return encodeModelInferResponse(convertGrpcInferResponse(await inference.infer(call, model), outputRegions, shm));
  call.trace = trace;
  try {
    const answer = await inference.infer(call, model);
    trace.responseComplete();
    const frame = encodeModelInferResponse(convertGrpcInferResponse(answer, outputRegions, shm));
    endGrpcTrace(trace);
    return frame;
  } catch (err) {
    endGrpcTrace(trace, err);
    throw err;
  }
}
