// A circuit breaker per (provider, upstream model): opens on a failure ratio over a minimum number of
// requests in a sliding window, lets one half-open probe through after a cooldown, closes on its success.
//
// Why not cockatiel's CircuitBreakerPolicy + SamplingBreaker: the router must ask "may this deployment
// take a request now?" before choosing one (cockatiel only answers by running a function), a stream's
// outcome is known long after the call that started it (cockatiel wants one promise), its clock is
// Date.now (tests could not drive cooldowns), and its minimum is a request rate, not a request count.

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions {
  /** Opens when failures / requests in the window reach this (0 < ratio ≤ 1)... */
  failureRatio: number;
  /** ...and the window holds at least this many requests. */
  minRequests: number;
  windowMs: number;
  /** Time an open breaker refuses requests before it lets one probe through. */
  cooldownMs: number;
}

/** The right to send one request. Settle it exactly once; later calls are ignored. */
export interface BreakerPermit {
  /** The upstream answered properly. */
  success(): void;
  /** The upstream failed in a way that says it is unhealthy (5xx, timeout, 429, reset...). */
  failure(): void;
  /** The outcome says nothing about the upstream's health (client abort, invalid request). */
  release(): void;
}

export interface BreakerSnapshot {
  state: BreakerState;
  /** Requests and failures counted in the current window. */
  requests: number;
  failures: number;
  /** While open: milliseconds until a probe may go out (0 = the next request is the probe). */
  retryInMs?: number;
}

const BUCKETS = 10;

interface Bucket {
  start: number;
  requests: number;
  failures: number;
}

export class CircuitBreaker {
  private readonly options: BreakerOptions;
  private readonly now: () => number;
  private readonly bucketMs: number;
  private readonly buckets: Bucket[] = [];
  private state: BreakerState = 'closed';
  private openedAt = 0;
  private probeInFlight = false;

  constructor(options: BreakerOptions, now: () => number) {
    this.options = options;
    this.now = now;
    this.bucketMs = options.windowMs / BUCKETS;
  }

  /** Whether tryAcquire() would succeed now; does not change state. */
  isAvailable(): boolean {
    if (this.state === 'closed') return true;
    if (this.probeInFlight) return false;
    return this.state === 'half_open' || this.now() - this.openedAt >= this.options.cooldownMs;
  }

  /** A permit, or undefined while open (or while the one half-open probe is out). */
  tryAcquire(): BreakerPermit | undefined {
    if (!this.isAvailable()) return undefined;
    if (this.state === 'closed') return this.permit(false);
    this.state = 'half_open';
    this.probeInFlight = true;
    return this.permit(true);
  }

  snapshot(): BreakerSnapshot {
    const { requests, failures } = this.totals(this.now());
    const snapshot: BreakerSnapshot = { state: this.state, requests, failures };
    if (this.state === 'open') snapshot.retryInMs = Math.max(0, this.openedAt + this.options.cooldownMs - this.now());
    return snapshot;
  }

  private permit(probe: boolean): BreakerPermit {
    let settled = false;
    const settle = (outcome: 'success' | 'failure' | 'release') => {
      if (settled) return;
      settled = true;
      if (probe) this.probeInFlight = false;
      if (outcome === 'release') return;
      this.record(outcome === 'failure');
      if (probe) {
        if (outcome === 'success') this.close();
        else this.open();
      } else if (outcome === 'failure' && this.state === 'closed' && this.shouldOpen()) {
        this.open();
      }
    };
    return { success: () => settle('success'), failure: () => settle('failure'), release: () => settle('release') };
  }

  private shouldOpen(): boolean {
    const { requests, failures } = this.totals(this.now());
    return requests >= this.options.minRequests && failures / requests >= this.options.failureRatio;
  }

  private open(): void {
    this.state = 'open';
    this.openedAt = this.now();
  }

  private close(): void {
    this.state = 'closed';
    // Failures from before the outage must not reopen the breaker on the first new one.
    this.buckets.length = 0;
  }

  private record(failed: boolean): void {
    const now = this.now();
    let bucket = this.buckets.at(-1);
    if (bucket === undefined || now - bucket.start >= this.bucketMs) {
      bucket = { start: now, requests: 0, failures: 0 };
      this.buckets.push(bucket);
      if (this.buckets.length > BUCKETS) this.buckets.shift();
    }
    bucket.requests++;
    if (failed) bucket.failures++;
  }

  private totals(now: number): { requests: number; failures: number } {
    let requests = 0;
    let failures = 0;
    for (const bucket of this.buckets) {
      if (now - bucket.start >= this.options.windowMs) continue;
      requests += bucket.requests;
      failures += bucket.failures;
    }
    return { requests, failures };
  }
}

export interface BreakerEntry {
  key: string;
  snapshot: BreakerSnapshot;
}

/** One breaker per key (`provider/upstream_model`), created on first use. */
export class BreakerRegistry {
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  get(key: string, options: BreakerOptions): CircuitBreaker {
    let breaker = this.breakers.get(key);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(options, this.now);
      this.breakers.set(key, breaker);
    }
    return breaker;
  }

  /** The state of `key`'s breaker, or undefined when no request has made one yet (a span's herd.breaker.state). */
  peek(key: string): BreakerState | undefined {
    return this.breakers.get(key)?.snapshot().state;
  }

  snapshot(): BreakerEntry[] {
    return [...this.breakers].map(([key, breaker]) => ({ key, snapshot: breaker.snapshot() }));
  }
}
