// The RPM limiter's own admission log, read from Redis during the run: each key's window is a sorted set
// (member `<id>|<cost>`, score = admission time by Redis TIME) that forgets entries older than the window,
// so it is sampled every few seconds and the samples are merged. Exact where the ledger's started_at is not.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RpmLog {
  /** Redis key → admission times (ms, Redis clock) of entries whose last seen cost was not 0 (an undone admission). */
  stop(): Promise<Map<string, number[]>>;
}

export function startRpmLog(redisUrl: string, pattern: string, everyMs = 3000): RpmLog {
  const entries = new Map<string, Map<string, { at: number; cost: number }>>();
  const sample = async () => {
    const { stdout } = await run('redis-cli', ['-u', redisUrl, '--scan', '--pattern', pattern]);
    for (const key of stdout.split('\n').filter((k) => k !== '' && !k.endsWith(':sum'))) {
      const out = (await run('redis-cli', ['-u', redisUrl, 'zrange', key, '0', '-1', 'withscores'])).stdout.split('\n').filter(Boolean);
      const seen = entries.get(key) ?? new Map<string, { at: number; cost: number }>();
      entries.set(key, seen);
      for (let i = 0; i + 1 < out.length; i += 2) {
        const [id, cost] = (out[i] as string).split('|');
        seen.set(id as string, { at: Number(out[i + 1]), cost: Number(cost) });
      }
    }
  };
  let busy: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    busy = busy.then(sample).catch(() => undefined);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await busy;
      await sample();
      const out = new Map<string, number[]>();
      for (const [key, seen] of entries)
        out.set(
          key,
          [...seen.values()]
            .filter((e) => e.cost > 0)
            .map((e) => e.at)
            .sort((a, b) => a - b),
        );
      return out;
    },
  };
}

/** Most entries in any window of `ms` as the limiter counts it: (t − ms, t]. */
export function maxInWindow(sorted: readonly number[], ms: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi] as number) - (sorted[lo] as number) >= ms) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}
