// Closed loop: N requests always outstanding; each completion immediately sends the next from the
// same slot. One TimedInferExchange per slot, reused, and one encoded body shared by all.
import type { KserveHttpClient } from '../../client/kserve-http-client.ts';
import type { PreparedInferRequest, TimedInferExchange } from '../../client/timed-infer-exchange.ts';
import { WindowedLoad } from './load-generator.ts';

export class ConcurrencyLoad extends WindowedLoad {
  private readonly slots: TimedInferExchange[];

  constructor(client: KserveHttpClient, request: PreparedInferRequest, concurrency: number) {
    super(request);
    const onDone = (exchange: TimedInferExchange) => this.onDone(exchange);
    this.slots = Array.from({ length: concurrency }, () => client.createTimedExchange(onDone));
  }

  start(): void {
    this.running = true;
    this.takeWindow(); // the first window opens now, not when the generator was built
    for (const slot of this.slots) this.send(slot);
  }

  private onDone(exchange: TimedInferExchange): void {
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
