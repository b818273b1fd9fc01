// What a granted acquire holds until its request ends: its leases (renewed while held in a shared
// store, so only a crashed replica's leases lapse) and its window entries (correctable). Released once.
import type { Clock, Timer } from '../../core/clock.ts';
import type { LeaseCheck, LimitCheck, LimitStore, WindowCheck } from './limit-store.ts';

export interface LimitHoldOptions {
  store: LimitStore;
  group: string;
  id: string;
  checks: readonly LimitCheck[];
  clock: Clock;
}

export class LimitHold {
  readonly group: string;
  readonly id: string;
  private readonly store: LimitStore;
  private readonly clock: Clock;
  private readonly leases: LeaseCheck[];
  private readonly costs = new Map<WindowCheck, number>();
  private timer: Timer | undefined;
  private released = false;

  constructor(options: LimitHoldOptions) {
    this.store = options.store;
    this.group = options.group;
    this.id = options.id;
    this.clock = options.clock;
    this.leases = options.checks.filter((c): c is LeaseCheck => c.kind === 'lease');
    for (const c of options.checks) if (c.kind === 'window') this.costs.set(c, c.cost);
    this.scheduleRenewal();
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Re-records `check`'s cost (e.g. tokens actually used instead of the estimate). */
  async adjust(check: WindowCheck, cost: number): Promise<void> {
    const from = this.costs.get(check);
    if (from === undefined || from === cost) return;
    this.costs.set(check, cost);
    await this.store.adjust(this.group, this.id, check, from, cost);
  }

  /** Gives the leases back; idempotent. Resolves when the store has them (callers need not wait). */
  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.released = true;
    this.timer?.cancel();
    return this.store.release(this.group, this.id, this.leases);
  }

  /** In a shared store a lease lapses unless renewed; renewing at a third of its time survives two missed beats. */
  private scheduleRenewal(): void {
    if (!this.store.shared || this.leases.length === 0) return;
    const every = Math.max(1, Math.min(...this.leases.map((l) => l.leaseMs)) / 3);
    const beat = () => {
      if (this.released) return;
      void this.store.renew(this.group, this.id, this.leases).then((more) => {
        if (more && !this.released) this.timer = this.clock.setTimer(beat, every);
      });
    };
    this.timer = this.clock.setTimer(beat, every);
  }
}
