// Open-loop realtime load for the batch bench: chat requests sent at a fixed rate whatever the answers' pace, each
// latency measured from when it was due (so a stalled server shows up in the tail, not as fewer requests).
import { Pool } from 'undici';
import { chatBody } from './batch-bench-setup.ts';

export interface RateResult {
  sent: number;
  ok: number;
  /** Other statuses and transport errors, by status (0 = error). */
  failed: Record<number, number>;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** The slowest requests: when each was due (ms into the window) and its latency, to tell one stall from a spread. */
  worst: { dueMs: number; ms: number }[];
}

export const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

export async function runFixedRate(url: string, key: string, ratePerSecond: number, seconds: number): Promise<RateResult> {
  const pool = new Pool(url, { connections: 64, keepAliveTimeout: 60_000 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const total = Math.round(ratePerSecond * seconds);
  const gapMs = 1000 / ratePerSecond;
  const latencies: number[] = [];
  const timed: { dueMs: number; ms: number }[] = [];
  const failed: Record<number, number> = {};
  const start = performance.now();
  const one = async (i: number): Promise<void> => {
    const due = start + i * gapMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    try {
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body: JSON.stringify(chatBody(i)) });
      await res.body.text();
      if (res.statusCode === 200) {
        latencies.push(performance.now() - due);
        timed.push({ dueMs: due - start, ms: performance.now() - due });
      } else failed[res.statusCode] = (failed[res.statusCode] ?? 0) + 1;
    } catch {
      failed[0] = (failed[0] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: total }, (_, i) => one(i)));
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    sent: total,
    ok: latencies.length,
    failed,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? Number.NaN,
    worst: timed.sort((a, b) => b.ms - a.ms).slice(0, 5),
  };
}
