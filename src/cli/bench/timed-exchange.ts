// What the load generators need from a transport: reusable timed exchanges (HTTP's TimedInferExchange,
// gRPC's TimedGrpcInferExchange) that send one prepared request at a time, and a pool that makes them.
import type { HerdError } from '../../core/errors.ts';

/** The timestamps (performance.now() ms) and outcome of one finished exchange. */
export interface ExchangeTimes {
  readonly startMs: number;
  readonly sentMs: number;
  readonly responseStartMs: number;
  readonly endMs: number;
  readonly responseBytes: number;
  readonly error: HerdError | undefined;
}

export interface TimedExchange<R> extends ExchangeTimes {
  send(request: R): void;
}

/** A connection pool (HTTP) or channel (gRPC) handing out exchanges. */
export interface ExchangePool<R> {
  createTimedExchange(onDone: (exchange: TimedExchange<R>) => void): TimedExchange<R>;
  destroy(): Promise<void>;
}
