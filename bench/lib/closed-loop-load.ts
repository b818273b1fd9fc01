// A closed-loop HTTP load generator for the serving benchmarks: C connections on one undici Pool,
// each sending a prebuilt body back to back for a fixed time. Same generator for Herd and the bare
// server, so their numbers compare as ratios. (Node's global fetch capped at a quarter of this here.)
import { Pool } from 'undici';

export interface LoadSpec {
  origin: string;
  path: string;
  body: Buffer;
  headers: Record<string, string>;
  concurrency: number;
  durationMs: number;
  /** Requests per second across all connections (open loop); omitted: closed loop. */
  ratePerSecond?: number;
  /** A 200 whose whole body this refuses counts as an error (e.g. a stream that did not end in [DONE]). */
  accept?: (body: Buffer) => boolean;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  statuses: Record<number, number>;
  /** Latency percentiles of 200 answers, µs. */
  p50us: number;
  p90us: number;
  p99us: number;
  /** Latency percentiles of non-200 answers, µs (how fast refusals come back). */
  refusedP99us: number;
  errors: number;
  /** Every latency, sorted, µs: lets interleaved windows merge into exact percentiles. */
  okUs: number[];
  refusedUs: number[];
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const pool = new Pool(spec.origin, { connections: spec.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const ok: number[] = [];
  const refused: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  const started = performance.now();
  const end = started + spec.durationMs;
  const one = async () => {
    const t0 = performance.now();
    try {
      const res = await pool.request({ method: 'POST', path: spec.path, body: spec.body, headers: spec.headers });
      const body = await res.body.arrayBuffer();
      if (res.statusCode === 200 && spec.accept !== undefined && !spec.accept(Buffer.from(body))) throw new Error('answer refused by accept()');
      const us = (performance.now() - t0) * 1000;
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      (res.statusCode === 200 ? ok : refused).push(us);
    } catch {
      errors += 1;
    }
  };
  if (spec.ratePerSecond) {
    const interval = 1000 / spec.ratePerSecond;
    const inflight = new Set<Promise<void>>();
    for (let next = started; next < end; next += interval) {
      const wait = next - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const p = one().then(() => {
        inflight.delete(p);
      });
      inflight.add(p);
    }
    await Promise.all(inflight);
  } else {
    await Promise.all(
      Array.from({ length: spec.concurrency }, async () => {
        while (performance.now() < end) await one();
      }),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return summariseLoad({ ok, refused, seconds, statuses, errors });
}

const pick = (xs: number[], p: number) => (xs.length === 0 ? 0 : (xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number));

/** A LoadResult from raw latencies (sorted here) and counts; for load generators other than runLoad too. */
export function summariseLoad(raw: { ok: number[]; refused: number[]; seconds: number; statuses: Record<number, number>; errors: number }): LoadResult {
  const { ok, refused, seconds, statuses, errors } = raw;
  ok.sort((a, b) => a - b);
  refused.sort((a, b) => a - b);
  const requests = ok.length + refused.length + errors;
  return {
    requests,
    seconds,
    perSecond: ok.length / seconds,
    statuses,
    errors,
    okUs: ok,
    refusedUs: refused,
    p50us: pick(ok, 50),
    p90us: pick(ok, 90),
    p99us: pick(ok, 99),
    refusedP99us: pick(refused, 99),
  };
}

/** Several windows of one target as if they were one run: summed counts and time, exact percentiles. */
export function mergeLoadResults(results: readonly LoadResult[]): LoadResult {
  const statuses: Record<number, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.statuses)) statuses[Number(k)] = (statuses[Number(k)] ?? 0) + v;
  return summariseLoad({
    ok: results.flatMap((r) => r.okUs),
    refused: results.flatMap((r) => r.refusedUs),
    seconds: results.reduce((sum, r) => sum + r.seconds, 0),
    statuses,
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  });
}

/**
 * Runs the targets in alternating windows (A B A B ...) and merges each one's windows. On a shared machine
 * the background load drifts over seconds; alternating puts every target under the same drift, so their
 * ratio means something where two back-to-back runs do not.
 */
export async function runInterleaved<K extends string>(
  targets: Record<K, (windowMs: number) => Promise<LoadResult>>,
  totalMs: number,
  windowMs = 1000,
  gapMs = 0,
): Promise<Record<K, LoadResult>> {
  const keys = Object.keys(targets) as K[];
  const windows = Math.max(1, Math.round(totalMs / windowMs));
  const parts = Object.fromEntries(keys.map((k) => [k, [] as LoadResult[]])) as Record<K, LoadResult[]>;
  for (let w = 0; w < windows; w++) {
    // Alternate the order too, so no target always runs right after the same other one.
    for (const k of w % 2 === 0 ? keys : [...keys].reverse()) {
      parts[k].push(await targets[k](totalMs / windows));
      // A pause lets what one window left behind (GC, a draining queue) settle before the next.
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    }
  }
  return Object.fromEntries(keys.map((k) => [k, mergeLoadResults(parts[k])])) as Record<K, LoadResult>;
}

/** One sample for the bench's tools, as binary infer body: add_sub's two INT32[16] inputs, else one FP32[768]. */
export function createSampleInferBody(model: string): { body: Buffer; headers: Record<string, string> } {
  return createBinaryInferBody(
    model === 'add_sub'
      ? ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) }))
      : [{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: Float32Array.from({ length: 768 }, (_, i) => Math.sin(i)) }],
  );
}

/** A KServe binary-extension infer body: JSON header then raw FP32/INT32 bytes per input. */
export function createBinaryInferBody(
  inputs: { name: string; datatype: string; shape: number[]; data: ArrayBufferView }[],
  binaryOutputs = true,
): { body: Buffer; headers: Record<string, string> } {
  const header = {
    inputs: inputs.map((i) => ({ name: i.name, datatype: i.datatype, shape: i.shape, parameters: { binary_data_size: i.data.byteLength } })),
    parameters: { binary_data_output: binaryOutputs },
  };
  const json = Buffer.from(JSON.stringify(header));
  const body = Buffer.concat([json, ...inputs.map((i) => Buffer.from(i.data.buffer, i.data.byteOffset, i.data.byteLength))]);
  return { body, headers: { 'inference-header-content-length': String(json.length), 'content-type': 'application/octet-stream' } };
}
