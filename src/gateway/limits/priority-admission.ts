// Priority admission per upstream model (provider/upstream_model): a concurrency limit with a
// priority queue in front (HIGH, NORMAL, BATCH; aging; queue timeout → 503 + Retry-After).
// Settings come from limits.admission, overridden per upstream model.
import type { AdmissionConfig } from '../../config/limits-config-schema.ts';
import type { Clock } from '../../core/clock.ts';
import type { LimitStore } from './limit-store.ts';
import { PriorityGate, type GatePass, type GateRequest, type GateStats } from './priority-gate.ts';

export interface PriorityAdmissionOptions {
  store: LimitStore;
  clock: Clock;
  config: AdmissionConfig;
  leaseMs: number;
  pollMs: number;
}

export interface ModelQueueStats extends GateStats {
  /** provider/upstream_model */
  upstreamModel: string;
  concurrency: number;
}

export class PriorityAdmission {
  private readonly options: PriorityAdmissionOptions;
  private readonly gates = new Map<string, { gate: PriorityGate; concurrency: number }>();

  constructor(options: PriorityAdmissionOptions) {
    this.options = options;
  }

  /** `upstreamModel` is the deployment key, provider/upstream_model. */
  acquire(upstreamModel: string, request: GateRequest): Promise<GatePass> {
    return this.gateFor(upstreamModel).acquire(request);
  }

  stats(): ModelQueueStats[] {
    return [...this.gates].map(([upstreamModel, { gate, concurrency }]) => ({ upstreamModel, concurrency, ...gate.stats() }));
  }

  private gateFor(upstreamModel: string): PriorityGate {
    const known = this.gates.get(upstreamModel);
    if (known) return known.gate;
    const { config, store, clock, leaseMs, pollMs } = this.options;
    const override = config.models[upstreamModel] ?? {};
    const concurrency = override.concurrency ?? config.concurrency;
    const gate = new PriorityGate({
      subject: `upstream model ${upstreamModel}`,
      group: `model:${upstreamModel}`,
      checks: [{ kind: 'lease', name: 'concurrency', limit: concurrency, leaseMs }],
      store,
      clock,
      pollMs,
      agingMs: override.aging_ms ?? config.aging_ms,
      maxQueue: override.max_queue ?? config.max_queue,
      queueTimeoutMs: override.queue_timeout_ms ?? config.queue_timeout_ms,
    });
    this.gates.set(upstreamModel, { gate, concurrency });
    return gate;
  }
}
