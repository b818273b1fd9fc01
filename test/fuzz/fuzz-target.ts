// What a fuzz target is (a fast-check property over outside bytes, plus what it needs started) and the
// one runner both the seeded run in `npm test` and bench/fuzz/run-fuzz.ts use.
import fc from 'fast-check';
import { HerdError, type ErrorCode } from '../../src/core/errors.ts';

export interface FuzzTarget {
  name: string;
  /** Starts what the property needs (a server, a fake upstream) and returns it with its teardown. */
  open(): Promise<OpenTarget>;
}

export interface OpenTarget {
  arbitrary: fc.Arbitrary<unknown>;
  /** Throws when the input breaks an invariant. */
  check(input: unknown): void | Promise<void>;
  close(): Promise<void>;
}

export interface FuzzRunOptions {
  seed: number;
  /** Stop after this many inputs... */
  numRuns?: number;
  /** ...or after this long (the bench's --seconds), whichever comes first. */
  timeLimitMs?: number;
  /** Per input: an async property still running after this long is a hang (a failure). */
  hangMs?: number;
}

export interface FuzzRunResult {
  target: string;
  runs: number;
  failures: number;
  /** The shrunk input and what it broke, when the run failed. */
  counterexample: string | undefined;
  error: string | undefined;
  ms: number;
  /** The slowest single input, in ms. */
  slowestMs: number;
  /** Resident set size after the run minus before it, in MB (heap growth and what stayed allocated). */
  rssGrowthMb: number;
}

export async function runFuzzTarget(target: FuzzTarget, options: FuzzRunOptions): Promise<FuzzRunResult> {
  const opened = await target.open();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  let slowestMs = 0;
  const property = fc.asyncProperty(opened.arbitrary, async (input) => {
    const t0 = performance.now();
    try {
      await opened.check(input);
    } finally {
      slowestMs = Math.max(slowestMs, performance.now() - t0);
    }
  });
  try {
    const params: fc.Parameters<[unknown]> = {
      seed: options.seed,
      numRuns: options.numRuns ?? Number.MAX_SAFE_INTEGER,
      timeout: options.hangMs ?? 5000,
      ...(options.timeLimitMs === undefined ? {} : { interruptAfterTimeLimit: options.timeLimitMs, markInterruptAsFailure: false }),
    };
    // fc.check never throws: a failing property comes back in the details, shrunk.
    const details = await fc.check(property, params);
    return {
      target: target.name,
      runs: details.numRuns,
      failures: details.failed ? 1 : 0,
      counterexample: details.counterexample ? describeInput(details.counterexample[0]).slice(0, 2000) : undefined,
      error: details.errorInstance ? String((details.errorInstance as Error).stack ?? details.errorInstance).slice(0, 2000) : undefined,
      ms: performance.now() - started,
      slowestMs,
      rssGrowthMb: (process.memoryUsage().rss - rssBefore) / 2 ** 20,
    };
  } finally {
    await opened.close();
  }
}

/** The invariant for an in-process parser: it returns, or throws a HerdError a client is to blame for. */
export function checkRejection(err: unknown, allowed: readonly ErrorCode[] = ['INVALID_ARG']): void {
  if (!(err instanceof HerdError)) throw new Error(`parser threw ${describeThrown(err)} instead of a HerdError`, { cause: err });
  if (!allowed.includes(err.code)) throw new Error(`parser threw HerdError ${err.code} (${err.message.slice(0, 200)}); expected one of ${allowed.join(', ')}`, { cause: err });
}

export function describeThrown(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.slice(0, 300)}`;
  return typeof err;
}

/** Calls `parse` and applies checkRejection to whatever it throws; the result, when it returns. */
export function parseOrReject<T>(parse: () => T, allowed?: readonly ErrorCode[]): T | undefined {
  try {
    return parse();
  } catch (err) {
    checkRejection(err, allowed);
    return undefined;
  }
}

/** Buffers as latin1 text (one character per byte), readable and exact, instead of fast-check's byte lists. */
function describeInput(input: unknown): string {
  const buffers = (value: unknown): unknown => {
    if (Buffer.isBuffer(value)) return { latin1: value.toString('latin1') };
    if (Array.isArray(value)) return value.map(buffers);
    return value;
  };
  return JSON.stringify(buffers(input), (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? fc.stringify(input);
}
