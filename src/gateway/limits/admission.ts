// The chat service's admission hook: before each upstream attempt, a slot on its upstream model
// (priority admission) and then on its provider account (the plan's RPM and concurrency), held
// until the attempt ends — for a stream, until its last chunk.
import type { AbortLink } from '../../core/abort-link.ts';
import type { Clock } from '../../core/clock.ts';
import type { GatePass } from './priority-gate.ts';
import type { ModelQueueStats, PriorityAdmission } from './priority-admission.ts';
import type { Priority } from './priority.ts';
import type { ProviderLimiter, ProviderLimitTarget, ProviderQueueStats } from './provider-limiter.ts';

/** The deployment an attempt goes to (the catalog's CatalogDeployment fits). */
export interface AdmissionTarget {
  /** provider/upstream_model */
  key: string;
  provider: ProviderLimitTarget;
}

export interface AdmissionRequest {
  deployment: AdmissionTarget;
  priority: Priority;
  /** The client's signal: aborting it leaves the queue, rejecting with its reason. */
  signal: AbortLink;
  /** Longest total wait (what is left of the request's deadline). */
  maxWaitMs: number;
}

export interface AdmissionPermit {
  /** Time spent queued for this attempt. */
  readonly waitedMs: number;
  /** Frees the slots; idempotent. */
  release(): void;
}

/**
 * Rejects with HerdError UNAVAILABLE (with retryAfterSeconds) when no slot comes in time or the
 * queue is full — the attempt loop then tries the next deployment — or with the signal's reason.
 */
export interface Admission {
  acquire(request: AdmissionRequest): Promise<AdmissionPermit>;
}

export interface AdmissionStats {
  models: ModelQueueStats[];
  providers: ProviderQueueStats[];
}

export interface GatewayAdmissionOptions {
  models?: PriorityAdmission | undefined;
  providers?: ProviderLimiter | undefined;
  clock: Clock;
}

const NO_PASS: GatePass = Object.freeze({ waitedMs: 0, release: () => undefined });

/** What an attempt holds when there is no admission hook. */
export const NO_ADMISSION: AdmissionPermit = NO_PASS;

/** A permit settled exactly once by one of three outcomes (the breaker's). */
export interface OutcomePermit {
  success(): void;
  failure(): void;
  release(): void;
}

/**
 * `permit`, also freeing the admission slots when settled. The attempt's lease settles its permit
 * exactly once, when the attempt ends — for a stream, at its end — so the slot is held that long.
 */
export function holdAdmission(permit: OutcomePermit, admitted: AdmissionPermit): OutcomePermit {
  if (admitted === NO_ADMISSION) return permit;
  return {
    success: () => {
      permit.success();
      admitted.release();
    },
    failure: () => {
      permit.failure();
      admitted.release();
    },
    release: () => {
      permit.release();
      admitted.release();
    },
  };
}

export class GatewayAdmission implements Admission {
  private readonly models: PriorityAdmission | undefined;
  private readonly providers: ProviderLimiter | undefined;
  private readonly clock: Clock;

  constructor(options: GatewayAdmissionOptions) {
    this.models = options.models;
    this.providers = options.providers;
    this.clock = options.clock;
  }

  /**
   * Model slot first, then provider slot: every request for an upstream model needs its provider
   * too, so holding the model slot while the provider queue moves blocks nobody who could go.
   */
  async acquire(request: AdmissionRequest): Promise<AdmissionPermit> {
    const startedAt = this.clock.now();
    const { deployment, priority, signal } = request;
    const model = this.models ? await this.models.acquire(deployment.key, { priority, signal, maxWaitMs: request.maxWaitMs }) : NO_PASS;
    let provider: GatePass;
    try {
      const left = request.maxWaitMs - (this.clock.now() - startedAt);
      provider = this.providers ? await this.providers.acquire(deployment.provider, { priority, signal, maxWaitMs: left }) : NO_PASS;
    } catch (err) {
      model.release();
      throw err;
    }
    let released = false;
    return {
      waitedMs: this.clock.now() - startedAt,
      release() {
        if (released) return;
        released = true;
        provider.release();
        model.release();
      },
    };
  }

  stats(): AdmissionStats {
    return { models: this.models?.stats() ?? [], providers: this.providers?.stats() ?? [] };
  }
}
