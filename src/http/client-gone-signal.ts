// The cancellation signal of one HTTP exchange: it fires when the connection closes before the answer
// was sent (the client went away). Cheap on the hot path: one small object per request, and one 'close'
// listener on the response only once something (a queued request, a running model) listens.
import type { ServerResponse } from 'node:http';
import type { AbortLink } from '../core/abort-link.ts';
import { cancelled } from '../core/errors.ts';

export class ClientGoneSignal implements AbortLink {
  private fired = false;
  private listeners: (() => void)[] | undefined;
  private failure: unknown;

  constructor(private readonly res: ServerResponse) {}

  /** Also true before anyone listened, once the connection is gone with no answer sent. */
  get aborted(): boolean {
    if (!this.fired && this.res.destroyed && !this.res.writableFinished) this.fire();
    return this.fired;
  }

  get reason(): unknown {
    return this.aborted ? this.failure : undefined;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.fired) return;
    if (this.listeners === undefined) {
      this.listeners = [];
      this.res.once('close', this.onClose);
    }
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners?.splice(at, 1);
  }

  private readonly onClose = (): void => {
    // 'close' follows every response; only one that closed before its answer finished means the client left.
    if (!this.fired && !this.res.writableFinished) this.fire();
  };

  private fire(): void {
    this.fired = true;
    this.failure = cancelled('Request cancelled: the client closed the connection before its answer');
    const listeners = this.listeners ?? [];
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}
