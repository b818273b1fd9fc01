// The cancellation signal of one HTTP exchange: it fires when the connection closes before the answer
// was sent (the client went away). Cheap on the hot path: one small object per request, and one 'close'
// listener on the response only once something (a queued request, a running model) listens.
import type { ServerResponse } from 'node:http';
import type { AbortLink } from '../core/abort-link.ts';
import { cancelled } from '../core/errors.ts';

export class ClientGoneSignal implements AbortLink {
  private fired = false;
  private watching = false;
  // Most requests get one listener (the scheduler's): a slot, and an array only for more.
  private first: (() => void) | undefined;
  private more: (() => void)[] | undefined;
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
    if (!this.watching) {
      this.watching = true;
      this.res.on('close', () => this.onClose());
    }
    if (this.first === undefined) this.first = listener;
    else (this.more ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.first === listener) {
      this.first = this.more?.shift();
      return;
    }
    const at = this.more?.indexOf(listener) ?? -1;
    if (at >= 0) this.more?.splice(at, 1);
  }

  /** 'close' follows every response; only one that closed before its answer finished means the client left. */
  private onClose(): void {
    if (!this.fired && !this.res.writableFinished) this.fire();
  }

  private fire(): void {
    this.fired = true;
    this.failure = cancelled('Request cancelled: the client closed the connection before its answer');
    const listeners = this.first === undefined ? [] : [this.first, ...(this.more ?? [])];
    this.first = undefined;
    this.more = undefined;
    for (const listener of listeners) listener();
  }
}
