// Exact money: decimals read as written, half-even rounding at the micro-unit, display to the cent,
// and sums of a million small costs that drift with floats and do not with integer micros.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addMicros, formatBillAmount, formatMicros, formatMoney, roundToMicros, toSafeMicros } from '../../../src/gateway/billing/money.ts';
import { Rational, roundHalfEven } from '../../../src/gateway/billing/rational.ts';

test('decimals are read exactly as written, whatever their binary float value', () => {
  assert.equal(Rational.of(7.3).toDecimalString(), '7.3');
  assert.equal(Rational.of(0.028).times(3).toDecimalString(), '0.084');
  assert.equal(Rational.of('0.1').plus('0.2').compare(Rational.of('0.3')), 0, '0.1 + 0.2 is 0.3 here, unlike in floats');
  assert.notEqual(0.1 + 0.2, 0.3);
  assert.equal(Rational.of(1e-7).toDecimalString(), '0.0000001');
  assert.equal(Rational.of('2.5e3').toDecimalString(), '2500');
  assert.equal(Rational.of(8).dividedBy(7.3).toDecimalString(6), '1.09589');
  assert.throws(() => Rational.of('7,3'), /not a decimal number/);
  assert.throws(() => Rational.of(Number.NaN), /not a finite number/);
  assert.throws(() => Rational.of(1).dividedBy(0), /division by zero/);
});

test('rounding is half to even, for positive and negative amounts', () => {
  const cases: Array<[bigint, bigint, bigint]> = [
    [5n, 2n, 2n],
    [7n, 2n, 4n],
    [3n, 2n, 2n],
    [1n, 2n, 0n],
    [-5n, 2n, -2n],
    [-7n, 2n, -4n],
    [-1n, 2n, 0n],
    [251n, 100n, 3n],
    [249n, 100n, 2n],
    [-251n, 100n, -3n],
    [10n, 3n, 3n],
    [-10n, 3n, -3n],
    [0n, 7n, 0n],
  ];
  for (const [num, den, expected] of cases) assert.equal(roundHalfEven(num, den), expected, `${num}/${den}`);
  // At the micro-unit: 0.5 µ¥ rounds to 0, 1.5 to 2, 2.5 to 2.
  assert.equal(roundToMicros(Rational.of('0.5')), 0);
  assert.equal(roundToMicros(Rational.of('1.5')), 2);
  assert.equal(roundToMicros(Rational.of('2.5')), 2);
});

test('display: cents half-even from micros, symbols and thousands separators', () => {
  assert.equal(formatMicros(58_400_000), '58.40');
  assert.equal(formatMicros(3_066_000), '3.07');
  assert.equal(formatMicros(5_000), '0.00', '0.005 is a tie: to the even cent, 0.00');
  assert.equal(formatMicros(15_000), '0.02', '0.015 → 0.02 (2 is even)');
  assert.equal(formatMicros(25_000), '0.02', '0.025 → 0.02');
  assert.equal(formatMicros(-1_234_567), '-1.23');
  assert.equal(formatMicros(1_234_567, 6), '1.234567');
  assert.equal(formatMicros(1_500_000, 0), '2');
  assert.equal(formatMoney(38_544_000_000, 'CNY'), '¥38,544.00');
  assert.equal(formatMoney(-100_000, 'USD'), '-$0.10');
});

test('summing a million small costs: integer micros are exact, floats drift', () => {
  // 1e6 requests of 37 prompt tokens at $0.28/M and 11 output tokens at $0.42/M through a ¥7.3/$ provider.
  const one = Rational.of(37).times('0.28').plus(Rational.of(11).times('0.42')).times('7.3');
  const micros = roundToMicros(one); // 109.354 µ¥ → 109
  assert.equal(micros, 109);
  let exact = 0;
  let float = 0;
  for (let i = 0; i < 1_000_000; i++) {
    exact = addMicros(exact, micros);
    float += micros / 1e6; // the same charge as a float number of yuan
  }
  assert.equal(exact, 109_000_000);
  assert.equal(formatMicros(exact), '109.00');
  assert.notEqual(float, 109, `the float sum drifted to ${float}`);
  assert.ok(Math.abs(float - 109) > 1e-9);
  // Rounding once per request: the unrounded total (109.354) differs by the documented ≤ 0.5 µ¥ a request.
  assert.equal(one.times(1_000_000).roundHalfEven(), 109_354_000n);
});

test('driver integers: pg strings and SQLite numbers become safe integers; unsafe ones fail loudly', () => {
  assert.equal(toSafeMicros('9007199254740991'), Number.MAX_SAFE_INTEGER);
  assert.equal(toSafeMicros(null), 0);
  assert.equal(toSafeMicros(12n), 12);
  assert.throws(() => toSafeMicros('9007199254740993'), /not an integer within/);
  assert.throws(() => toSafeMicros('1.5'), /not an integer within/);
  assert.throws(() => addMicros(Number.MAX_SAFE_INTEGER, 1), /beyond 2\^53/);
});

test('bill amounts: cents from 0.10 up, two significant digits below, down to the micro-unit', () => {
  assert.equal(formatBillAmount(0, 'CNY'), '¥0.00');
  assert.equal(formatBillAmount(38_544_000_000, 'CNY'), '¥38,544.00');
  assert.equal(formatBillAmount(1_234_567, 'USD'), '$1.23');
  assert.equal(formatBillAmount(500_000, 'CNY'), '¥0.50');
  assert.equal(formatBillAmount(123_456, 'CNY'), '¥0.12');
  assert.equal(formatBillAmount(15_000, 'CNY'), '¥0.015');
  assert.equal(formatBillAmount(4_200, 'CNY'), '¥0.0042');
  assert.equal(formatBillAmount(575, 'USD'), '$0.00058', 'half to even at the last place shown');
  assert.equal(formatBillAmount(12, 'USD'), '$0.000012');
  assert.equal(formatBillAmount(1, 'CNY'), '¥0.000001');
  assert.equal(formatBillAmount(-4_200, 'USD'), '-$0.0042');
  assert.equal(formatBillAmount(99_999, 'CNY'), '¥0.100');
});
