// Every gRPC method Herd serves, by its HTTP/2 path: ModelInfer and ModelStreamInfer on their own paths, every
// other unary method of GRPCInferenceService and grpc.health.v1.Health through one adapter over proto-loader's
// codecs (their cost does not matter; their handlers stay as they were).
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { checkGrpcApiGroup } from './grpc-api-guard.ts';
import { createGrpcInferenceService, createHealthCheck, logUnexpectedError, type Message, type UnaryMethod } from './grpc-inference-service.ts';
import type { GrpcServiceDeps } from './grpc-service-deps.ts';
import { loadGrpcProtos } from './load-grpc-protos.ts';
import { createInferRequestDecoder, createModelInferRoute, type GrpcRoute } from './model-infer-route.ts';
import { createStreamInferHandler } from './stream-infer-handler.ts';
import { UndecodableMessage } from './protobuf-reader.ts';

type AnyMethod = MethodDefinition<unknown, unknown>;

export function createGrpcRoutes(deps: GrpcServiceDeps, maxMessageBytes: number): Map<string, GrpcRoute> {
  const protos = loadGrpcProtos();
  const inference = protos['inference.GRPCInferenceService'] as ServiceDefinition;
  const health = protos['grpc.health.v1.Health'] as ServiceDefinition;
  const routes = new Map<string, GrpcRoute>();
  const modelInfer = inference['ModelInfer'] as AnyMethod;
  const decode = createInferRequestDecoder((message) => modelInfer.requestDeserialize(message));
  routes.set(modelInfer.path, createModelInferRoute(deps, decode, maxMessageBytes));
  routes.set((inference['ModelStreamInfer'] as AnyMethod).path, createStreamInferHandler(deps, decode, maxMessageBytes));
  for (const [name, method] of Object.entries(createGrpcInferenceService(deps))) {
    const definition = inference[name] as AnyMethod;
    routes.set(definition.path, createUnaryRoute(definition, method, deps, maxMessageBytes));
  }
  const check = health['Check'] as AnyMethod;
  routes.set(check.path, createUnaryRoute(check, createHealthCheck(deps.isReady), deps, maxMessageBytes));
  return routes;
}

function createUnaryRoute(definition: AnyMethod, method: UnaryMethod, deps: GrpcServiceDeps, maxMessageBytes: number): GrpcRoute {
  return (call, encoding) => {
    call.readUnary(definition.path, encoding, maxMessageBytes, (message) => {
      const refusal = checkGrpcApiGroup(deps.apiGuard, method.group, call.metadata);
      if (refusal !== undefined) {
        call.end(refusal);
        return;
      }
      let request: Message;
      try {
        request = definition.requestDeserialize(message) as Message;
      } catch {
        call.fail(new UndecodableMessage());
        return;
      }
      const failed = (err: unknown) => {
        logUnexpectedError(err, deps.log);
        call.fail(err);
      };
      const answer = (value: unknown) => {
        let body: Buffer;
        try {
          body = definition.responseSerialize(value);
        } catch (err) {
          failed(err);
          return;
        }
        const frame = Buffer.allocUnsafe(5 + body.length);
        frame[0] = 0;
        frame.writeUInt32BE(body.length, 1);
        body.copy(frame, 5);
        call.sendUnary(frame);
      };
      try {
        const result = method.run(request, call);
        if (result instanceof Promise) result.then(answer, failed);
        else answer(result);
      } catch (err) {
        failed(err);
      }
    });
  };
}
