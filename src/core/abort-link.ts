// A cheap stand-in for AbortController/AbortSignal on the gateway's request path: Node 20's
// EventTarget-based signal is dear to create and to listen on, and a request chains three of them
// (docs/decisions/light-abort-signal.md). Real AbortSignals satisfy AbortLink too, so callers and tests may pass either, and
// undici accepts a LightAbortSignal as a request's signal (it is an EventEmitter with addEventListener).
import { EventEmitter } from 'node:events';

/** What the gateway reads of a signal: whether it fired, why, and a listener for when it does. */
export interface AbortLink {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class LightAbortSignal extends EventEmitter implements AbortLink {
  aborted = false;
  reason: unknown = undefined;

  constructor() {
    super();
    // A long stream's signal may collect a listener per retry sleep and relay: not a leak.
    this.setMaxListeners(0);
  }

  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void {
    if (options?.once === true) this.once(type, listener);
    else this.on(type, listener);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    this.off(type, listener);
  }
}

export class LightAbortController {
  readonly signal = new LightAbortSignal();

  /** Fires once; later calls are ignored, as with AbortController. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    const signal = this.signal;
    if (signal.aborted) return;
    signal.aborted = true;
    signal.reason = reason;
    signal.emit('abort');
    signal.removeAllListeners('abort');
  }
}
