// Closed loop: N requests always outstanding; each completion immediately sends the next from the
// same slot. One timed exchange per slot, reused, and one encoded body shared by all.
import { WindowedLoad } from './load-generator.ts';
import type { ExchangePool, TimedExchange } from './timed-exchange.ts';

export class ConcurrencyLoad<R> extends WindowedLoad<R> {
  private readonly slots: TimedExchange<R>[];

  constructor(client: Pick<ExchangePool<R>, 'createTimedExchange'>, request: R, concurrency: number) {
    super(request);
    const onDone = (exchange: TimedExchange<R>) => this.onDone(exchange);
    this.slots = Array.from({ length: concurrency }, () => client.createTimedExchange(onDone));
  }

  start(): void {
    this.running = true;
    this.takeWindow(); // the first window opens now, not when the generator was built
    for (const slot of this.slots) this.send(slot);
  }

  private onDone(exchange: TimedExchange<R>): void {
    this.finish(exchange);
    if (!this.running) return;
    if (exchange.error === undefined) {
      this.send(exchange);
    } else {
      // A failed dispatch can fail synchronously (closed pool); re-sending on the next turn keeps the
      // stack flat and lets timers (the window clock) run even when every request fails fast.
      setImmediate(() => {
        if (this.running) this.send(exchange);
      });
    }
  }
}
