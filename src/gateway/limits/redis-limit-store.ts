// LimitStore shared by every replica through Redis: each operation is one Lua script run by EVALSHA
// (EVAL once when Redis does not have it cached yet). When Redis cannot answer, `onRedisError`
// decides: fail_open lets the request through unchecked (limits protect, they should not take the
// gateway down with Redis), fail_closed answers UNAVAILABLE.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { HerdError } from '../../core/errors.ts';
import type { LeaseCheck, LimitCheck, LimitDecision, LimitRefusal, LimitStore, LimitStoreOutage, WindowCheck } from './limit-store.ts';
import { ACQUIRE_SCRIPT, ADJUST_SCRIPT, RENEW_SCRIPT } from './redis-limit-scripts.ts';

/** `allow` and `deny` are the older names of fail_open and fail_closed. */
export type RedisErrorMode = 'fail_open' | 'fail_closed' | 'allow' | 'deny';

// One line per outage and then one per this long, not one per request.
const ERROR_REPORT_MS = 10_000;

export interface RedisLimitStoreOptions {
  client: Redis;
  /** Prepended to every key, e.g. `herd:limits:`; tests use a unique one per run. */
  keyPrefix: string;
  onRedisError?: RedisErrorMode;
  /** Told about Redis failures, the first of an outage at once and then one per 10 s (the request itself goes on as onRedisError says). */
  onError?: (err: Error) => void;
  /** Whether close() quits the client (false when it is shared with the cache). */
  ownsClient?: boolean;
}

interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });
const ACQUIRE = script(ACQUIRE_SCRIPT);
const ADJUST = script(ADJUST_SCRIPT);
const RENEW = script(RENEW_SCRIPT);

export class RedisLimitStore implements LimitStore {
  readonly shared = true;
  readonly client: Redis;
  private readonly keyPrefix: string;
  private readonly failOpen: boolean;
  private readonly report: (err: Error) => void;
  private lastReport = Number.NEGATIVE_INFINITY;
  readonly outage: LimitStoreOutage = { allowed: 0, refused: 0 };
  private readonly ownsClient: boolean;
  private closed = false;

  constructor(options: RedisLimitStoreOptions) {
    this.client = options.client;
    this.keyPrefix = options.keyPrefix;
    const mode = options.onRedisError ?? 'fail_open';
    this.failOpen = mode === 'fail_open' || mode === 'allow';
    this.report = options.onError ?? (() => undefined);
    this.ownsClient = options.ownsClient ?? false;
  }

  async acquire(group: string, id: string, checks: readonly LimitCheck[]): Promise<LimitDecision> {
    const keys = checks.flatMap((c) => [this.key(group, c.name), `${this.key(group, c.name)}:sum`]);
    const args = checks.flatMap((c) => (c.kind === 'window' ? ['window', c.limit, c.windowMs, c.cost] : ['lease', c.limit, c.leaseMs, 1]));
    let reply: unknown;
    try {
      reply = await this.run(ACQUIRE, keys, [id, ...args]);
    } catch (err) {
      this.onError(asError(err));
      if (this.failOpen) {
        this.outage.allowed++;
        return { granted: true };
      }
      this.outage.refused++;
      throw new HerdError('UNAVAILABLE', 'rate limits cannot be checked right now (Redis is unavailable; limits.redis.on_error is fail_closed)', {
        retryAfterSeconds: 1,
        cause: err,
      });
    }
    this.lastReport = Number.NEGATIVE_INFINITY;
    return parseAcquireReply(reply);
  }

  async adjust(group: string, id: string, check: WindowCheck, fromCost: number, toCost: number): Promise<void> {
    if (fromCost === toCost) return;
    const key = this.key(group, check.name);
    await this.quietly(() => this.run(ADJUST, [key, `${key}:sum`], [id, fromCost, toCost]));
  }

  async release(group: string, id: string, leases: readonly LeaseCheck[]): Promise<void> {
    if (leases.length === 0) return;
    await this.quietly(async () => {
      const pipeline = this.client.pipeline();
      for (const lease of leases) pipeline.zrem(this.key(group, lease.name), id);
      const results = await pipeline.exec();
      const failed = results?.find(([err]) => err !== null)?.[0];
      if (failed) throw failed;
    });
  }

  async renew(group: string, id: string, leases: readonly LeaseCheck[]): Promise<boolean> {
    if (leases.length === 0 || this.closed) return false;
    const leaseMs = Math.max(...leases.map((l) => l.leaseMs));
    try {
      return (
        Number(
          await this.run(
            RENEW,
            leases.map((l) => this.key(group, l.name)),
            [id, leaseMs],
          ),
        ) > 0
      );
    } catch (err) {
      this.onError(asError(err));
      return true; // Redis may be back by the next beat, before the lease runs out
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }

  private onError(err: Error): void {
    const now = Date.now();
    if (now - this.lastReport < ERROR_REPORT_MS) return;
    this.lastReport = now;
    const mode = this.failOpen ? 'fail_open: requests pass unchecked' : 'fail_closed: requests are refused';
    this.report(new Error(`Redis cannot check limits (${err.message}); ${mode} until it answers`));
  }

  /** `{…}` is a Redis Cluster hash tag: one group's counters share a slot, as a script needs. */
  private key(group: string, name: string): string {
    return `${this.keyPrefix}{${group}}:${name}`;
  }

  /** EVALSHA, falling back to EVAL (which also caches the script) after a restart or SCRIPT FLUSH. */
  private async run(s: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await this.client.evalsha(s.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!asError(err).message.startsWith('NOSCRIPT')) throw err;
      return this.client.eval(s.source, keys.length, ...keys, ...args);
    }
  }

  /** Bookkeeping after the fact (corrections, releases) must never fail the request it follows. */
  private async quietly(body: () => Promise<unknown>): Promise<void> {
    try {
      await body();
    } catch (err) {
      this.onError(asError(err));
    }
  }
}

/**
 * A client for limits: no offline queue and no per-command retries (a request must not wait on a
 * reconnect to learn whether it may go), a command timeout, reconnects with capped backoff.
 */
export function createLimitsRedisClient(url: string, timeoutMs: number, onError: (err: Error) => void): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(1000, timeoutMs * 4),
    // A connection the network dropped silently answers nothing and never errors: destroy it once a command
    // has waited this long for a byte, so the client reconnects when the network is back.
    socketTimeout: Math.max(5000, timeoutMs * 20),
    retryStrategy: (times: number) => Math.min(times * 200, 5000),
  });
  client.on('error', onError);
  return client;
}

export function parseAcquireReply(reply: unknown): LimitDecision {
  if (!Array.isArray(reply) || typeof reply[0] !== 'number') throw new HerdError('INTERNAL', `unexpected reply from the limits script: ${JSON.stringify(reply)}`);
  if (reply[0] === 1) return { granted: true };
  const refusals: LimitRefusal[] = [];
  for (let i = 1; i + 2 < reply.length; i += 3) {
    const [index, wait, used] = [Number(reply[i]), Number(reply[i + 1]), Number(reply[i + 2])];
    refusals.push({ index: index - 1, used, retryAfterMs: wait >= 0 ? wait : undefined, neverFits: wait === -2 });
  }
  return { granted: false, refusals };
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
