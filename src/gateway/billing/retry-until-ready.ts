// Runs a start-up step (connect, migrate, replay) until it succeeds, waiting longer after each failure, so a
// service can start and serve before a database it needs answers; the step itself must be safe to repeat.
import { type BackoffPolicy, computeBackoffMs } from '../resilience/backoff.ts';

export interface RetryUntilReadyOptions {
  step: () => Promise<void>;
  /** Waits between attempts (full jitter below a doubling ceiling, never below half of it: a retry storm helps nobody). */
  backoff: BackoffPolicy;
  /** After every failed attempt, before the wait. */
  onFailure?: (error: unknown, attempt: number, retryInMs: number) => void;
  /** Once, after the step succeeded (not called when the first attempt succeeds: the caller knows). */
  onReady?: (attempts: number) => void;
  random?: () => number;
}

export class RetryUntilReady {
  /** Settles once the step succeeded; never rejects (stop() leaves it pending). */
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private attempts = 0;
  private done = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<boolean> | undefined;
  private error: unknown;

  constructor(private readonly options: RetryUntilReadyOptions) {
    this.ready = new Promise<void>((resolve) => {
      this.markReady = resolve;
    });
  }

  get isReady(): boolean {
    return this.done;
  }

  /** The last attempt's failure while not ready; undefined once ready. */
  get lastError(): unknown {
    return this.done ? undefined : this.error;
  }

  /** One attempt now (a caller that must know at once, e.g. start-up); true when the step succeeded. */
  async attempt(): Promise<boolean> {
    if (this.done) return true;
    this.running ??= this.runStep().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Keeps attempting in the background until the step succeeds or stop() is called. */
  retryInBackground(): void {
    if (this.done || this.stopped || this.timer !== undefined) return;
    const ceiling = Math.min(this.options.backoff.capMs, this.options.backoff.baseMs * 2 ** Math.max(0, this.attempts - 1));
    const wait = Math.max(Math.floor(ceiling / 2), computeBackoffMs(this.attempts, this.options.backoff, this.options.random ?? Math.random));
    this.options.onFailure?.(this.error, this.attempts, wait);
    // A process that has nothing else to do may exit: close() stops the loop anyway.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.attempt().then((ok) => {
        if (ok) this.options.onReady?.(this.attempts);
        else this.retryInBackground();
      });
    }, wait).unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async runStep(): Promise<boolean> {
    this.attempts++;
    try {
      await this.options.step();
    } catch (err) {
      this.error = err;
      return false;
    }
    this.done = true;
    this.error = undefined;
    this.markReady();
    return true;
  }
}
