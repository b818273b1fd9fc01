import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { convertTensorDataToJsonText, convertTensorToJsonData, LossyIntegerError, MAX_JSON_DATA_DEPTH, parseJsonTensorData } from '../../../src/core/codecs/kserve-json-tensor.ts';
import { parseLosslessJson } from '../../../src/core/codecs/lossless-json.ts';
import type { DataType } from '../../../src/core/datatype.ts';
import { jsonDataText, nest, SAMPLES } from './tensor-samples.ts';

const invalid = (pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && pattern.test(err.message);

const parse = (data: unknown, datatype: DataType, shape: number[]) => parseJsonTensorData(data, { name: 'X', datatype, shape });

for (const sample of SAMPLES) {
  test(`JSON ${sample.datatype}: flat and nested data decode to the same typed array, and write back`, () => {
    const flat = parseLosslessJson(jsonDataText(sample));
    assert.deepEqual(parse(flat, sample.datatype, sample.shape), sample.data);
    assert.deepEqual(parse(nest(flat as unknown[], sample.shape), sample.datatype, sample.shape), sample.data);
    // Text output is exact (64-bit integers keep every digit) and reads back to the same tensor.
    const text = convertTensorDataToJsonText({ datatype: sample.datatype, data: sample.data });
    assert.deepEqual(parse(parseLosslessJson(text), sample.datatype, sample.shape), sample.data);
    if (sample.jsonText === undefined) {
      assert.deepEqual(JSON.parse(text), sample.json);
      assert.deepEqual(convertTensorToJsonData({ datatype: sample.datatype, data: sample.data }), sample.json);
    }
  });
}

test('INT64 text output keeps digits JSON numbers cannot hold', () => {
  const text = convertTensorDataToJsonText({ datatype: 'INT64', data: new BigInt64Array([9223372036854775807n, -5n]) });
  assert.equal(text, '[9223372036854775807,-5]');
  // The JSON-able helper is lossy beyond 2^53, and says so.
  assert.deepEqual(convertTensorToJsonData({ datatype: 'INT64', data: new BigInt64Array([5n]) }), [5]);
});

test('NaN and infinities are written as the tokens Triton writes', () => {
  const text = convertTensorDataToJsonText({ datatype: 'FP32', data: new Float32Array([NaN, Infinity, -Infinity, 0.1]) });
  assert.equal(text, '[NaN,Infinity,-Infinity,0.10000000149011612]');
  assert.deepEqual(parse(parseLosslessJson(text), 'FP32', [4]), new Float32Array([NaN, Infinity, -Infinity, 0.1]));
});

test('FP16 and BF16 from JSON round to nearest even', () => {
  assert.deepEqual(parse([65519, 1 + 2 ** -11], 'FP16', [2]), new Uint16Array([0x7bff, 0x3c00]));
  assert.deepEqual(parse([1 + 2 ** -8 + 2 ** -9], 'BF16', [1]), new Uint16Array([0x3f81]));
});

test('any nesting is flattened row-major; the leaf count must match the shape', () => {
  assert.deepEqual(
    parse(
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      'INT32',
      [3, 2],
    ),
    new Int32Array([1, 2, 3, 4, 5, 6]),
  );
  assert.deepEqual(
    parse(
      [
        [[1], [2]],
        [[3], [4]],
      ],
      'INT32',
      [4],
    ),
    new Int32Array([1, 2, 3, 4]),
  );
  assert.deepEqual(parse([], 'FP32', [0, 3]), new Float32Array(0));
  assert.deepEqual(parse([7], 'INT32', []), new Int32Array([7])); // a scalar has one element
  assert.throws(() => parse([1, 2, 3], 'INT32', [2, 2]), invalid(/shape \[2,2\] has 4 element\(s\) but 'data' has 3/));
  assert.throws(() => parse([[1, 2], [3]], 'INT32', [2, 2]), invalid(/has 4 element\(s\) but 'data' has 3/));
});

test('nesting deeper than Triton allows is refused', () => {
  let deep: unknown = [1];
  for (let i = 0; i < MAX_JSON_DATA_DEPTH + 5; i++) deep = [deep];
  assert.throws(() => parse(deep, 'INT32', [1]), invalid(/nesting depth exceeds maximum allowed limit \(100\)/));
});

test('wrong JSON value types are refused with the element and the expectation', () => {
  assert.throws(() => parse({ a: 1 }, 'FP32', [1]), invalid(/expected an array, got an object/));
  assert.throws(() => parse('1,2', 'FP32', [1]), invalid(/expected an array, got "1,2"/));
  assert.throws(() => parse([1, 0], 'BOOL', [2]), invalid(/element 0 is 1, expected true or false for datatype BOOL/));
  assert.throws(() => parse(['1'], 'FP32', [1]), invalid(/element 0 is "1", expected a number/));
  assert.throws(() => parse([null], 'FP64', [1]), invalid(/element 0 is null, expected a number/));
  assert.throws(() => parse([1, 2.5], 'INT32', [2]), invalid(/element 1 is 2.5, expected an integer for datatype INT32/));
  assert.throws(() => parse([true], 'UINT8', [1]), invalid(/element 0 is true, expected an integer/));
  assert.throws(() => parse([1, [2]], 'INT32', [2]), invalid(/element 1 is an array/));
  assert.throws(() => parse([5], 'BYTES', [1]), invalid(/element 0 is 5, expected a string for datatype BYTES/));
  assert.throws(() => parse([1.5], 'INT64', [1]), invalid(/expected an integer for datatype INT64/));
});

test('out-of-range integers are errors, never clamped or wrapped', () => {
  const cases: [DataType, number | bigint][] = [
    ['UINT8', 256],
    ['UINT8', -1],
    ['INT8', 128],
    ['INT8', -129],
    ['UINT16', 65536],
    ['INT16', -32769],
    ['UINT32', 4294967296],
    ['INT32', 2147483648],
    ['UINT64', -1],
    ['UINT64', 18446744073709551616n],
    ['INT64', 9223372036854775808n],
    ['INT64', -9223372036854775809n],
    ['INT32', 9223372036854775808n],
  ];
  for (const [datatype, value] of cases) {
    assert.throws(() => parse([value], datatype, [1]), invalid(/expected an integer in \[/), `${datatype} ${value}`);
  }
});

test('an INT64 value JSON.parse rounded raises LossyIntegerError (an INVALID_ARG)', () => {
  const rounded = JSON.parse('[9007199254740993]') as unknown;
  assert.throws(
    () => parse(rounded, 'INT64', [1]),
    (err: unknown) => err instanceof LossyIntegerError && err.code === 'INVALID_ARG' && /beyond 2\^53/.test(err.message),
  );
  // Safe integers need no second look.
  assert.deepEqual(parse([9007199254740991], 'INT64', [1]), new BigInt64Array([9007199254740991n]));
});

test('non-UTF-8 BYTES become replacement characters in JSON text', () => {
  const text = convertTensorDataToJsonText({ datatype: 'BYTES', data: [new Uint8Array([0xff, 0x41])] });
  assert.deepEqual(JSON.parse(text), ['\ufffdA']);
});
