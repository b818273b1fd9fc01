// The one writer of every streamed HTTP answer (the gateway's SSE of each dialect; reusable by
// generate_stream): events that arrive together leave in one write, and a client that does not read
// stops the stream's producer instead of filling Herd's memory (docs/security.md, "Streams and slow readers").
import type { ServerResponse } from 'node:http';

export interface StreamLimits {
  /** A client that has not drained its socket for this long is dropped and its upstream cancelled. */
  idleReaderMs: number;
  /** Bytes queued for one response (Herd's and the socket's buffers) past which the stream is dropped. */
  maxBufferedBytes: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { idleReaderMs: 30_000, maxBufferedBytes: 8 * 1024 * 1024 };

/**
 * Texts sent in the same I/O callback are joined and written once, after its promise jobs have run (a
 * nextTick queued from them runs after them): one chunked-encoding frame instead of one per event.
 * The producer calls `waitForReader()` before pulling its next piece: while the socket's buffer is full
 * (res.write returned false) it resolves only at 'drain'; a reader idle for `idleReaderMs`, or a backlog
 * over `maxBufferedBytes`, calls `onStalled` (cancel the upstream) and destroys the response.
 */
export class SseWriter {
  private pending = '';
  private stalled = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: StreamLimits,
    private readonly onStalled: () => void,
  ) {}

  /** True once the client is gone or was dropped: the producer stops. */
  get closed(): boolean {
    return this.stalled || this.res.destroyed;
  }

  send(text: string): void {
    if (text === '' || this.closed) return;
    if (this.pending === '') process.nextTick(this.flush);
    this.pending += text;
  }

  private readonly flush = (): void => {
    const text = this.pending;
    this.pending = '';
    if (text === '' || this.closed) return;
    this.res.write(text);
    if (this.res.writableLength > this.limits.maxBufferedBytes) this.stall();
  };

  /** Undefined when the client keeps up; else settles once it drained (true) or the stream must stop (false). */
  waitForReader(): Promise<boolean> | undefined {
    const res = this.res;
    if (this.closed) return Promise.resolve(false);
    if (!res.writableNeedDrain) return undefined;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => {
        done(false);
        this.stall();
      }, this.limits.idleReaderMs);
      res.once('drain', onDrain);
      res.once('close', onClose);
    });
  }

  /** Writes what is pending and ends the response (nothing more once it was dropped). */
  end(): void {
    const text = this.pending;
    this.pending = '';
    if (this.closed) return;
    if (text === '') this.res.end();
    else this.res.end(text);
  }

  private stall(): void {
    if (this.stalled) return;
    this.stalled = true;
    this.pending = '';
    this.onStalled();
    this.res.destroy();
  }
}
