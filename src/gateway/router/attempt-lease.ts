// One upstream attempt's hold on a deployment: its breaker permit, its place in the in-flight count and
// its own abort signal (following the client's). Settled exactly once — for a stream, when it ends.
import { type AbortLink, LightAbortController } from '../../core/abort-link.ts';
import type { BreakerPermit } from '../resilience/circuit-breaker.ts';
import { mapFailureToHealth } from '../resilience/failure-policy.ts';
import type { UpstreamError } from '../protocol/upstream-error.ts';
import type { DeploymentStats } from './deployment-stats.ts';

export class AttemptLease {
  readonly signal: AbortLink;
  private readonly controller = new LightAbortController();
  private readonly clientSignal: AbortLink;
  private readonly permit: BreakerPermit;
  private readonly stats: DeploymentStats;
  private readonly key: string;
  private settled = false;

  constructor(options: { key: string; permit: BreakerPermit; stats: DeploymentStats; clientSignal: AbortLink }) {
    this.key = options.key;
    this.permit = options.permit;
    this.stats = options.stats;
    this.clientSignal = options.clientSignal;
    this.signal = this.controller.signal;
    this.stats.begin(this.key);
    if (this.clientSignal.aborted) this.controller.abort(this.clientSignal.reason);
    else this.clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
  }

  get isSettled(): boolean {
    return this.settled;
  }

  /** The upstream answered (a whole answer, or a stream to its end). */
  succeed(): void {
    if (this.finish()) this.permit.success();
  }

  /** The upstream failed; only failures that say it is unwell count against its breaker. */
  fail(error: UpstreamError): void {
    if (!this.finish()) return;
    if (mapFailureToHealth(error.failure) === 'failure') this.permit.failure();
    else this.permit.release();
  }

  /** Ended for a reason that says nothing about the upstream (client gone, Herd bug). */
  release(): void {
    if (this.finish()) this.permit.release();
  }

  /** Stops the upstream request (e.g. the consumer of a stream went away). */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  private finish(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.stats.end(this.key);
    this.clientSignal.removeEventListener('abort', this.onClientAbort);
    return true;
  }

  private readonly onClientAbort = (): void => {
    this.controller.abort(this.clientSignal.reason);
  };
}
