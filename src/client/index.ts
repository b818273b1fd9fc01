// The KServe v2 HTTP client SDK's public surface: import from here, not from the modules.
export { KserveHttpClient, type KserveHttpClientOptions } from './kserve-http-client.ts';
export { TimedInferExchange, type ExchangeListener, type PreparedInferRequest } from './timed-infer-exchange.ts';
export { createInferRequestBody, type InferRequestBody, type InferRequestBodyOptions } from './encode-infer-request.ts';
export { parseInferResponseBody } from './parse-infer-response.ts';
export { createHttpError, createTransportError, mapHttpStatusToErrorCode } from './create-http-error.ts';
export { parseServerUrl } from './parse-server-url.ts';
export type {
  InferInput,
  InferOptions,
  InferResult,
  ModelConfigDocument,
  ModelMetadata,
  ModelStatistics,
  RequestedOutput,
  SharedMemoryPlacement,
  ServerMetadata,
  StatDuration,
  TensorMetadata,
} from './kserve-types.ts';
export { KserveGrpcClient, type KserveGrpcClientOptions, type InferStream, type StreamInferEvent } from './kserve-grpc-client.ts';
export { createGrpcError, mapGrpcStatusToErrorCode } from './create-grpc-error.ts';
export { TimedGrpcInferExchange, type GrpcExchangeListener, type PreparedGrpcInferRequest } from './timed-grpc-infer-exchange.ts';
