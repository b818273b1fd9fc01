// Open loop: requests leave on a schedule (constant intervals, or Poisson arrivals) whatever the
// server does, so a slow server shows as latency, not as a lower send rate. Finished exchanges go
// back to a free list, so steady state allocates nothing per request.
import { WindowedLoad } from './load-generator.ts';
import type { ExchangePool, TimedExchange } from './timed-exchange.ts';

export type RequestDistribution = 'constant' | 'poisson';

/** A send later than this behind its schedule counts as delayed (timers have ~1 ms granularity). */
const DELAY_TOLERANCE_MS = 1;

export class RequestRateLoad<R> extends WindowedLoad<R> {
  private readonly free: TimedExchange<R>[] = [];
  private readonly onDoneBound = (exchange: TimedExchange<R>) => this.onDone(exchange);
  private readonly tickBound = () => this.tick();
  private readonly intervalMs: number;
  private nextDueMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Pick<ExchangePool<R>, 'createTimedExchange'>,
    request: R,
    rate: number,
    private readonly distribution: RequestDistribution,
    /** Uniform [0, 1) numbers for Poisson gaps (seeded by the caller, so runs repeat). */
    private readonly random: () => number,
  ) {
    super(request);
    this.intervalMs = 1000 / rate;
  }

  start(): void {
    this.running = true;
    this.takeWindow();
    this.nextDueMs = performance.now();
    this.tick();
  }

  protected override onStop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    this.timer = undefined;
    if (!this.running) return;
    const now = performance.now();
    // Catch up on every send that has come due; timers fire at most every ~1 ms.
    while (this.nextDueMs <= now) {
      if (now - this.nextDueMs > DELAY_TOLERANCE_MS) this.window.delayedCount += 1;
      this.send(this.free.pop() ?? this.client.createTimedExchange(this.onDoneBound));
      this.nextDueMs += this.nextGapMs();
    }
    this.timer = setTimeout(this.tickBound, Math.max(0, this.nextDueMs - performance.now()));
  }

  private nextGapMs(): number {
    if (this.distribution === 'constant') return this.intervalMs;
    // Exponential gaps with the same mean; 1 - u keeps log's argument in (0, 1].
    return -Math.log(1 - this.random()) * this.intervalMs;
  }

  private onDone(exchange: TimedExchange<R>): void {
    this.finish(exchange);
    this.free.push(exchange);
  }
}
