// Triton's rate limiter (--rate-limit execution_count): a global pool of named resources that a model
// instance holds while it executes. Waiting instances are served by weighted priority (an instance
// with priority 2 gets half the turns of one with priority 1); nobody is ever dropped, only delayed.
import { HerdError } from '../../core/errors.ts';

export interface ResourceNeed {
  name: string;
  count: number;
}

interface Waiter {
  needs: readonly ResourceNeed[];
  priority: number;
  key: string;
  seq: number;
  grant: (release: () => void) => void;
}

export class RateLimiter {
  private readonly available = new Map<string, number>();
  private readonly explicit: ReadonlySet<string>;
  private waiters: Waiter[] = [];
  private readonly virtualTimes = new Map<string, number>();
  private seq = 0;

  /** `capacity`: resources given on the command line or in herd.yaml; others size themselves. */
  constructor(capacity: ReadonlyMap<string, number>) {
    for (const [name, count] of capacity) this.available.set(name, count);
    this.explicit = new Set(capacity.keys());
  }

  /**
   * Declares an instance's needs. A resource not given explicitly gets the largest count any single
   * instance needs (Triton's default); one given explicitly must be able to satisfy every instance.
   */
  register(needs: readonly ResourceNeed[], instance: string): void {
    for (const need of needs) {
      const have = this.available.get(need.name);
      if (this.explicit.has(need.name)) {
        if ((have ?? 0) < need.count) {
          throw new HerdError(
            'INVALID_ARG',
            `instance ${instance} needs ${need.count} of resource '${need.name}' but the rate limiter only has ${have ?? 0}; raise --rate-limit-resource ${need.name}:N`,
          );
        }
      } else if (have === undefined || have < need.count) {
        this.available.set(need.name, need.count);
      }
    }
  }

  /** Resolves with a release function once every need can be held at once. */
  acquire(needs: readonly ResourceNeed[], priority: number, key: string): Promise<() => void> {
    return new Promise((grant) => {
      if (!this.waiters.some((w) => w.key === key)) {
        // A key that was idle starts level with those waiting: idle time banks no extra turns.
        this.virtualTimes.set(key, Math.max(this.virtualTimes.get(key) ?? 0, this.minWaitingVirtualTime()));
      }
      this.waiters.push({ needs, priority: Math.max(1, priority), key, seq: this.seq++, grant });
      this.dispatch();
    });
  }

  /** Units of each resource free right now (for tests and diagnostics). */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.available);
  }

  private minWaitingVirtualTime(): number {
    let min = Infinity;
    for (const w of this.waiters) min = Math.min(min, this.virtualTimes.get(w.key) ?? 0);
    return min === Infinity ? 0 : min;
  }

  /**
   * Weighted fair order: the key with the least virtual time goes first (FIFO within a key); each
   * grant advances its key's time by its priority, so priority 2 gets half the turns of priority 1.
   * A waiter whose needs do not fit now is passed over, not dropped.
   */
  private dispatch(): void {
    for (;;) {
      const order = [...this.waiters].sort((a, b) => (this.virtualTimes.get(a.key) ?? 0) - (this.virtualTimes.get(b.key) ?? 0) || a.seq - b.seq);
      const next = order.find((w) => w.needs.every((n) => (this.available.get(n.name) ?? 0) >= n.count));
      if (!next) return;
      this.waiters = this.waiters.filter((w) => w !== next);
      for (const n of next.needs) this.available.set(n.name, (this.available.get(n.name) ?? 0) - n.count);
      this.virtualTimes.set(next.key, (this.virtualTimes.get(next.key) ?? 0) + next.priority);
      let released = false;
      next.grant(() => {
        if (released) return;
        released = true;
        for (const n of next.needs) this.available.set(n.name, (this.available.get(n.name) ?? 0) + n.count);
        this.dispatch();
      });
    }
  }
}
