// One reusable infer round trip with the timestamps perf_analyzer reports (start, request sent,
// response started, end). Built for load generators: one object per in-flight slot, no allocation per send.
import type { Dispatcher } from 'undici';
import type { HerdError } from '../core/errors.ts';
import { createHttpError, createTransportError } from './create-http-error.ts';

/** An infer request encoded once, sendable many times (the body Buffer is never modified). */
export interface PreparedInferRequest {
  readonly model: string;
  readonly version: string | undefined;
  readonly body: Buffer;
  /** Inference-Header-Content-Length, or undefined for a JSON-only body. */
  readonly headerLength: number | undefined;
  readonly dispatchOptions: Dispatcher.DispatchOptions;
}

export type ExchangeListener = (exchange: TimedInferExchange) => void;

/**
 * Sends a PreparedInferRequest and records when it left and came back (performance.now() ms).
 * Uses undici's callback handler (onConnect/onHeaders/...) rather than the newer controller API: only
 * the callback API reports onRequestSent (the "Client Send" time), and undici passes it through
 * without wrapping it in two more objects per request. The response body is counted, not decoded:
 * a benchmark measures the exchange, and decoding would make the generator the bottleneck.
 */
export class TimedInferExchange implements Dispatcher.DispatchHandler {
  startMs = 0;
  sentMs = 0;
  responseStartMs = 0;
  endMs = 0;
  statusCode = 0;
  responseBytes = 0;
  /** Set when the exchange failed: the server's message, or why the connection failed. */
  error: HerdError | undefined = undefined;
  /** Free for the owner (a load generator keeps its bookkeeping here). */
  tag = 0;
  private errorChunks: Buffer[] | undefined = undefined;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly origin: string,
    private readonly onDone: ExchangeListener,
  ) {}

  /** Starts the exchange; onDone runs once when it completes or fails. Not reentrant: one send at a time. */
  send(request: PreparedInferRequest): void {
    this.sentMs = 0;
    this.responseStartMs = 0;
    this.endMs = 0;
    this.statusCode = 0;
    this.responseBytes = 0;
    this.error = undefined;
    this.errorChunks = undefined;
    this.startMs = performance.now();
    this.dispatcher.dispatch(request.dispatchOptions, this);
  }

  get latencyMs(): number {
    return this.endMs - this.startMs;
  }

  onConnect(): void {
    // Nothing to keep: the exchange never aborts on its own.
  }

  onRequestSent(): void {
    this.sentMs = performance.now();
  }

  onHeaders(statusCode: number): boolean {
    if (statusCode < 200) return true; // 1xx informational: the real answer follows
    this.responseStartMs = performance.now();
    this.statusCode = statusCode;
    if (statusCode !== 200) this.errorChunks = [];
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.responseBytes += chunk.byteLength;
    this.errorChunks?.push(chunk);
    return true;
  }

  onComplete(): void {
    this.endMs = performance.now();
    if (this.errorChunks !== undefined) {
      this.error = createHttpError(this.statusCode, Buffer.concat(this.errorChunks), 'inference');
      this.errorChunks = undefined;
    }
    this.onDone(this);
  }

  onError(err: Error): void {
    this.endMs = performance.now();
    this.error = createTransportError(err, this.origin);
    this.onDone(this);
  }
}
