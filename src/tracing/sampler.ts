// Which traces are recorded: a parent-based ratio (OpenTelemetry's parentbased_traceidratio) whose remote
// parents are always sampled, as Triton traces every request that arrives with a traceparent.
import type { TraceParent } from './trace-parent.ts';

export interface SamplerSettings {
  /** 0..1 of new traces (roots) recorded. */
  ratio: number;
  /** true: children follow their parent, and a propagated (remote) parent is always sampled; false: the ratio decides every span by its trace id. */
  parentBased: boolean;
}

export type Sampler = (parent: TraceParent | undefined, traceId: string) => boolean;

/** The decision for a span of `traceId` under `parent` (a valid parent or undefined). */
export function createSampler(settings: SamplerSettings): Sampler {
  const byRatio = ratioSampler(settings.ratio);
  if (!settings.parentBased) return (_parent, traceId) => byRatio(traceId);
  return (parent, traceId) => {
    if (parent === undefined) return byRatio(traceId);
    return parent.remote ? true : parent.sampled;
  };
}

/**
 * The trace id's rightmost 56 bits (W3C's random part) against the ratio, so every process sampling a trace
 * by ratio agrees on it.
 */
function ratioSampler(ratio: number): (traceId: string) => boolean {
  if (ratio >= 1) return () => true;
  if (ratio <= 0) return () => false;
  const bound = Math.floor(ratio * 2 ** 56);
  return (traceId) => Number.parseInt(traceId.slice(18), 16) < bound;
}
