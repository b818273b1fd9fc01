// IEEE half (FP16) and bfloat16 (BF16) bit patterns to and from JS numbers.
// Tensors keep FP16/BF16 as Uint16Array raw bits; these are the only places that interpret them.

// Scratch views reading a double's bits; the high word's index depends on the host byte order.
const scratchF64 = new Float64Array(1);
const scratchU32 = new Uint32Array(scratchF64.buffer);
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
const LO = 1 - HI;

interface SmallFloat {
  bias: number;
  mantissaBits: number;
  infBits: number;
  nanBits: number;
}

const HALF: SmallFloat = { bias: 15, mantissaBits: 10, infBits: 0x7c00, nanBits: 0x7e00 };
const BF16: SmallFloat = { bias: 127, mantissaBits: 7, infBits: 0x7f80, nanBits: 0x7fc0 };

/**
 * Rounds a double straight to the small format (round-to-nearest-even), so there is no double
 * rounding through float32: subnormals, overflow to infinity and NaN all come out as IEEE says.
 */
function roundToSmallFloat(value: number, format: SmallFloat): number {
  scratchF64[0] = value;
  const hi = scratchU32[HI];
  const lo = scratchU32[LO];
  const sign = (hi >>> 16) & 0x8000;
  const exponentField = (hi >>> 20) & 0x7ff;
  const fraction = (hi & 0xfffff) * 0x100000000 + lo;
  if (exponentField === 0x7ff) return sign | (fraction === 0 ? format.infBits : format.nanBits);
  if (exponentField === 0) return sign; // double subnormals are far below either format's range

  const e = exponentField - 1023;
  const minNormalExponent = 1 - format.bias;
  // How many low bits of the 53-bit significand fall below the target's last place.
  const shift = e >= minNormalExponent ? 52 - format.mantissaBits : 52 - format.mantissaBits + (minNormalExponent - e);
  if (shift > 53) return sign;
  const significand = 0x10000000000000 + fraction; // 2^52 + fraction: exact below 2^53
  const unit = 2 ** shift;
  let q = Math.floor(significand / unit);
  const remainder = significand - q * unit;
  const halfUnit = unit / 2;
  if (remainder > halfUnit || (remainder === halfUnit && q % 2 === 1)) q += 1;
  // Normal: exponent field (e + bias) above the implicit bit; a carry out of the mantissa
  // bumps the exponent by itself. Subnormal: q is the whole pattern (q = 2^m is the least normal).
  const magnitude = e >= minNormalExponent ? (e + format.bias - 1) * 2 ** format.mantissaBits + q : q;
  return sign | Math.min(magnitude, format.infBits);
}

/** A number to FP16 bits, rounding to nearest even; out-of-range values become +/-Infinity. */
export function convertFloatToHalfBits(value: number): number {
  return roundToSmallFloat(value, HALF);
}

/** A number to BF16 bits, rounding to nearest even (not truncating, as some libraries do). */
export function convertFloatToBf16Bits(value: number): number {
  return roundToSmallFloat(value, BF16);
}

let halfTable: Float32Array | undefined;

/** FP16 bits to the exact number they denote. */
export function convertHalfBitsToFloat(bits: number): number {
  // A 256 KiB table built on first use: every half value is exact in float32.
  halfTable ??= buildHalfTable();
  return halfTable[bits & 0xffff];
}

function buildHalfTable(): Float32Array {
  const table = new Float32Array(65536);
  for (let bits = 0; bits < 65536; bits++) {
    const exponent = (bits >>> 10) & 0x1f;
    const mantissa = bits & 0x3ff;
    let magnitude: number;
    if (exponent === 0) magnitude = mantissa * 2 ** -24;
    else if (exponent === 31) magnitude = mantissa === 0 ? Infinity : NaN;
    else magnitude = (1024 + mantissa) * 2 ** (exponent - 25);
    table[bits] = bits & 0x8000 ? -magnitude : magnitude;
  }
  return table;
}

const bf16Scratch = new Uint32Array(1);
const bf16ScratchF32 = new Float32Array(bf16Scratch.buffer);

/** BF16 bits to the exact number they denote (BF16 is the top half of a float32). */
export function convertBf16BitsToFloat(bits: number): number {
  bf16Scratch[0] = (bits & 0xffff) << 16;
  return bf16ScratchF32[0];
}

/** Many numbers to FP16 bits. */
export function convertFloatsToHalfBits(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = roundToSmallFloat(values[i], HALF);
  return out;
}

/** Many numbers to BF16 bits. */
export function convertFloatsToBf16Bits(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = roundToSmallFloat(values[i], BF16);
  return out;
}

/** FP16 bits to float32 values (exact). */
export function convertHalfBitsToFloats(bits: Uint16Array): Float32Array {
  halfTable ??= buildHalfTable();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = halfTable[bits[i]];
  return out;
}

/** BF16 bits to float32 values (exact). */
export function convertBf16BitsToFloats(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = bits[i] << 16;
  return out;
}
