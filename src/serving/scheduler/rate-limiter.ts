// Triton's rate limiter (--rate-limit execution_count): a global pool of named resources that a model
// instance holds while it executes. Waiting instances are served by weighted priority (an instance
// with priority 2 gets half the turns of one with priority 1); nobody is ever dropped, only delayed.
import { HerdError } from '../../core/errors.ts';

export interface ResourceNeed { name: string; count: number }

interface Waiter {
  needs: readonly ResourceNeed[];
  priority: number;
  key: string;
  virtualTime: number;
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
          throw new HerdError('INVALID_ARG', `instance ${instance} needs ${need.count} of resource '${need.name}' but the rate limiter only has ${have ?? 0}; raise --rate-limit-resource ${need.name}:N`);
        }
      } else if (have === undefined || have < need.count) {
        this.available.set(need.name, need.count);
      }
    }
  }

  /** Resolves with a release function once every need can be held at once. */
  acquire(needs: readonly ResourceNeed[], priority: number, key: string): Promise<() => void> {
    return new Promise((grant) => {
      const start = Math.max(this.virtualTimes.get(key) ?? 0, this.minVirtualTime());
      this.waiters.push({ needs, priority: Math.max(1, priority), key, virtualTime: start, seq: this.seq++, grant });
      this.dispatch();
    });
  }

  /** Units of each resource free right now (for tests and diagnostics). */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.available);
  }

  private minVirtualTime(): number {
    let min = Infinity;
    for (const w of this.waiters) min = Math.min(min, w.virtualTime);
    return min === Infinity ? 0 : min;
  }

  private dispatch(): void {
    this.waiters.sort((a, b) => a.virtualTime - b.virtualTime || a.seq - b.seq);
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (!w.needs.every((n) => (this.available.get(n.name) ?? 0) >= n.count)) {
        still.push(w);
        continue;
      }
      for (const n of w.needs) this.available.set(n.name, (this.available.get(n.name) ?? 0) - n.count);
      this.virtualTimes.set(w.key, w.virtualTime + w.priority);
      let released = false;
      w.grant(() => {
        if (released) return;
        released = true;
        for (const n of w.needs) this.available.set(n.name, (this.available.get(n.name) ?? 0) + n.count);
        this.dispatch();
      });
    }
    this.waiters = still;
  }
}
