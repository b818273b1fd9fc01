// Triton's classification extension: an output requested with `classification: k` comes back as a
// BYTES tensor of "value:index[:label]" strings, the top k per batch element, instead of raw values.
// Semantics follow Triton's server (classification.cc and its HTTP/gRPC callers), noted where they bite.
import { readFileSync } from 'node:fs';
import { HerdError } from '../core/errors.ts';
import { elementCount, type Tensor } from '../core/tensor.ts';

export interface ClassifyOptions {
  /** Requested class count k (the "classification" output parameter); an integer >= 1. */
  classCount: number;
  /** The model batches (max_batch_size > 0): the first dim is the batch and each row is ranked alone. */
  batching: boolean;
  /** Labels by class index, from the output's label_filename; a missing or empty label adds no suffix. */
  labels?: readonly string[];
}

const encoder = new TextEncoder();

/**
 * The classification result for one numeric output. Shape is [batch, min(k, classes)] for a batching
 * model and [min(k, classes)] otherwise — fewer than k when the output has fewer classes, as Triton.
 * Order: highest value first; equal values by ascending index (Triton's std::sort leaves ties
 * unspecified, so this is our pick); NaN ranks below every number.
 * Throws INVALID_ARG for BYTES, BOOL, FP16 and BF16 outputs, which Triton does not classify either.
 */
export function classifyTensor(tensor: Tensor, options: ClassifyOptions): Tensor {
  const { classCount, batching, labels } = options;
  if (!Number.isSafeInteger(classCount) || classCount < 1) {
    throw new HerdError('INVALID_ARG', `classification count for output '${tensor.name}' must be a positive integer, got ${classCount}`);
  }
  const values = rankableValues(tensor);
  const total = elementCount(tensor.shape);
  if (values.length !== total) {
    throw new HerdError('INTERNAL', `output '${tensor.name}' has shape [${tensor.shape.join(',')}] but ${values.length} elements`);
  }
  const batched = batching && tensor.shape.length > 0;
  const batch = batched ? tensor.shape[0] : 1;
  const perRow = batched ? elementCount(tensor.shape.slice(1)) : total;
  const k = Math.min(classCount, perRow);

  const data: Uint8Array[] = [];
  for (let row = 0; row < batch; row++) {
    const offset = row * perRow;
    for (const index of topIndices(values, offset, perRow, k)) {
      const label = labels?.[index];
      const text = `${formatValue(values[offset + index], tensor.datatype)}:${index}${label ? `:${label}` : ''}`;
      data.push(encoder.encode(text));
    }
  }
  return { name: tensor.name, datatype: 'BYTES', shape: batched ? [batch, k] : [k], data };
}

type RankableArray = Exclude<Tensor['data'], Uint8Array[]>;

function rankableValues(tensor: Tensor): RankableArray {
  const { datatype, data } = tensor;
  if (Array.isArray(data) || datatype === 'BYTES' || datatype === 'BOOL' || datatype === 'FP16' || datatype === 'BF16') {
    // Triton's wording, so clients matching on the message see the same text.
    throw new HerdError('INVALID_ARG', `class result not available for output due to unsupported type '${datatype}'`);
  }
  return data;
}

/** Indices (relative to offset) of the k largest of values[offset .. offset+count). */
function topIndices(values: RankableArray, offset: number, count: number, k: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((a, b) => compareDescending(values[offset + a], values[offset + b]) || a - b);
  return order.slice(0, k);
}

function compareDescending(a: number | bigint, b: number | bigint): number {
  const aNaN = typeof a === 'number' && Number.isNaN(a);
  const bNaN = typeof b === 'number' && Number.isNaN(b);
  if (aNaN || bNaN) return aNaN === bNaN ? 0 : aNaN ? 1 : -1;
  return a > b ? -1 : a < b ? 1 : 0;
}

/**
 * Triton formats the value with std::to_string: integers in decimal, FP32/FP64 like printf("%f")
 * — six decimals, "nan", "inf", a kept minus sign on -0.
 */
export function formatValue(value: number | bigint, datatype: string): string {
  if (typeof value === 'bigint') return value.toString();
  if (datatype !== 'FP32' && datatype !== 'FP64') return String(value);
  return formatFixed6(value);
}

/** printf("%f") for a double: exact decimal expansion rounded half-to-even at 6 places (as glibc). */
export function formatFixed6(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  const negative = value < 0 || Object.is(value, -0);
  const x = Math.abs(value);
  if (x === Infinity) return negative ? '-inf' : 'inf';
  // toFixed rounds ties away from zero; glibc rounds the exact binary value half-to-even, so the
  // value is expanded exactly: x = mantissa * 2^exponent.
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & 0xfffffffffffffn;
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  let micros: bigint;
  if (exponent >= 0) {
    micros = (mantissa << BigInt(exponent)) * 1_000_000n;
  } else {
    const shift = BigInt(-exponent);
    const scaled = mantissa * 1_000_000n;
    micros = scaled >> shift;
    const remainder = scaled - (micros << shift);
    const half = 1n << (shift - 1n);
    if (remainder > half || (remainder === half && (micros & 1n) === 1n)) micros += 1n;
  }
  const whole = micros / 1_000_000n;
  const frac = (micros % 1_000_000n).toString().padStart(6, '0');
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

/**
 * Labels of a label file, one per line, as Triton's LabelProvider reads them (std::getline): a final
 * newline adds no empty label, blank lines in between are kept (and then add no suffix). Unlike
 * Triton a trailing '\r' is dropped, so files saved with Windows line ends give clean labels.
 */
export function readLabelFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'NOT_FOUND' : 'INTERNAL';
    throw new HerdError(code, `unable to read label file '${path}': ${(err as Error).message}`, { cause: err });
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}
