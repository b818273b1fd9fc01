// One reusable ModelInfer round trip with perf_analyzer's timestamps, over a gRPC channel. The request
// is serialized once (PreparedGrpcInferRequest) and the answer counted, not decoded, as on HTTP.
import type { Client, Metadata, ServiceError } from '@grpc/grpc-js';
import type { HerdError } from '../core/errors.ts';
import { createGrpcError } from './create-grpc-error.ts';

/** A ModelInferRequest encoded once, sendable many times. */
export interface PreparedGrpcInferRequest {
  readonly model: string;
  readonly version: string | undefined;
  /** The serialized ModelInferRequest. */
  readonly body: Buffer;
}

export type GrpcExchangeListener = (exchange: TimedGrpcInferExchange) => void;

const MODEL_INFER = '/inference.GRPCInferenceService/ModelInfer';
const passThrough = (bytes: Buffer): Buffer => bytes;

/**
 * Sends a PreparedGrpcInferRequest and records when it left and came back (performance.now() ms).
 * grpc-js reports no "message written" event, so `sentMs` is when the call handed the message to the
 * channel; `responseStartMs` is when the response headers arrived.
 */
export class TimedGrpcInferExchange {
  startMs = 0;
  sentMs = 0;
  responseStartMs = 0;
  endMs = 0;
  statusCode = 0;
  responseBytes = 0;
  error: HerdError | undefined = undefined;
  tag = 0;
  private readonly onMetadata = (): void => {
    this.responseStartMs = performance.now();
  };
  private readonly onAnswer = (err: ServiceError | null, value?: Buffer): void => {
    this.endMs = performance.now();
    if (err) {
      this.statusCode = err.code;
      this.error = createGrpcError(err);
    } else {
      this.responseBytes = value?.byteLength ?? 0;
    }
    this.onDone(this);
  };

  constructor(
    private readonly client: Client,
    private readonly headers: Metadata,
    private readonly onDone: GrpcExchangeListener,
  ) {}

  /** Starts the exchange; onDone runs once when it completes or fails. One send at a time. */
  send(request: PreparedGrpcInferRequest): void {
    this.sentMs = 0;
    this.responseStartMs = 0;
    this.endMs = 0;
    this.statusCode = 0;
    this.responseBytes = 0;
    this.error = undefined;
    this.startMs = performance.now();
    const call = this.client.makeUnaryRequest(MODEL_INFER, passThrough, passThrough, request.body, this.headers.clone(), {}, this.onAnswer);
    call.on('metadata', this.onMetadata);
    this.sentMs = performance.now();
  }

  get latencyMs(): number {
    return this.endMs - this.startMs;
  }
}
