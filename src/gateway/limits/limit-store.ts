// The contract every limiter builds on: a set of checks (sliding windows and leases) granted or
// refused together, atomically, by one store — in memory for one replica, in Redis for many.

/**
 * A sliding window: at most `limit` cost units recorded in any `windowMs` span (RPM: cost 1 each;
 * TPM: cost = tokens). A log rather than fixed buckets, so a limit holds across bucket edges too.
 */
export interface WindowCheck {
  kind: 'window';
  /** Names the counter within the acquire's group ('rpm', 'tpm'). */
  name: string;
  limit: number;
  windowMs: number;
  cost: number;
}

/** At most `limit` holders at once; a holder that vanishes (a crashed replica) expires after `leaseMs` unless renewed. */
export interface LeaseCheck {
  kind: 'lease';
  name: string;
  limit: number;
  leaseMs: number;
}

export type LimitCheck = WindowCheck | LeaseCheck;

/** Why one check refused. */
export interface LimitRefusal {
  /** Index into the checks passed to acquire(). */
  index: number;
  /** Cost units (window) or holders (lease) already counted. */
  used: number;
  /**
   * Window: ms until enough cost leaves the window for this request to fit. Undefined for a lease
   * (it frees when a holder finishes, which nobody can predict).
   */
  retryAfterMs: number | undefined;
  /** The request alone costs more than the limit: waiting can never help. */
  neverFits: boolean;
}

export type LimitDecision = { granted: true } | { granted: false; refusals: LimitRefusal[] };

/** Limit checks decided without the store (Redis unreachable), per outcome. */
export interface LimitStoreOutage {
  /** Let through unchecked (fail_open). */
  allowed: number;
  /** Refused with UNAVAILABLE (fail_closed). */
  refused: number;
}

export interface LimitStore {
  /** True when several replicas share the counts (they cannot tell each other when a lease frees). */
  readonly shared: boolean;
  /** A store that can be unreachable (Redis): what it decided without being asked. */
  readonly outage?: LimitStoreOutage;
  /**
   * Grants every check and records them under `id`, or records nothing. `group` scopes the
   * counters (`key:key_ab12…`, `provider:holysheep`): all checks of one call live in one group.
   */
  acquire(group: string, id: string, checks: readonly LimitCheck[]): Promise<LimitDecision>;
  /** The same decision at once, for stores that hold their counts in this process; absent otherwise. */
  acquireNow?(group: string, id: string, checks: readonly LimitCheck[]): LimitDecision;
  /** Re-records a window entry's cost (a TPM estimate corrected to actual use). No-op once it left the window. */
  adjust(group: string, id: string, check: WindowCheck, fromCost: number, toCost: number): Promise<void>;
  /** Gives back leases (window entries stay: a request that ran still counts towards its rate). */
  release(group: string, id: string, leases: readonly LeaseCheck[]): Promise<void>;
  /**
   * Keeps a long holder's leases from expiring. False when there is nothing left to renew (the
   * leases lapsed, or the store is closed): the holder stops renewing. A failed attempt is true.
   */
  renew(group: string, id: string, leases: readonly LeaseCheck[]): Promise<boolean>;
  close(): Promise<void>;
}

/** The refusal that makes a client wait longest: one that can never fit, then the longest known wait. */
export function pickLongestRefusal(refusals: readonly LimitRefusal[]): LimitRefusal {
  const score = (r: LimitRefusal) => (r.neverFits ? Number.POSITIVE_INFINITY : (r.retryAfterMs ?? 0));
  return refusals.reduce((worst, r) => (score(r) > score(worst) ? r : worst));
}
