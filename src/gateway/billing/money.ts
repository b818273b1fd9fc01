// Money as Herd stores it: integer micro-units (1e-6 of a currency unit) in a JS number, exact up
// to 2^53 micros (about 9 billion yuan or dollars), plus display helpers that round half-even.
import { HerdError } from '../../core/errors.ts';
import { Rational, roundHalfEven } from './rational.ts';

export const CURRENCIES = ['CNY', 'USD'] as const;
export type CurrencyCode = (typeof CURRENCIES)[number];

/** An integer count of 1e-6 currency units. Sums of integers below 2^53 are exact in a double. */
export type Micros = number;

export const MICROS_PER_UNIT = 1_000_000;

const SYMBOLS: Record<CurrencyCode, string> = { CNY: '¥', USD: '$' };

/** The one rounding step: an exact amount in micro-units to an integer, half to even. */
export function roundToMicros(amount: Rational): Micros {
  return toSafeMicros(amount.roundHalfEven());
}

/** Integers from a database driver (number, bigint, or pg's int8/numeric strings) as safe micros/counts. */
export function toSafeMicros(value: bigint | number | string | null | undefined): Micros {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new HerdError('INTERNAL', `amount ${String(value)} is not an integer within ±2^53 micro-units`);
  return n;
}

/** Adds integer micros, failing loudly instead of silently losing precision past 2^53. */
export function addMicros(a: Micros, b: Micros): Micros {
  const sum = a + b;
  if (!Number.isSafeInteger(sum)) throw new HerdError('INTERNAL', `money sum ${a} + ${b} is beyond 2^53 micro-units`);
  return sum;
}

/** Micros as a whole-unit amount: `Rational` for further exact arithmetic. */
export function microsToRational(micros: Micros): Rational {
  return Rational.fraction(BigInt(micros), BigInt(MICROS_PER_UNIT));
}

/**
 * A decimal string with exactly `decimals` places (default 2: cents / fen), rounded half-even from
 * the micro amount. Display only: stored amounts and sums stay in micros.
 */
export function formatMicros(micros: Micros, decimals = 2): string {
  if (decimals < 0 || decimals > 6) throw new HerdError('INTERNAL', 'decimals must be 0..6');
  const step = 10n ** BigInt(6 - decimals);
  const scaled = roundHalfEven(BigInt(micros), step);
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = decimals > 0 ? `.${digits.slice(digits.length - decimals)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** `¥1,234.57` / `-$0.10`: the currency symbol, thousands separators, `decimals` places. */
export function formatMoney(micros: Micros, currency: CurrencyCode, decimals = 2): string {
  const text = formatMicros(micros, decimals);
  const negative = text.startsWith('-');
  const [whole = '0', fraction] = (negative ? text.slice(1) : text).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${SYMBOLS[currency]}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/**
 * An amount as a bill shows it: cents / fen from 0.10 up (`¥1,234.57`, `¥0.50`); below that, enough
 * places for two significant digits, down to the micro-unit (`¥0.0042`, `$0.000012`), so a small
 * sum never reads as zero. Zero is `¥0.00`.
 */
export function formatBillAmount(micros: Micros, currency: CurrencyCode): string {
  const digits = String(Math.abs(micros)).length;
  return formatMoney(micros, currency, micros === 0 ? 2 : Math.min(6, Math.max(2, 8 - digits)));
}

export function currencySymbol(currency: CurrencyCode): string {
  return SYMBOLS[currency];
}
