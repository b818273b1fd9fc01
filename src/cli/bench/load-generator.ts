// The contract both load shapes share (closed-loop concurrency, open-loop request rate), and the
// window switching, in-flight counting and draining they have in common.
import { LoadWindow } from './load-window.ts';
import type { TimedExchange } from './timed-exchange.ts';

export interface LoadGenerator {
  /** Starts sending and opens the first window. */
  start(): void;
  /** Closes the current window and opens the next at the same instant: windows never overlap or leave gaps. */
  takeWindow(): LoadWindow;
  /** Stops sending; resolves when every request in flight has completed or failed. */
  stop(): Promise<void>;
  readonly inFlight: number;
}

export abstract class WindowedLoad<R> implements LoadGenerator {
  protected window = new LoadWindow(performance.now());
  protected running = false;
  private inFlightCount = 0;
  private drained: (() => void) | undefined;

  constructor(protected readonly request: R) {}

  abstract start(): void;

  get inFlight(): number {
    return this.inFlightCount;
  }

  takeWindow(): LoadWindow {
    const now = performance.now();
    const finished = this.window;
    finished.endMs = now;
    this.window = new LoadWindow(now);
    return finished;
  }

  stop(): Promise<void> {
    this.running = false;
    this.onStop();
    if (this.inFlightCount === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }

  /** Subclasses cancel their timers here. */
  protected onStop(): void {}

  protected send(exchange: TimedExchange<R>): void {
    this.inFlightCount += 1;
    this.window.sentCount += 1;
    exchange.send(this.request);
  }

  /** Records a finished exchange into the open window; the subclass decides what the exchange does next. */
  protected finish(exchange: TimedExchange<R>): void {
    this.window.record(exchange);
    this.inFlightCount -= 1;
    if (!this.running && this.inFlightCount === 0) this.drained?.();
  }
}
