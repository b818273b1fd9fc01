// Budget amounts as people type them ("12.5", in the settlement currency) to integer micro-units
// and back, by string arithmetic: "0.1" is exactly 100000 micros, never 0.1 × 1e6 in floating point.
import { HerdError } from '../../core/errors.ts';

const MICRO_DIGITS = 6;
const AMOUNT = /^(\d+)(?:\.(\d+))?$/;

/** `12`, `12.5`, `0.000001`; more than 6 decimals is an error rather than a silent rounding. */
export function parseBudgetAmount(text: string, param: string): number {
  const trimmed = text.trim();
  const match = AMOUNT.exec(trimmed);
  if (!match) {
    throw new HerdError('INVALID_ARG', `${param} must be an amount such as 10 or 12.50 (settlement currency, no sign or symbol), got '${text}'`, { param });
  }
  const whole = match[1] as string;
  const fraction = match[2] ?? '';
  if (fraction.length > MICRO_DIGITS) {
    throw new HerdError('INVALID_ARG', `${param} has more than ${MICRO_DIGITS} decimals (${trimmed}): budgets are kept in millionths of a unit`, { param });
  }
  const micros = BigInt(whole) * 10n ** BigInt(MICRO_DIGITS) + BigInt(fraction.padEnd(MICRO_DIGITS, '0') || '0');
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) throw new HerdError('INVALID_ARG', `${param} is too large (${trimmed})`, { param });
  return Number(micros);
}

/** 12500000 → `12.50`: at least two decimals, more only when they are not zero. */
export function formatBudgetAmount(micros: number): string {
  const digits = String(micros).padStart(MICRO_DIGITS + 1, '0');
  const whole = digits.slice(0, -MICRO_DIGITS);
  const fraction = digits.slice(-MICRO_DIGITS).replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${fraction}`;
}
