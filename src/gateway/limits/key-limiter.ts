// Per gateway key, and per team for a key in one: requests per minute, tokens per minute and concurrent
// requests, each owner's checked and recorded together in one atomic step (a request refused by one limit
// consumes none of the others; one refused by the team gives back what the key's step took).
// Over a limit: RATE_LIMITED with the exact wait the sliding window implies (HTTP: 429 + Retry-After).
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../core/clock.ts';
import { HerdError } from '../../core/errors.ts';
import { LimitHold } from './limit-hold.ts';
import { pickLongestRefusal, type LimitCheck, type LimitRefusal, type LimitStore, type WindowCheck } from './limit-store.ts';

/** The limits an owner (a key, a team) carries (KeyInfo and TeamInfo have these fields); undefined means no limit. */
export interface OwnerRateLimits {
  id: string;
  name: string;
  rpm?: number | undefined;
  tpm?: number | undefined;
  maxConcurrency?: number | undefined;
}

/** A key's limits and its team's: both apply, so the tighter one decides. */
export interface KeyRateLimits extends OwnerRateLimits {
  team?: OwnerRateLimits | undefined;
}

export interface KeyLimiterOptions {
  store: LimitStore;
  clock?: Clock;
  /** How long a crashed replica's concurrency slot stays taken (shared stores; renewed while held). */
  leaseMs?: number;
  /** The window RPM and TPM count over; a minute unless a test says otherwise. */
  windowMs?: number;
}

/** A request's hold on its key's limits. settle() exactly once, when it ends, however it ends. */
export interface KeyLimitTicket {
  /** Tokens held against TPM until settled (0 when the key has no TPM limit). */
  readonly reservedTokens: number;
  /**
   * Corrects the TPM entry to what the request really used (0 when it never reached an upstream)
   * and frees its concurrency slot. Idempotent: later calls do nothing. Never rejects.
   */
  settle(actualTokens: number): Promise<void>;
}

/** One owner's part of a ticket. */
interface OwnerHold {
  tpm: WindowCheck | undefined;
  settle(actualTokens: number): Promise<void>;
  /** Gives back everything the acquire took, as if the request had never come. */
  undo(): Promise<void>;
}

/** What a request with no limits holds. */
const NO_TICKET: KeyLimitTicket = Object.freeze({ reservedTokens: 0, settle: async () => undefined });

/** Seconds to suggest when only the concurrency limit refused: a slot frees when a request ends. */
const CONCURRENCY_RETRY_SECONDS = 1;

export class KeyLimiter {
  private readonly store: LimitStore;
  private readonly clock: Clock;
  private readonly leaseMs: number;
  private readonly windowMs: number;

  constructor(options: KeyLimiterOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.windowMs = options.windowMs ?? 60_000;
  }

  /**
   * Counts one request and `estimatedTokens` (prompt estimate + max tokens) against the key, and
   * takes one of its concurrency slots. Throws RATE_LIMITED when any limit would be passed.
   */
  async reserve(key: KeyRateLimits, estimatedTokens: number): Promise<KeyLimitTicket> {
    const tokens = Math.max(0, Math.ceil(estimatedTokens));
    const holds: OwnerHold[] = [];
    for (const [kind, owner] of [
      ['key', key],
      ['team', key.team],
    ] as const) {
      if (owner === undefined) continue;
      try {
        const hold = await this.acquireFor(kind, owner, tokens);
        if (hold) holds.push(hold);
      } catch (err) {
        // The team refused: what the key's step took (a slot, an RPM entry, its tokens) goes back.
        await Promise.all(holds.map((h) => h.undo())).catch(() => undefined);
        throw err;
      }
    }
    if (holds.length === 0) return NO_TICKET;
    let settled = false;
    return {
      reservedTokens: holds.some((h) => h.tpm !== undefined) ? tokens : 0,
      async settle(actualTokens: number) {
        if (settled) return;
        settled = true;
        const actual = Math.max(0, Math.ceil(Number.isFinite(actualTokens) ? actualTokens : tokens));
        await Promise.all(holds.map((h) => h.settle(actual))).catch(() => undefined);
      },
    };
  }

  /** One owner's checks in one atomic acquire; undefined when it has no limits. Throws RATE_LIMITED naming the owner. */
  private async acquireFor(kind: 'key' | 'team', owner: OwnerRateLimits, tokens: number): Promise<OwnerHold | undefined> {
    const checks: LimitCheck[] = [];
    if (owner.rpm !== undefined) checks.push({ kind: 'window', name: 'rpm', limit: owner.rpm, windowMs: this.windowMs, cost: 1 });
    const tpm: WindowCheck | undefined = owner.tpm === undefined ? undefined : { kind: 'window', name: 'tpm', limit: owner.tpm, windowMs: this.windowMs, cost: tokens };
    if (tpm) checks.push(tpm);
    if (owner.maxConcurrency !== undefined) checks.push({ kind: 'lease', name: 'concurrency', limit: owner.maxConcurrency, leaseMs: this.leaseMs });
    if (checks.length === 0) return undefined;
    const group = `${kind}:${owner.id}`;
    const id = randomUUID();
    const decision = await this.store.acquire(group, id, checks);
    if (!decision.granted) throw this.refusalError(`${kind} '${owner.name}'`, checks, pickLongestRefusal(decision.refusals));
    const hold = new LimitHold({ store: this.store, group, id, checks, clock: this.clock });
    const windows = checks.filter((c): c is WindowCheck => c.kind === 'window');
    return {
      tpm,
      settle: (actual) => Promise.all([tpm ? hold.adjust(tpm, actual) : undefined, hold.release()]).then(() => undefined),
      undo: () => Promise.all([...windows.map((w) => hold.adjust(w, 0)), hold.release()]).then(() => undefined),
    };
  }

  private refusalError(who: string, checks: readonly LimitCheck[], refusal: LimitRefusal): HerdError {
    const check = checks[refusal.index] as LimitCheck;
    if (check.kind === 'lease') {
      return new HerdError(
        'RATE_LIMITED',
        `Rate limit reached for ${who} on concurrent requests: Limit ${check.limit}, In flight ${refusal.used}. Please try again when one of them has finished.`,
        { retryAfterSeconds: CONCURRENCY_RETRY_SECONDS },
      );
    }
    const unit = check.name === 'tpm' ? 'tokens per min (TPM)' : 'requests per min (RPM)';
    if (refusal.neverFits) {
      // OpenAI answers the same way ("Request too large … on tokens per min"); waiting cannot help.
      return new HerdError('RATE_LIMITED', `Request too large for ${who} on ${unit}: Limit ${check.limit}, Requested ${check.cost}. Send a shorter prompt or a lower max_tokens.`, {
        param: 'max_tokens',
      });
    }
    const waitMs = refusal.retryAfterMs ?? this.windowMs;
    return new HerdError(
      'RATE_LIMITED',
      `Rate limit reached for ${who} on ${unit}: Limit ${check.limit}, Used ${refusal.used}, Requested ${check.cost}. Please try again in ${formatSeconds(waitMs)}.`,
      { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) },
    );
  }
}

/**
 * Tokens to hold against TPM before the request: the prompt estimate plus the most the answer may
 * use. Without max_tokens the answer is assumed as long as the prompt, as the router's cost forecast
 * assumes; settle() corrects either way.
 */
export function estimateTokenReservation(promptTokens: number, request: { max_tokens?: number | null | undefined; max_completion_tokens?: number | null | undefined }): number {
  return promptTokens + (request.max_completion_tokens ?? request.max_tokens ?? promptTokens);
}

function formatSeconds(ms: number): string {
  return `${(Math.ceil(ms / 100) / 10).toFixed(1)}s`;
}
