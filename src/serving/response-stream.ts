// The responses of one decoupled request: the backend pushes them through the ResponseSender side, the
// transport reads them as an async iterable, in order, ending after the final one.
import type { AbortLink } from '../core/abort-link.ts';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { InferenceResult, ResponseSender } from './backends/backend.ts';

/** One event of a request's response stream. */
export interface InferStreamEvent<Answer> {
  /** Absent on a bare completion (a decoupled model may close with no last response) and on errors. */
  answer?: Answer;
  error?: HerdError;
  /** True on the last event of the request. */
  final: boolean;
}

export class ResponseStream<Answer> implements ResponseSender, AsyncIterable<InferStreamEvent<Answer>> {
  private readonly events: InferStreamEvent<Answer>[] = [];
  private wake: (() => void) | undefined;
  private complete = false;
  private readonly controller = new AbortController();

  /** `toAnswer` shapes a backend's outputs for the client (requested subset, classification); it may throw. */
  constructor(
    private readonly toAnswer: (result: Extract<InferenceResult, { ok: true }>) => Answer,
    cancel?: AbortLink,
  ) {
    if (cancel?.aborted) this.controller.abort(cancel.reason);
    else cancel?.addEventListener('abort', () => this.controller.abort(cancel.reason), { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.complete;
  }

  send(result: InferenceResult, final = false): void {
    if (this.complete) throw new HerdError('INTERNAL', 'Unable to send a response: the response sender is closed (the final response was already sent)');
    let event: InferStreamEvent<Answer>;
    if (result.ok) {
      try {
        event = { answer: this.toAnswer(result), final };
      } catch (err) {
        event = { error: toHerdError(err), final };
      }
    } else {
      event = { error: result.error, final };
    }
    this.push(event);
  }

  close(): void {
    if (!this.complete) this.push({ final: true });
  }

  /** Cancels the request: the backend sees its signal aborted. */
  cancel(reason?: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  private push(event: InferStreamEvent<Answer>): void {
    if (event.final) this.complete = true;
    this.events.push(event);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<InferStreamEvent<Answer>> {
    let done = false;
    try {
      while (!done) {
        const event = this.events.shift();
        if (event === undefined) {
          await new Promise<void>((resolve) => (this.wake = resolve));
          continue;
        }
        done = event.final;
        yield event;
      }
    } finally {
      // A reader that stops early (a client gone away) cancels what is still running.
      if (!done) this.cancel();
    }
  }
}
