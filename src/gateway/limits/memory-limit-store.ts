// LimitStore for one replica: sliding-window logs and lease sets in this process's memory, with the
// same semantics as the Redis scripts. Every effect happens synchronously inside the call, so a
// release is visible to the next acquire at once (the priority queues rely on that).
import { systemClock, type Clock } from '../../core/clock.ts';
import type { LeaseCheck, LimitCheck, LimitDecision, LimitRefusal, LimitStore, WindowCheck } from './limit-store.ts';

interface WindowEntry {
  id: string;
  at: number;
  cost: number;
}

/** Entries oldest first; `total` is their summed cost. */
interface WindowLog {
  entries: WindowEntry[];
  byId: Map<string, WindowEntry>;
  total: number;
  windowMs: number;
}

export class MemoryLimitStore implements LimitStore {
  readonly shared = false;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly windows = new Map<string, WindowLog>();
  /** Lease holders by counter. No expiry here: if this process dies its leases die with it. */
  private readonly leases = new Map<string, Set<string>>();
  private sweptAt: number;

  constructor(clock: Pick<Clock, 'now'> = systemClock) {
    this.clock = clock;
    this.sweptAt = clock.now();
  }

  async acquire(group: string, id: string, checks: readonly LimitCheck[]): Promise<LimitDecision> {
    return this.acquireNow(group, id, checks);
  }

  acquireNow(group: string, id: string, checks: readonly LimitCheck[]): LimitDecision {
    const now = this.clock.now();
    this.sweepIdle(now);
    const refusals: LimitRefusal[] = [];
    checks.forEach((check, index) => {
      const refusal = check.kind === 'window' ? this.checkWindow(`${group}:${check.name}`, check, now) : this.checkLease(`${group}:${check.name}`, check);
      if (refusal) refusals.push({ ...refusal, index });
    });
    if (refusals.length > 0) return { granted: false, refusals };
    for (const check of checks) {
      const key = `${group}:${check.name}`;
      if (check.kind === 'lease') {
        this.leaseSet(key).add(id);
        continue;
      }
      const log = this.windowLog(key, check.windowMs);
      const entry = { id, at: now, cost: check.cost };
      log.entries.push(entry);
      log.byId.set(id, entry);
      log.total += check.cost;
    }
    return { granted: true };
  }

  async adjust(group: string, id: string, check: WindowCheck, _fromCost: number, toCost: number): Promise<void> {
    const log = this.windows.get(`${group}:${check.name}`);
    const entry = log?.byId.get(id);
    if (!log || !entry) return;
    log.total += toCost - entry.cost;
    entry.cost = toCost;
  }

  async release(group: string, id: string, leases: readonly LeaseCheck[]): Promise<void> {
    for (const lease of leases) {
      const key = `${group}:${lease.name}`;
      const set = this.leases.get(key);
      if (!set) continue;
      set.delete(id);
      if (set.size === 0) this.leases.delete(key);
    }
  }

  async renew(): Promise<boolean> {
    // Leases never expire in memory: nothing to extend (and LimitHold never asks).
    return false;
  }

  async close(): Promise<void> {
    this.windows.clear();
    this.leases.clear();
  }

  private checkWindow(key: string, check: WindowCheck, now: number): Omit<LimitRefusal, 'index'> | undefined {
    const log = this.windows.get(key);
    if (log) purge(log, now);
    const used = log?.total ?? 0;
    if (used + check.cost <= check.limit) return undefined;
    if (check.cost > check.limit) return { used, retryAfterMs: undefined, neverFits: true };
    // The wait until enough of the oldest entries have left for this cost to fit.
    let freed = 0;
    for (const entry of log?.entries ?? []) {
      freed += entry.cost;
      if (used - freed + check.cost <= check.limit) return { used, retryAfterMs: entry.at + check.windowMs - now, neverFits: false };
    }
    return { used, retryAfterMs: check.windowMs, neverFits: false };
  }

  private checkLease(key: string, check: LeaseCheck): Omit<LimitRefusal, 'index'> | undefined {
    const held = this.leases.get(key)?.size ?? 0;
    return held < check.limit ? undefined : { used: held, retryAfterMs: undefined, neverFits: check.limit < 1 };
  }

  private windowLog(key: string, windowMs: number): WindowLog {
    let log = this.windows.get(key);
    if (!log) {
      log = { entries: [], byId: new Map(), total: 0, windowMs };
      this.windows.set(key, log);
    }
    return log;
  }

  private leaseSet(key: string): Set<string> {
    let set = this.leases.get(key);
    if (!set) {
      set = new Set();
      this.leases.set(key, set);
    }
    return set;
  }

  /** Drops logs of counters nobody touched for a whole window, so idle keys do not pile up. */
  private sweepIdle(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [key, log] of this.windows) {
      purge(log, now);
      if (log.entries.length === 0) this.windows.delete(key);
    }
  }
}

/** An entry counts while `at > now − windowMs`, as in the Redis script. */
function purge(log: WindowLog, now: number): void {
  const cutoff = now - log.windowMs;
  let drop = 0;
  while (drop < log.entries.length && (log.entries[drop] as WindowEntry).at <= cutoff) {
    const entry = log.entries[drop] as WindowEntry;
    log.total -= entry.cost;
    log.byId.delete(entry.id);
    drop++;
  }
  if (drop > 0) log.entries.splice(0, drop);
}
