import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  convertBf16BitsToFloat,
  convertBf16BitsToFloats,
  convertFloatToBf16Bits,
  convertFloatToHalfBits,
  convertFloatsToBf16Bits,
  convertFloatsToHalfBits,
  convertHalfBitsToFloat,
  convertHalfBitsToFloats,
} from '../../../src/core/codecs/fp16.ts';

const isNanHalf = (bits: number) => (bits & 0x7c00) === 0x7c00 && (bits & 0x03ff) !== 0;
const isNanBf16 = (bits: number) => (bits & 0x7f80) === 0x7f80 && (bits & 0x007f) !== 0;

test('FP16 known values', () => {
  const cases: [number, number][] = [
    [0, 0x0000],
    [-0, 0x8000],
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [1 / 3, 0x3555],
    [0.1, 0x2e66],
    [65504, 0x7bff],
    [65519.99, 0x7bff],
    [65520, 0x7c00],
    [1e10, 0x7c00],
    [-1e10, 0xfc00],
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
    [2 ** -14, 0x0400],
    [2 ** -24, 0x0001],
    [2 ** -25, 0x0000],
    [2 ** -25 * 1.000001, 0x0001],
    [3 * 2 ** -25, 0x0002],
    [1023 * 2 ** -24, 0x03ff],
    [1e-30, 0x0000],
    [-1e-30, 0x8000],
    [5e-324, 0],
  ];
  for (const [value, bits] of cases) {
    assert.equal(convertFloatToHalfBits(value), bits, `half(${value})`);
  }
  assert.equal(convertFloatToHalfBits(NaN), 0x7e00);
  assert.ok(Number.isNaN(convertHalfBitsToFloat(0x7e00)));
  assert.equal(convertHalfBitsToFloat(0x7c00), Infinity);
  assert.equal(convertHalfBitsToFloat(0x0001), 2 ** -24);
  assert.ok(Object.is(convertHalfBitsToFloat(0x8000), -0));
});

test('FP16: every pattern round-trips bit-exactly', () => {
  for (let bits = 0; bits < 0x10000; bits++) {
    if (isNanHalf(bits)) continue;
    assert.equal(convertFloatToHalfBits(convertHalfBitsToFloat(bits)), bits);
  }
});

test('FP16: midpoints round to even, anything off the midpoint to the nearer value', () => {
  for (let bits = 0; bits < 0x7bff; bits++) {
    const low = convertHalfBitsToFloat(bits);
    const high = convertHalfBitsToFloat(bits + 1);
    const mid = (low + high) / 2; // exact in a double
    const even = bits % 2 === 0 ? bits : bits + 1;
    assert.equal(convertFloatToHalfBits(mid), even, `midpoint of 0x${bits.toString(16)}`);
    assert.equal(convertFloatToHalfBits(-mid), even | 0x8000);
    const nudge = (high - low) / 1024;
    assert.equal(convertFloatToHalfBits(mid - nudge), bits);
    assert.equal(convertFloatToHalfBits(mid + nudge), bits + 1);
  }
});

test('BF16 known values and float32 agreement', () => {
  assert.equal(convertFloatToBf16Bits(1), 0x3f80);
  assert.equal(convertFloatToBf16Bits(-2), 0xc000);
  assert.equal(convertFloatToBf16Bits(Math.PI), 0x4049);
  assert.equal(convertFloatToBf16Bits(Infinity), 0x7f80);
  assert.equal(convertFloatToBf16Bits(3.5e38), 0x7f80); // above the largest BF16 after rounding
  assert.equal(convertFloatToBf16Bits(NaN), 0x7fc0);
  assert.equal(convertBf16BitsToFloat(0x3f80), 1);
  assert.equal(convertBf16BitsToFloat(0xc049), -3.140625);
  // Against the usual float32 bit trick (round-to-nearest-even on the low 16 bits).
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  let seed = 12345;
  for (let i = 0; i < 20000; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    u32[0] = seed;
    if (Number.isNaN(f32[0])) continue;
    const bits = u32[0];
    const expected = ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
    assert.equal(convertFloatToBf16Bits(f32[0]), expected, `bf16 of 0x${bits.toString(16)}`);
  }
});

test('BF16: every pattern round-trips bit-exactly', () => {
  for (let bits = 0; bits < 0x10000; bits++) {
    if (isNanBf16(bits)) continue;
    assert.equal(convertFloatToBf16Bits(convertBf16BitsToFloat(bits)), bits);
  }
});

test('array conversions agree with the scalar ones', () => {
  const values = [0, 1, -1.5, 65504, 1e-7, 3.3];
  const half = convertFloatsToHalfBits(values);
  assert.deepEqual(Array.from(half), values.map(convertFloatToHalfBits));
  assert.deepEqual(Array.from(convertHalfBitsToFloats(half)), Array.from(half, convertHalfBitsToFloat));
  const bf = convertFloatsToBf16Bits(values);
  assert.deepEqual(Array.from(bf), values.map(convertFloatToBf16Bits));
  assert.deepEqual(Array.from(convertBf16BitsToFloats(bf)), Array.from(bf, convertBf16BitsToFloat));
});
