// Per provider account: the upstream plan's own limits (providers.*.limits: rpm, concurrency, e.g.
// a relay plan's 60 RPM / 10 concurrent). Requests queue here, in priority order, rather than go
// out and collect the upstream's 429; one whose slot would come after its deadline fails fast.
import type { Clock } from '../../core/clock.ts';
import type { LimitCheck, LimitStore } from './limit-store.ts';
import { PriorityGate, type GatePass, type GateRequest, type GateStats } from './priority-gate.ts';

/** A provider as the catalog describes it (CatalogProvider fits). */
export interface ProviderLimitTarget {
  name: string;
  settings: { limits: { rpm?: number | undefined; concurrency?: number | undefined } };
}

export interface ProviderLimiterOptions {
  store: LimitStore;
  clock: Clock;
  agingMs: number;
  maxQueue: number;
  leaseMs: number;
  pollMs: number;
  /** The RPM window; a minute unless a test says otherwise. */
  windowMs?: number;
}

export interface ProviderQueueStats extends GateStats {
  provider: string;
}

const FREE_PASS: GatePass = Object.freeze({ waitedMs: 0, release: () => undefined });

export class ProviderLimiter {
  private readonly options: ProviderLimiterOptions;
  /** One gate per provider, built on first use; undefined when the provider has no limits. */
  private readonly gates = new Map<string, PriorityGate | undefined>();

  constructor(options: ProviderLimiterOptions) {
    this.options = options;
  }

  /** Waits (within request.maxWaitMs) for the provider's RPM and concurrency; UNAVAILABLE when it cannot. */
  acquire(provider: ProviderLimitTarget, request: GateRequest): Promise<GatePass> {
    const gate = this.gateFor(provider);
    return gate ? gate.acquire(request) : Promise.resolve(FREE_PASS);
  }

  stats(): ProviderQueueStats[] {
    return [...this.gates].flatMap(([provider, gate]) => (gate ? [{ provider, ...gate.stats() }] : []));
  }

  private gateFor(provider: ProviderLimitTarget): PriorityGate | undefined {
    if (this.gates.has(provider.name)) return this.gates.get(provider.name);
    const { rpm, concurrency } = provider.settings.limits;
    const o = this.options;
    const checks: LimitCheck[] = [];
    if (rpm !== undefined) checks.push({ kind: 'window', name: 'rpm', limit: rpm, windowMs: o.windowMs ?? 60_000, cost: 1 });
    if (concurrency !== undefined) checks.push({ kind: 'lease', name: 'concurrency', limit: concurrency, leaseMs: o.leaseMs });
    const gate =
      checks.length === 0
        ? undefined
        : new PriorityGate({
            subject: `provider ${provider.name}`,
            group: `provider:${provider.name}`,
            checks,
            store: o.store,
            clock: o.clock,
            agingMs: o.agingMs,
            maxQueue: o.maxQueue,
            pollMs: o.pollMs,
          });
    this.gates.set(provider.name, gate);
    return gate;
  }
}
