// The gateway's one retry loop: walks the fallback chain model by model, picks a deployment by the
// model's strategy among those whose breaker is closed, retries transient failures with backoff and
// Retry-After, moves on when retrying here cannot help, and stops at once for the client's own errors.
// With an admission hook, each attempt first waits for a slot on its upstream (and moves on when none comes).
// With a session identity, the deployment that served the session last goes first (prompt-cache affinity).
import type { AbortLink } from '../../core/abort-link.ts';
import type { Clock } from '../../core/clock.ts';
import { HerdError, unavailable } from '../../core/errors.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import { holdAdmission, NO_ADMISSION, type Admission, type AdmissionPermit } from '../limits/admission.ts';
import type { Priority } from '../limits/priority.ts';
import type { Provider } from '../providers/provider.ts';
import { UpstreamError } from '../protocol/upstream-error.ts';
import type { BreakerRegistry, CircuitBreaker } from '../resilience/circuit-breaker.ts';
import { computeAttemptTimeouts, type AttemptTimeouts, type Deadline } from '../resilience/deadline.ts';
import { decideNextStep } from '../resilience/failure-policy.ts';
import type { Sleep } from '../resilience/sleep.ts';
import { AttemptLease } from './attempt-lease.ts';
import { UpstreamRouteError, type AttemptRecord } from './attempt-record.ts';
import { createAffinityKey, type AffinityStore, type SessionIdentity } from './cache-affinity.ts';
import type { DeploymentStats } from './deployment-stats.ts';
import type { TokenForecast } from './estimate-deployment-cost.ts';
import { type CatalogDeployment, type CatalogModel, resolveUpstreamModel } from './gateway-catalog.ts';
import { acceptsAffinity, selectDeployment } from './select-deployment.ts';

export interface AttemptTarget {
  model: CatalogModel;
  deployment: CatalogDeployment;
  /** The id this attempt sends upstream (the deployment's upstream_model, `{model}` resolved). */
  upstreamModel: string;
  provider: Provider;
  timeouts: AttemptTimeouts;
}

/** Shared, long-lived pieces the loop consults and updates. */
export interface RoutingState {
  providers: ReadonlyMap<string, Provider>;
  breakers: BreakerRegistry;
  stats: DeploymentStats;
  clock: Clock;
  random: () => number;
  sleep: Sleep;
  /** Slots per upstream model and provider account, taken before each attempt; absent: none. */
  admission?: Admission | undefined;
  /** Which deployment served each session last; absent: affinity is off. */
  affinity?: AffinityStore | undefined;
}

export interface AttemptLoopInput<T> {
  /** The resolved model first, then its fallbacks (see expandFallbacks). */
  chain: readonly CatalogModel[];
  request: ChatRequest;
  stream: boolean;
  /** The client's signal: aborting it stops the attempt in flight and every later one. */
  signal: AbortLink;
  deadline: Deadline;
  forecastTokens: () => Promise<TokenForecast>;
  /** Admission class; NORMAL when absent. */
  priority?: Priority | undefined;
  /** The request's session, computed once by the flow; absent: the strategy alone picks. */
  session?: SessionIdentity | undefined;
  /** Called synchronously just before each upstream call with its 1-based number among this request's attempts. */
  onAttemptStart?: ((attempt: number, record: AttemptRecord) => void) | undefined;
  /** The id an attempt on a deployment sends upstream; default: its upstream_model with `{model}` as the model's name. */
  upstreamModelOf?: ((deployment: CatalogDeployment) => string) | undefined;
  /** One upstream attempt; resolves once it succeeded (chat: the answer; stream: the first event). */
  attempt: (target: AttemptTarget, signal: AbortLink) => Promise<T>;
}

export interface AttemptLoopResult<T> {
  value: T;
  target: AttemptTarget;
  /** Still open: the caller settles it (a stream only knows its outcome at its end). */
  lease: AttemptLease;
  attempts: AttemptRecord[];
  /** Time spent waiting on upstreams, failed attempts included, up to `value`. */
  upstreamMs: number;
  /** Time spent sleeping between retries and queued for admission. */
  waitedMs: number;
  /** The part of waitedMs spent queued for admission. */
  queuedMs: number;
}

export async function runAttempts<T>(state: RoutingState, input: AttemptLoopInput<T>): Promise<AttemptLoopResult<T>> {
  return new AttemptLoop(state, input).run();
}

type DeploymentOutcome<T> = { kind: 'answered'; result: AttemptLoopResult<T> } | { kind: 'next-deployment' } | { kind: 'next-model' };

class AttemptLoop<T> {
  private readonly attempts: AttemptRecord[] = [];
  private readonly skipped: string[] = [];
  private lastError: UpstreamError | undefined;
  private upstreamMs = 0;
  private waitedMs = 0;
  private queuedMs = 0;
  /** Set when admission turned a deployment away: the soonest Retry-After it suggested. */
  private busyRetryAfterS: number | undefined;
  /** Soonest time an open breaker on the way lets a probe through. */
  private openUntilMs: number | undefined;
  /** After "prompt too long": models whose window is no larger would say the same. */
  private tooLongFor: number | undefined;

  private readonly state: RoutingState;
  private readonly input: AttemptLoopInput<T>;

  constructor(state: RoutingState, input: AttemptLoopInput<T>) {
    this.state = state;
    this.input = input;
  }

  async run(): Promise<AttemptLoopResult<T>> {
    for (const model of this.input.chain) {
      if (model.enabledDeployments.length === 0) {
        this.skipped.push(`${model.name}: ${model.unavailableReasons.join('; ')}`);
        continue;
      }
      if (this.tooLongFor !== undefined && model.contextWindow !== undefined && model.contextWindow <= this.tooLongFor) {
        this.skipped.push(`${model.name}: context window ${model.contextWindow} is not larger than the one that was too small`);
        continue;
      }
      const remaining = [...model.enabledDeployments];
      // Only the first choice on a model: once the affine deployment failed, the strategy picks the next.
      let affine = await this.findAffine(model);
      while (remaining.length > 0) {
        for (const d of remaining.filter((d) => !breakerOf(this.state, d).isAvailable())) {
          remaining.splice(remaining.indexOf(d), 1);
          this.noteOpen(d);
        }
        if (remaining.length === 0) break;
        const deployment =
          affine !== undefined && remaining.includes(affine) && acceptsAffinity(model.strategy, affine, remaining)
            ? affine
            : await selectDeployment(model.strategy, remaining, {
                stats: this.state.stats,
                random: this.state.random,
                kind: this.input.stream ? 'stream' : 'chat',
                forecastTokens: this.input.forecastTokens,
              });
        affine = undefined;
        remaining.splice(remaining.indexOf(deployment), 1);
        const outcome = await this.tryDeployment(model, deployment);
        if (outcome.kind === 'answered') {
          this.rememberAffine(model, deployment);
          return outcome.result;
        }
        if (outcome.kind === 'next-model') {
          this.tooLongFor = model.contextWindow;
          break;
        }
      }
    }
    throw this.exhaustedError();
  }

  /** Attempts on one deployment, with retries, until it answers or the failure says to move on. */
  private async tryDeployment(model: CatalogModel, deployment: CatalogDeployment): Promise<DeploymentOutcome<T>> {
    const { state, input } = this;
    const { clock } = state;
    const { signal } = input;
    const provider = state.providers.get(deployment.provider.name);
    if (provider === undefined) throw new Error(`no provider instance for '${deployment.provider.name}'`);
    const settings = deployment.provider.settings;
    const policy = { attempts: settings.retry.attempts, baseMs: settings.retry.base_ms, capMs: settings.retry.cap_ms };
    const kind = input.stream ? 'stream' : 'chat';

    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw signal.reason;
      if (input.deadline.remainingMs() <= 0) throw this.deadlineError();
      const admitted = await this.admit(deployment);
      if (admitted === undefined) return { kind: 'next-deployment' };
      if (input.deadline.remainingMs() <= 0) {
        admitted.release();
        throw this.deadlineError();
      }
      const breakerPermit = breakerOf(state, deployment).tryAcquire();
      if (breakerPermit === undefined) {
        // Opened (or its probe went out) while this request waited to retry.
        admitted.release();
        this.noteOpen(deployment);
        return { kind: 'next-deployment' };
      }
      const permit = holdAdmission(breakerPermit, admitted);
      const timeouts = computeAttemptTimeouts({ request: input.request, stream: input.stream, provider: settings, model: { ms_per_token: model.msPerToken } });
      timeouts.timeoutMs = input.deadline.bound(timeouts.timeoutMs);
      const upstreamModel = input.upstreamModelOf?.(deployment) ?? resolveUpstreamModel(deployment);
      const target: AttemptTarget = { model, deployment, upstreamModel, provider, timeouts };
      const lease = new AttemptLease({ key: deployment.key, permit, stats: state.stats, clientSignal: signal });
      const record: AttemptRecord = {
        model: model.name,
        provider: deployment.provider.name,
        upstreamModel,
        outcome: 'ok',
        durationMs: 0,
      };
      this.attempts.push(record);
      input.onAttemptStart?.(this.attempts.length, record);
      const startedAt = clock.now();
      try {
        const value = await input.attempt(target, lease.signal);
        record.durationMs = clock.now() - startedAt;
        // Providers answer only a 2xx as a success; the chat APIs Herd speaks to answer 200.
        record.status = 200;
        this.upstreamMs += record.durationMs;
        state.stats.recordLatency(deployment.key, kind, record.durationMs);
        return {
          kind: 'answered',
          result: { value, target, lease, attempts: this.attempts, upstreamMs: this.upstreamMs, waitedMs: this.waitedMs, queuedMs: this.queuedMs },
        };
      } catch (err) {
        record.durationMs = clock.now() - startedAt;
        this.upstreamMs += record.durationMs;
        if (signal.aborted || !(err instanceof UpstreamError)) {
          // The client left (the provider rethrows its reason), or a bug: nothing to learn, nothing to retry.
          lease.release();
          throw signal.aborted ? signal.reason : err;
        }
        lease.fail(err);
        this.lastError = err;
        Object.assign(record, { outcome: err.failure, status: err.status, message: err.message });
        // A timeout is the slowest answer there is: let lowest-latency see it.
        if (err.failure === 'timeout') state.stats.recordLatency(deployment.key, kind, record.durationMs);
        const step = decideNextStep(err, { attempt, policy, remainingMs: input.deadline.remainingMs(), random: state.random });
        record.next = step.kind;
        if (step.kind === 'answer') throw UpstreamRouteError.wrap(err, this.attempts);
        if (step.kind !== 'retry') return { kind: step.kind };
        record.waitMs = step.delayMs;
        const sleptFrom = clock.now();
        await state.sleep(step.delayMs, signal);
        this.waitedMs += clock.now() - sleptFrom;
      }
    }
  }

  /** The deployment that served this request's session on `model` last, when affinity can choose among several. */
  private async findAffine(model: CatalogModel): Promise<CatalogDeployment | undefined> {
    const { affinity } = this.state;
    const { session } = this.input;
    if (affinity === undefined || session === undefined || model.enabledDeployments.length < 2) return undefined;
    // Stores answer undefined when they cannot answer; a store that breaks that promise still must not fail the request.
    const key = await affinity.get(createAffinityKey(model.name, session)).catch(() => undefined);
    return key === undefined ? undefined : model.enabledDeployments.find((d) => d.key === key);
  }

  /** The deployment that answered becomes (or stays) the session's, its lifetime refreshed. */
  private rememberAffine(model: CatalogModel, deployment: CatalogDeployment): void {
    const { affinity } = this.state;
    const { session } = this.input;
    if (affinity === undefined || session === undefined || model.enabledDeployments.length < 2) return;
    affinity.set(createAffinityKey(model.name, session), deployment.key, session.ttlMs);
  }

  /** A slot for the next attempt on `deployment`; undefined when admission turned it away (busy). */
  private async admit(deployment: CatalogDeployment): Promise<AdmissionPermit | undefined> {
    const { admission, clock } = this.state;
    if (admission === undefined) return NO_ADMISSION;
    const { signal, deadline } = this.input;
    const from = clock.now();
    try {
      return await admission.acquire({ deployment, priority: this.input.priority ?? 'NORMAL', signal, maxWaitMs: deadline.remainingMs() });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (!(err instanceof HerdError) || err.code !== 'UNAVAILABLE') throw err;
      this.skipped.push(`${deployment.key}: ${err.message}`);
      this.busyRetryAfterS = Math.min(this.busyRetryAfterS ?? Number.POSITIVE_INFINITY, err.retryAfterSeconds ?? 1);
      return undefined;
    } finally {
      const queued = clock.now() - from;
      this.queuedMs += queued;
      this.waitedMs += queued;
    }
  }

  private noteOpen(deployment: CatalogDeployment): void {
    this.skipped.push(`${deployment.key}: circuit open`);
    // Half-open with its probe out: the answer is moments away.
    const retryIn = breakerOf(this.state, deployment).snapshot().retryInMs ?? 0;
    this.openUntilMs = Math.min(this.openUntilMs ?? retryIn, retryIn);
  }

  private deadlineError(): HerdError {
    const last = this.lastError;
    // The deadline went by in admission queues without a single attempt: the model is busy, not failing.
    if (last === undefined && this.attempts.length === 0 && this.busyRetryAfterS !== undefined) return this.busyError();
    const detail = last === undefined ? '' : `; last: ${last.message}`;
    return new UpstreamRouteError(`no answer within the ${this.input.deadline.totalMs} ms deadline after ${plural(this.attempts.length, 'attempt')}${detail}`, {
      provider: last?.provider ?? 'herd',
      failure: 'timeout',
      attempts: this.attempts,
      cause: last,
    });
  }

  private exhaustedError(): HerdError {
    const primary = this.input.chain[0]!;
    const skips = this.skipped.length === 0 ? '' : ` (skipped: ${this.skipped.join('; ')})`;
    if (this.lastError !== undefined) {
      return UpstreamRouteError.wrap(
        this.lastError,
        this.attempts,
        `\`${primary.name}\`: every upstream failed after ${plural(this.attempts.length, 'attempt')}${skips}; last: ${this.lastError.message}`,
      );
    }
    if (this.busyRetryAfterS !== undefined) return this.busyError();
    if (this.openUntilMs !== undefined) {
      return unavailable(`The model \`${primary.name}\` is temporarily unavailable: its upstreams are failing${skips}.`, {
        retryAfterSeconds: Math.max(1, Math.ceil(this.openUntilMs / 1000)),
      });
    }
    return unavailable(`The model \`${primary.name}\` is unavailable: ${this.skipped.join('; ')}.`);
  }

  private busyError(): HerdError {
    const primary = this.input.chain[0]!;
    const retryAfterSeconds = Math.min(this.busyRetryAfterS ?? 1, this.openUntilMs === undefined ? Number.POSITIVE_INFINITY : Math.max(1, Math.ceil(this.openUntilMs / 1000)));
    return unavailable(`The model \`${primary.name}\` is busy: no upstream had a free slot in time (skipped: ${this.skipped.join('; ')}).`, { retryAfterSeconds });
  }
}

function breakerOf(state: RoutingState, deployment: CatalogDeployment): CircuitBreaker {
  const b = deployment.provider.settings.breaker;
  return state.breakers.get(deployment.key, {
    failureRatio: b.failure_ratio,
    minRequests: b.min_requests,
    windowMs: b.window_ms,
    cooldownMs: b.cooldown_ms,
  });
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
