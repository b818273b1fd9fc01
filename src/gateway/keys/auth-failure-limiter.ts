// Slows key guessing: counts requests with an incorrect key per client address in a fixed window and,
// once an address reaches the limit, refuses every key it sends (right or wrong) until the window ends.
// Other addresses are unaffected. Memory is bounded however many addresses a spray of guesses comes from.

export interface AuthFailureLimitSettings {
  /** Incorrect keys one address may send per window; 0 turns the limit off. */
  maxFailures: number;
  windowMs: number;
}

export const DEFAULT_AUTH_FAILURE_LIMIT: AuthFailureLimitSettings = Object.freeze({ maxFailures: 20, windowMs: 60_000 });

interface Window {
  failures: number;
  endsAt: number;
}

/** Addresses tracked at once; beyond it the oldest windows are forgotten first. */
const MAX_ADDRESSES = 10_000;

export class AuthFailureLimiter {
  private readonly settings: AuthFailureLimitSettings;
  private readonly now: () => number;
  /** Insertion order is window start order, so the first entries are the oldest. */
  private readonly windows = new Map<string, Window>();

  constructor(settings: AuthFailureLimitSettings = DEFAULT_AUTH_FAILURE_LIMIT, now: () => number = Date.now) {
    this.settings = settings;
    this.now = now;
  }

  /** Seconds until `address` may try again when it is refused; undefined when it may try now. */
  refusal(address: string): number | undefined {
    if (this.settings.maxFailures === 0) return undefined;
    const window = this.current(address);
    if (window === undefined || window.failures < this.settings.maxFailures) return undefined;
    return Math.max(1, Math.ceil((window.endsAt - this.now()) / 1000));
  }

  recordFailure(address: string): void {
    if (this.settings.maxFailures === 0) return;
    const window = this.current(address);
    if (window !== undefined) {
      window.failures++;
      return;
    }
    if (this.windows.size >= MAX_ADDRESSES) this.forgetOldest();
    this.windows.set(address, { failures: 1, endsAt: this.now() + this.settings.windowMs });
  }

  /** Addresses with a window still open (for tests and metrics). */
  get trackedAddresses(): number {
    return this.windows.size;
  }

  private current(address: string): Window | undefined {
    const window = this.windows.get(address);
    if (window === undefined) return undefined;
    if (window.endsAt > this.now()) return window;
    this.windows.delete(address);
    return undefined;
  }

  private forgetOldest(): void {
    const now = this.now();
    // Expired windows go first; if none has, the oldest tenth goes, so a spray cannot pin memory.
    for (const [address, window] of this.windows) if (window.endsAt <= now) this.windows.delete(address);
    if (this.windows.size < MAX_ADDRESSES) return;
    let drop = Math.ceil(MAX_ADDRESSES / 10);
    for (const address of this.windows.keys()) {
      if (drop-- === 0) break;
      this.windows.delete(address);
    }
  }
}
