// The per-attempt clock of one upstream request: an abort signal (a light one, see abort-link.ts) that follows the caller's
// and also fires on a timeout, which can be paused while the consumer (not the upstream) is slow.
import { type AbortLink, LightAbortController } from '../../core/abort-link.ts';

export class AttemptTimer {
  readonly signal: AbortLink;
  private readonly controller = new LightAbortController();
  private readonly callerSignal: AbortLink;
  private timer: NodeJS.Timeout | undefined;
  private armed = false;
  private fired = false;
  /** The countdown ran out while disarmed: resume() fires at once. */
  private missed = false;
  private ms: number;

  constructor(callerSignal: AbortLink, ms: number) {
    this.signal = this.controller.signal;
    this.callerSignal = callerSignal;
    this.ms = ms;
    if (callerSignal.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    this.arm(ms);
  }

  /** True once the timeout (not the caller) aborted the request. */
  get timedOut(): boolean {
    return this.fired;
  }

  /** The timeout last armed, for error messages. */
  get lastMs(): number {
    return this.ms;
  }

  /** (Re)starts the countdown from now. */
  arm(ms: number): void {
    if (this.timer === undefined || ms !== this.ms) {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.ms = ms;
      this.timer = setTimeout(this.onTimeout, ms);
      this.timer.unref();
    } else {
      this.timer.refresh();
    }
    this.armed = true;
    this.missed = false;
  }

  /** Counts on from where disarm() stopped, without restarting the countdown (arm() restarts it). */
  resume(): void {
    this.armed = true;
    if (this.missed) this.onTimeout();
  }

  /** Stops counting; a pending tick is ignored until the next arm(). */
  disarm(): void {
    this.armed = false;
  }

  dispose(): void {
    this.armed = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.callerSignal.removeEventListener('abort', this.onCallerAbort);
  }

  private readonly onCallerAbort = (): void => {
    this.controller.abort(this.callerSignal.reason);
  };

  private readonly onTimeout = (): void => {
    if (this.controller.signal.aborted) return;
    if (!this.armed) {
      this.missed = true;
      return;
    }
    this.fired = true;
    this.controller.abort(new DOMException('upstream attempt timed out', 'TimeoutError'));
  };
}
