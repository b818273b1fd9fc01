// One sample tensor per datatype for the codec tests: JSON values as a client writes them, the typed
// array they must decode to, and their little-endian wire bytes written out by hand.
import type { DataType } from '../../../src/core/datatype.ts';
import type { TensorData } from '../../../src/core/tensor.ts';

export interface TensorSample {
  datatype: DataType;
  shape: number[];
  /** Flat JSON values, row-major. */
  json: (number | boolean | string)[];
  /** For INT64/UINT64 beyond 2^53: the JSON text of the values, exact. */
  jsonText?: string;
  data: TensorData;
  /** The binary extension's bytes. */
  bytes: number[];
}

const utf8 = (s: string) => new TextEncoder().encode(s);

export const SAMPLES: TensorSample[] = [
  { datatype: 'BOOL', shape: [2, 2], json: [true, false, false, true], data: new Uint8Array([1, 0, 0, 1]), bytes: [1, 0, 0, 1] },
  { datatype: 'UINT8', shape: [2, 2], json: [0, 1, 128, 255], data: new Uint8Array([0, 1, 128, 255]), bytes: [0, 1, 128, 255] },
  { datatype: 'INT8', shape: [2, 2], json: [-128, -1, 0, 127], data: new Int8Array([-128, -1, 0, 127]), bytes: [0x80, 0xff, 0, 0x7f] },
  { datatype: 'UINT16', shape: [2, 1], json: [258, 65535], data: new Uint16Array([258, 65535]), bytes: [2, 1, 0xff, 0xff] },
  { datatype: 'INT16', shape: [2], json: [-32768, 513], data: new Int16Array([-32768, 513]), bytes: [0, 0x80, 1, 2] },
  { datatype: 'UINT32', shape: [2], json: [4294967295, 16909060], data: new Uint32Array([4294967295, 16909060]), bytes: [0xff, 0xff, 0xff, 0xff, 4, 3, 2, 1] },
  { datatype: 'INT32', shape: [2], json: [1, -2], data: new Int32Array([1, -2]), bytes: [1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff] },
  {
    datatype: 'INT64',
    shape: [2, 2],
    json: [],
    jsonText: '[-9223372036854775808, 9007199254740993, -1, 9223372036854775807]',
    data: new BigInt64Array([-9223372036854775808n, 9007199254740993n, -1n, 9223372036854775807n]),
    bytes: [0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0x20, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
  },
  {
    datatype: 'UINT64',
    shape: [2],
    json: [],
    jsonText: '[18446744073709551615, 3]',
    data: new BigUint64Array([18446744073709551615n, 3n]),
    bytes: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 0, 0, 0, 0],
  },
  { datatype: 'FP16', shape: [3], json: [1, -2, 0.5], data: new Uint16Array([0x3c00, 0xc000, 0x3800]), bytes: [0, 0x3c, 0, 0xc0, 0, 0x38] },
  { datatype: 'BF16', shape: [2], json: [1, -3.140625], data: new Uint16Array([0x3f80, 0xc049]), bytes: [0x80, 0x3f, 0x49, 0xc0] },
  { datatype: 'FP32', shape: [1, 2], json: [1.5, -0.25], data: new Float32Array([1.5, -0.25]), bytes: [0, 0, 0xc0, 0x3f, 0, 0, 0x80, 0xbe] },
  { datatype: 'FP64', shape: [1], json: [0.1], data: new Float64Array([0.1]), bytes: [0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f] },
  {
    datatype: 'BYTES',
    shape: [3],
    json: ['hi', '', 'é'],
    data: [utf8('hi'), utf8(''), utf8('é')],
    bytes: [2, 0, 0, 0, 0x68, 0x69, 0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9],
  },
];

/** The sample's JSON data array, as JSON text (exact for 64-bit integers). */
export function jsonDataText(sample: TensorSample): string {
  return sample.jsonText ?? JSON.stringify(sample.json);
}

/** Nests a flat JSON array by `shape` (row-major), as clients that send nested data do. */
export function nest(values: readonly unknown[], shape: readonly number[]): unknown[] {
  if (shape.length <= 1) return [...values];
  const [, ...rest] = shape;
  const stride = rest.reduce((a, b) => a * b, 1);
  const out: unknown[] = [];
  for (let i = 0; i < shape[0]; i++) out.push(nest(values.slice(i * stride, (i + 1) * stride), rest));
  return out;
}
