// Exponential backoff with full jitter (AWS's "Exponential Backoff and Jitter"): retries spread
// uniformly below a doubling ceiling, so clients throttled together do not come back together.

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** Wait before retry number `retry` (1 = the first retry): random(0, min(cap, base × 2^(retry-1))). */
export function computeBackoffMs(retry: number, policy: BackoffPolicy, random: () => number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}
