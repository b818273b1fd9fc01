// Time as the schedulers see it: a monotonic millisecond clock and cancellable timers, injectable
// so tests can drive batching decisions step by step instead of sleeping.
import { performance } from 'node:perf_hooks';

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Monotonic milliseconds (fractional). */
  now(): number;
  setTimer(callback: () => void, delayMs: number): Timer;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(callback, delayMs) {
    // Node's timers have 1 ms granularity; a 100 µs batching delay would become 1 ms or more.
    // Sub-millisecond waits re-check the clock on each event-loop turn instead.
    if (delayMs < 1) {
      const due = performance.now() + Math.max(0, delayMs);
      let handle: NodeJS.Immediate | undefined;
      const check = () => {
        if (performance.now() >= due) {
          handle = undefined;
          callback();
        } else handle = setImmediate(check);
      };
      handle = setImmediate(check);
      return {
        cancel: () => {
          if (handle) clearImmediate(handle);
        },
      };
    }
    const handle = setTimeout(callback, delayMs);
    return { cancel: () => clearTimeout(handle) };
  },
};

/** A clock that moves only when the test says so; timers fire in due order during advance(). */
export class ManualClock implements Clock {
  private time = 0;
  private timers: { at: number; callback: () => void; id: number }[] = [];
  private nextId = 0;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    const id = this.nextId++;
    this.timers.push({ at: this.time + Math.max(0, delayMs), callback, id });
    return {
      cancel: () => {
        this.timers = this.timers.filter((t) => t.id !== id);
      },
    };
  }

  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t.id !== due.id);
      this.time = due.at;
      due.callback();
    }
    this.time = target;
  }

  get pendingTimers(): number {
    return this.timers.length;
  }
}
