// Circuit breaker (ratio over a minimum in a sliding window, half-open probe, manual clock), full-jitter
// backoff, the retry/fallback decision table, and attempt timeouts scaled with max_tokens.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { UpstreamError, type UpstreamFailure } from '../../src/gateway/protocol/upstream-error.ts';
import { computeBackoffMs } from '../../src/gateway/resilience/backoff.ts';
import { CircuitBreaker } from '../../src/gateway/resilience/circuit-breaker.ts';
import { computeAttemptTimeouts } from '../../src/gateway/resilience/deadline.ts';
import { decideNextStep, mapFailureToHealth } from '../../src/gateway/resilience/failure-policy.ts';
import { seededRandom } from './helpers/gateway-fixtures.ts';

describe('circuit breaker', () => {
  const options = { failureRatio: 0.5, minRequests: 4, windowMs: 10_000, cooldownMs: 5_000 };
  const run = (breaker: CircuitBreaker, outcome: 'success' | 'failure' | 'release') => {
    const permit = breaker.tryAcquire();
    assert.ok(permit, 'expected a permit');
    permit[outcome]();
  };

  it('stays closed below the minimum number of requests, opens at the failure ratio', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker(options, () => clock.now());
    run(breaker, 'failure');
    run(breaker, 'failure');
    run(breaker, 'failure');
    assert.equal(breaker.snapshot().state, 'closed'); // 3 of 3 failed, but fewer than 4 requests
    run(breaker, 'success');
    assert.equal(breaker.snapshot().state, 'closed'); // the success does not open it
    run(breaker, 'failure');
    assert.deepEqual(breaker.snapshot(), { state: 'open', requests: 5, failures: 4, retryInMs: 5000 });
    assert.equal(breaker.isAvailable(), false);
    assert.equal(breaker.tryAcquire(), undefined);
  });

  it('forgets failures that slid out of the window', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker(options, () => clock.now());
    for (let i = 0; i < 3; i++) run(breaker, 'failure');
    clock.advance(10_001);
    run(breaker, 'failure');
    run(breaker, 'success');
    assert.deepEqual(breaker.snapshot(), { state: 'closed', requests: 2, failures: 1 });
  });

  it('after the cooldown lets exactly one probe through; its success closes, its failure reopens', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ ...options, minRequests: 1 }, () => clock.now());
    run(breaker, 'failure');
    assert.equal(breaker.snapshot().state, 'open');
    clock.advance(4_999);
    assert.equal(breaker.isAvailable(), false);
    clock.advance(1);
    assert.equal(breaker.isAvailable(), true);
    const probe = breaker.tryAcquire()!;
    assert.equal(breaker.snapshot().state, 'half_open');
    assert.equal(breaker.tryAcquire(), undefined, 'a second request waits for the probe');
    probe.failure();
    assert.deepEqual(breaker.snapshot().state, 'open');
    assert.equal(breaker.snapshot().retryInMs, 5000, 'the cooldown starts again');
    clock.advance(5_000);
    const second = breaker.tryAcquire()!;
    second.success();
    assert.deepEqual(breaker.snapshot(), { state: 'closed', requests: 0, failures: 0 });
    run(breaker, 'success');
  });

  it('a released probe (client gone) frees the slot without deciding', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ ...options, minRequests: 1 }, () => clock.now());
    run(breaker, 'failure');
    clock.advance(5_000);
    breaker.tryAcquire()!.release();
    assert.equal(breaker.snapshot().state, 'half_open');
    assert.ok(breaker.tryAcquire(), 'the next request is the probe');
  });

  it('outcomes of requests started before it opened do not close it', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ ...options, minRequests: 1 }, () => clock.now());
    const early = breaker.tryAcquire()!;
    run(breaker, 'failure');
    early.success();
    assert.equal(breaker.snapshot().state, 'open');
  });
});

describe('backoff and retry decisions', () => {
  const policy = { attempts: 3, baseMs: 500, capMs: 4_000 };
  const failure = (kind: UpstreamFailure, retryAfterSeconds?: number) => new UpstreamError(`x: ${kind}`, { provider: 'x', failure: kind, retryAfterSeconds });
  const decide = (error: UpstreamError, attempt = 1, remainingMs = 60_000) => decideNextStep(error, { attempt, policy, remainingMs, random: () => 0.999 });

  it('full jitter stays under min(cap, base × 2^(n-1))', () => {
    const random = seededRandom(7);
    for (let retry = 1; retry <= 8; retry++) {
      const ceiling = Math.min(4_000, 500 * 2 ** (retry - 1));
      for (let i = 0; i < 200; i++) {
        const ms = computeBackoffMs(retry, policy, random);
        assert.ok(ms >= 0 && ms < ceiling, `${retry}: ${ms}`);
      }
    }
    assert.equal(
      computeBackoffMs(3, policy, () => 0.5),
      1000,
    );
  });

  it('retries transient failures until the attempts are used, then moves to the next deployment', () => {
    for (const kind of ['rate_limited', 'unavailable', 'server_error', 'timeout', 'interrupted'] as const) {
      assert.equal(decide(failure(kind), 1).kind, 'retry', kind);
      assert.equal(decide(failure(kind), 3).kind, 'next-deployment', kind);
    }
  });

  it('honours Retry-After up to cap_ms; beyond it, falls back instead of sleeping', () => {
    assert.deepEqual(decideNextStep(failure('rate_limited', 2), { attempt: 1, policy, remainingMs: 60_000, random: () => 0 }), { kind: 'retry', delayMs: 2000 });
    assert.deepEqual(decide(failure('rate_limited', 5)), { kind: 'next-deployment', reason: 'Retry-After 5s exceeds cap_ms 4000' });
    assert.equal(decide(failure('rate_limited', 2), 1, 1_500).kind, 'next-deployment', 'no waiting past the deadline');
  });

  it('client errors answer at once; context length skips to a bigger model; quota and garbage move on', () => {
    for (const kind of ['invalid_request', 'auth', 'not_found', 'content_filter'] as const) assert.deepEqual(decide(failure(kind)), { kind: 'answer' }, kind);
    assert.equal(decide(failure('context_length')).kind, 'next-model');
    assert.equal(decide(failure('quota_exceeded')).kind, 'next-deployment');
    assert.equal(decide(failure('malformed')).kind, 'next-deployment');
  });

  it('only health-related failures count against the breaker', () => {
    assert.equal(mapFailureToHealth('server_error'), 'failure');
    assert.equal(mapFailureToHealth('rate_limited'), 'failure');
    assert.equal(mapFailureToHealth('invalid_request'), 'neutral');
    assert.equal(mapFailureToHealth('context_length'), 'neutral');
  });
});

describe('attempt timeouts', () => {
  const provider = { type: 'openai', timeout_ms: 30_000 };
  const request = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }], max_tokens: 4000 };

  it("scale with max_tokens when the model sets ms_per_token (seed 002's idea)", () => {
    assert.deepEqual(computeAttemptTimeouts({ request, stream: false, provider, model: { ms_per_token: 25 } }), { timeoutMs: 130_000 });
    assert.deepEqual(computeAttemptTimeouts({ request, stream: false, provider, model: {} }), { timeoutMs: 30_000 });
    const anthropic = { type: 'anthropic', timeout_ms: 30_000, default_max_tokens: 1000 };
    assert.deepEqual(computeAttemptTimeouts({ request: { ...request, max_tokens: undefined }, stream: false, provider: anthropic, model: { ms_per_token: 10 } }), {
      timeoutMs: 40_000,
    });
  });

  it('streams: time to first token, then the idle limit between chunks', () => {
    assert.deepEqual(computeAttemptTimeouts({ request, stream: true, provider: { ...provider, first_token_timeout_ms: 5_000 }, model: { ms_per_token: 25 } }), {
      timeoutMs: 5_000,
      idleTimeoutMs: 30_000,
    });
  });
});
