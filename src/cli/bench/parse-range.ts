// `--concurrency-range` and `--request-rate-range` as perf_analyzer reads them: start[:end[:step]],
// end defaulting to start, step to 1, and end 0 meaning "until the latency threshold is crossed".
import { invalidArg } from '../../core/errors.ts';

export interface LoadRange {
  start: number;
  /** 0: no upper bound (the sweep stops at --latency-threshold). */
  end: number;
  step: number;
}

export function parseConcurrencyRange(text: string): LoadRange {
  return parseRange(text, { flag: '--concurrency-range', integer: true, example: '1:8:2' });
}

export function parseRequestRateRange(text: string): LoadRange {
  return parseRange(text, { flag: '--request-rate-range', integer: false, example: '100:500:100' });
}

interface RangeRules {
  flag: string;
  integer: boolean;
  example: string;
}

function parseRange(text: string, rules: RangeRules): LoadRange {
  const fail = (why: string) => invalidArg(`${rules.flag} '${text}': ${why}; expected start[:end[:step]], e.g. ${rules.example}`);
  const parts = text.trim().split(':');
  if (parts.length > 3) throw fail(`${parts.length} fields`);
  const kind = rules.integer ? 'a whole number' : 'a number';
  const numbers = parts.map((part, i) => {
    const name = ['start', 'end', 'step'][i] as string;
    const trimmed = part.trim();
    const pattern = rules.integer ? /^\d+$/ : /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
    if (!pattern.test(trimmed)) throw fail(`${name} ${trimmed === '' ? 'is empty' : `'${trimmed}' is not ${kind}`}`);
    const value = Number(trimmed);
    if (!Number.isFinite(value) || (rules.integer && !Number.isSafeInteger(value))) throw fail(`${name} '${trimmed}' is out of range`);
    return value;
  });
  const start = numbers[0] as number;
  const end = numbers[1] ?? start;
  const step = numbers[2] ?? 1;
  if (start <= 0) throw fail('start must be greater than 0');
  if (step <= 0) throw fail('step must be greater than 0');
  if (end !== 0 && end < start) throw fail(`end ${end} is below start ${start} (use end 0 to search up to --latency-threshold)`);
  return { start, end, step };
}

/**
 * The i-th level of a range (open or not), undefined once past a bounded end. Computed from start,
 * not by adding steps, so 0.1:0.3:0.1 reaches 0.3 despite binary fractions.
 */
export function levelAt(range: LoadRange, index: number): number | undefined {
  const level = Number((range.start + index * range.step).toPrecision(12));
  if (range.end !== 0 && level > range.end + range.step * 1e-9) return undefined;
  return level;
}
