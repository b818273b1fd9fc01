// What the router does after a failed attempt — retry here, try the next deployment, skip to the next
// fallback model, or answer the client now — and what the failure says about the upstream's health.
import type { UpstreamError, UpstreamFailure } from '../protocol/upstream-error.ts';
import { computeBackoffMs, type BackoffPolicy } from './backoff.ts';

export interface RetryPolicy extends BackoffPolicy {
  /** Attempts on one deployment, the first included. */
  attempts: number;
}

export type NextStep =
  | { kind: 'retry'; delayMs: number }
  /** Same model, another provider (or the next model when none is left). */
  | { kind: 'next-deployment'; reason: string }
  /** The model itself cannot serve this request (e.g. the prompt is too long): skip its other deployments. */
  | { kind: 'next-model'; reason: string }
  /** The request is wrong, or the account is: another upstream would say the same. */
  | { kind: 'answer' };

// Worth repeating against the same upstream: it may well answer next time.
const RETRYABLE = new Set<UpstreamFailure>(['rate_limited', 'unavailable', 'server_error', 'timeout', 'interrupted']);
// Not worth repeating here, but another upstream may do better. `malformed` is usually a relay bug
// that repeats itself; `quota_exceeded` lasts until someone pays.
const MOVE_ON = new Set<UpstreamFailure>(['quota_exceeded', 'malformed']);

export interface NextStepInput {
  /** Attempts made on this deployment so far (1 after the first). */
  attempt: number;
  policy: RetryPolicy;
  /** Time left before the request's total deadline. */
  remainingMs: number;
  random: () => number;
}

export function decideNextStep(error: UpstreamError, input: NextStepInput): NextStep {
  if (error.failure === 'context_length') return { kind: 'next-model', reason: 'prompt too long for this model' };
  if (MOVE_ON.has(error.failure)) return { kind: 'next-deployment', reason: error.failure };
  if (!RETRYABLE.has(error.failure)) return { kind: 'answer' };
  if (input.attempt >= input.policy.attempts) {
    return { kind: 'next-deployment', reason: `${input.policy.attempts} attempt${input.policy.attempts === 1 ? '' : 's'} used` };
  }
  let delayMs = computeBackoffMs(input.attempt, input.policy, input.random);
  if (error.retryAfterSeconds !== undefined) {
    const askedMs = Math.ceil(error.retryAfterSeconds * 1000);
    // Sleeping past the cap would hold the client longer than configured: another upstream may answer now.
    if (askedMs > input.policy.capMs) return { kind: 'next-deployment', reason: `Retry-After ${error.retryAfterSeconds}s exceeds cap_ms ${input.policy.capMs}` };
    delayMs = Math.max(delayMs, askedMs);
  }
  if (delayMs >= input.remainingMs) return { kind: 'next-deployment', reason: 'no time left to wait before the deadline' };
  return { kind: 'retry', delayMs };
}

/** How an attempt's failure feeds the breaker: only failures that say the upstream is unwell count. */
export function mapFailureToHealth(failure: UpstreamFailure): 'failure' | 'neutral' {
  return RETRYABLE.has(failure) || MOVE_ON.has(failure) ? 'failure' : 'neutral';
}
