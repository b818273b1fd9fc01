// What one measurement window saw from the client side. Requests are counted in the window in which
// they complete (perf_analyzer's rule); latencies go into a growable Float64Array, not one object each.
import type { ExchangeTimes } from './timed-exchange.ts';

const INITIAL_CAPACITY = 1024;
/** Distinct error texts kept per window; the rest are counted under their first text. */
const MAX_ERROR_TEXTS = 8;

export class LoadWindow {
  readonly startMs: number;
  endMs = 0;
  okCount = 0;
  failCount = 0;
  /** Requests dispatched while this window was open (open-loop sends, closed-loop re-sends). */
  sentCount = 0;
  /** Open loop only: sends that left more than 1 ms after their scheduled time. */
  delayedCount = 0;
  sendMsTotal = 0;
  recvMsTotal = 0;
  responseBytesTotal = 0;
  /** Error text → how many requests failed with it. */
  readonly errors = new Map<string, number>();
  private latencies = new Float64Array(INITIAL_CAPACITY);

  constructor(startMs: number) {
    this.startMs = startMs;
  }

  /** Accounts one completed exchange. Failed requests count as failures only: no latency, no throughput. */
  record(exchange: ExchangeTimes): void {
    if (exchange.error !== undefined) {
      this.failCount += 1;
      const text = exchange.error.message;
      const seen = this.errors.get(text);
      if (seen !== undefined) this.errors.set(text, seen + 1);
      else if (this.errors.size < MAX_ERROR_TEXTS) this.errors.set(text, 1);
      return;
    }
    if (this.okCount === this.latencies.length) {
      const grown = new Float64Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.okCount] = exchange.endMs - exchange.startMs;
    this.okCount += 1;
    // A request that errored before its body was written has sentMs 0; successes always have it.
    this.sendMsTotal += exchange.sentMs > 0 ? exchange.sentMs - exchange.startMs : 0;
    this.recvMsTotal += exchange.responseStartMs > 0 ? exchange.endMs - exchange.responseStartMs : 0;
    this.responseBytesTotal += exchange.responseBytes;
  }

  /** Latencies (ms) of the successful requests, a view: copy before sorting if the window is reused. */
  latenciesMs(): Float64Array {
    return this.latencies.subarray(0, this.okCount);
  }

  get durationMs(): number {
    return this.endMs - this.startMs;
  }
}
