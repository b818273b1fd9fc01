// Exact arithmetic for money: bigint fractions that read decimals as written (7.3 is 73/10), multiply
// and divide exactly, and round once, half-even, when an amount becomes integer micro-units.
import { HerdError } from '../../core/errors.ts';

/** Anything Rational.of reads exactly. */
export type RationalLike = Rational | number | string | bigint;

const DECIMAL = /^([+-])?(\d+)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

export class Rational {
  /** Denominator is always positive; the fraction is not necessarily reduced (no gcd on the hot path). */
  private constructor(
    readonly num: bigint,
    readonly den: bigint,
  ) {}

  static readonly ZERO = new Rational(0n, 1n);
  static readonly ONE = new Rational(1n, 1n);

  /**
   * The exact value of a decimal: a number is read through its shortest round-trip string (the
   * literal as written in herd.yaml, e.g. 0.028), a string as written ("7.3", "1e-3"), a bigint as is.
   */
  static of(value: RationalLike): Rational {
    if (value instanceof Rational) return value;
    if (typeof value === 'bigint') return new Rational(value, 1n);
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new HerdError('INVALID_ARG', `not a finite number: ${value}`);
      if (Number.isSafeInteger(value)) return new Rational(BigInt(value), 1n);
      return Rational.parse(String(value));
    }
    return Rational.parse(value);
  }

  static fraction(num: bigint, den: bigint): Rational {
    if (den === 0n) throw new HerdError('INVALID_ARG', 'division by zero');
    return den < 0n ? new Rational(-num, -den) : new Rational(num, den);
  }

  private static parse(text: string): Rational {
    const match = DECIMAL.exec(text.trim());
    if (!match) throw new HerdError('INVALID_ARG', `not a decimal number: '${text}'`);
    const [, sign, whole = '0', fraction = '', exponent = '0'] = match;
    let num = BigInt(whole + fraction) * (sign === '-' ? -1n : 1n);
    let scale = fraction.length - Number(exponent);
    if (scale < 0) {
      num *= 10n ** BigInt(-scale);
      scale = 0;
    }
    return new Rational(num, 10n ** BigInt(scale));
  }

  plus(other: RationalLike): Rational {
    const o = Rational.of(other);
    if (o.den === this.den) return new Rational(this.num + o.num, this.den);
    return new Rational(this.num * o.den + o.num * this.den, this.den * o.den);
  }

  minus(other: RationalLike): Rational {
    const o = Rational.of(other);
    return this.plus(new Rational(-o.num, o.den));
  }

  times(other: RationalLike): Rational {
    const o = Rational.of(other);
    return new Rational(this.num * o.num, this.den * o.den);
  }

  dividedBy(other: RationalLike): Rational {
    const o = Rational.of(other);
    return Rational.fraction(this.num * o.den, this.den * o.num);
  }

  compare(other: RationalLike): -1 | 0 | 1 {
    const o = Rational.of(other);
    const left = this.num * o.den;
    const right = o.num * this.den;
    return left < right ? -1 : left > right ? 1 : 0;
  }

  isZero(): boolean {
    return this.num === 0n;
  }

  /**
   * The nearest integer, ties to the even neighbour (banker's rounding): unbiased, so a million
   * roundings do not drift one way, and the rule IEEE 754 and most accounting systems default to.
   */
  roundHalfEven(): bigint {
    return roundHalfEven(this.num, this.den);
  }

  /** Exact decimal text when the denominator divides a power of ten, else rounded half-even at `maxDigits`. */
  toDecimalString(maxDigits = 12): string {
    const scaled = roundHalfEven(this.num * 10n ** BigInt(maxDigits), this.den);
    const negative = scaled < 0n;
    const digits = (negative ? -scaled : scaled).toString().padStart(maxDigits + 1, '0');
    const whole = digits.slice(0, digits.length - maxDigits);
    const fraction = digits.slice(digits.length - maxDigits).replace(/0+$/, '');
    return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
  }

  toString(): string {
    return this.toDecimalString();
  }
}

/** num/den rounded to an integer, half to even; den must be positive. */
export function roundHalfEven(num: bigint, den: bigint): bigint {
  if (den <= 0n) throw new HerdError('INTERNAL', 'roundHalfEven needs a positive denominator');
  let quotient = num / den;
  let remainder = num - quotient * den;
  // BigInt division truncates toward zero; step to floor so the remainder is in [0, den).
  if (remainder < 0n) {
    quotient -= 1n;
    remainder += den;
  }
  const twice = remainder * 2n;
  if (twice > den || (twice === den && quotient % 2n !== 0n)) return quotient + 1n;
  return quotient;
}
