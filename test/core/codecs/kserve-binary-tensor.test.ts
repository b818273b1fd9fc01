import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { computeTensorByteSize, convertTensorDataToBinary, describeTensorDataMismatch, parseBinaryTensorData } from '../../../src/core/codecs/kserve-binary-tensor.ts';
import type { DataType } from '../../../src/core/datatype.ts';
import { SAMPLES } from './tensor-samples.ts';

const invalid = (pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && pattern.test(err.message);

const parse = (bytes: Uint8Array, datatype: DataType, shape: number[], modelName?: string) =>
  parseBinaryTensorData(bytes, { name: 'X', datatype, shape, ...(modelName ? { modelName } : {}) });

/** `bytes` placed at `offset` inside a larger Buffer, as a binary section sits after the JSON header. */
function at(offset: number, bytes: number[]): Buffer {
  const whole = Buffer.alloc(offset + bytes.length + 3, 0xee);
  whole.set(bytes, offset);
  return whole.subarray(offset, offset + bytes.length);
}

for (const sample of SAMPLES) {
  test(`binary ${sample.datatype}: wire bytes decode to the typed array and encode back`, () => {
    for (const offset of [0, 1, 3, 8]) {
      const data = parse(at(offset, sample.bytes), sample.datatype, sample.shape);
      assert.deepEqual(data, sample.data, `offset ${offset}`);
    }
    assert.deepEqual(Array.from(convertTensorDataToBinary({ data: sample.data })), sample.bytes);
    assert.equal(computeTensorByteSize({ data: sample.data }), sample.bytes.length);
    assert.equal(describeTensorDataMismatch({ name: 'X', datatype: sample.datatype, shape: sample.shape, data: sample.data }), undefined);
  });
}

test('aligned numeric data is a view on the body; misaligned data is copied once', () => {
  const body = Buffer.alloc(64);
  new Float32Array(body.buffer, body.byteOffset + 16, 2).set([1.5, 2.5]);
  const aligned = parse(body.subarray(16, 24), 'FP32', [2]) as Float32Array;
  assert.equal(aligned.buffer, body.buffer);
  assert.deepEqual(aligned, new Float32Array([1.5, 2.5]));
  body.copyWithin(17, 16, 24);
  const misaligned = parse(body.subarray(17, 25), 'FP32', [2]) as Float32Array;
  assert.notEqual(misaligned.buffer, body.buffer);
  // The copy may sit in Node's shared allocation slab, always on an 8-byte boundary.
  assert.equal(misaligned.byteOffset % 8, 0);
  assert.equal(Object.getPrototypeOf(misaligned), Float32Array.prototype);
  assert.deepEqual(misaligned, new Float32Array([1.5, 2.5]));
});

test('BYTES elements are views on the body, whatever the offset', () => {
  const section = at(5, [1, 0, 0, 0, 0x7a]);
  const [element] = parse(section, 'BYTES', [1]) as Uint8Array[];
  assert.equal(element.buffer, section.buffer);
  assert.deepEqual(Array.from(element), [0x7a]);
  assert.equal(Object.getPrototypeOf(element), Uint8Array.prototype); // plain, not a Buffer
});

test('BOOL bytes other than 0/1 mean true, normalised in a copy', () => {
  const section = at(0, [0, 2, 255, 1]);
  const data = parse(section, 'BOOL', [4]);
  assert.deepEqual(data, new Uint8Array([0, 1, 1, 1]));
  assert.deepEqual(Array.from(section), [0, 2, 255, 1]); // the body is left alone
});

test('numeric byte size must match the shape', () => {
  assert.throws(() => parse(at(0, [1, 2, 3]), 'FP32', [1]), invalid(/^input byte size mismatch for input 'X'\. Expected 4, got 3$/));
  assert.throws(() => parse(at(0, [0, 0, 0, 0, 0]), 'INT16', [2], 'simple'), invalid(/^input byte size mismatch for input 'X' for model 'simple'\. Expected 4, got 5$/));
  assert.deepEqual(parse(at(0, []), 'FP64', [0, 4]), new Float64Array(0));
});

test('BYTES sections: too few, truncated length, overlong element, trailing bytes', () => {
  assert.throws(() => parse(at(0, [1, 0, 0, 0, 0x61]), 'BYTES', [2], 'm'), invalid(/^expected 2 string elements for inference input 'X' for model 'm', got 1$/));
  assert.throws(() => parse(at(0, [1, 0]), 'BYTES', [1]), invalid(/incomplete string length indicator for inference input 'X', expecting 4 bytes but only 2 bytes available/));
  assert.throws(() => parse(at(0, [9, 0, 0, 0, 0x61]), 'BYTES', [1]), invalid(/string element 0 .* declares 9 bytes but only 1 bytes remain/));
  assert.throws(() => parse(at(0, [0, 0, 0, 0, 0x61]), 'BYTES', [1]), invalid(/has 1 bytes after its 1 string element\(s\)/));
  assert.deepEqual(parse(at(0, []), 'BYTES', [0]), []);
});

test('encoding numeric data never copies on a little-endian host', () => {
  const data = new Float32Array([1, 2, 3]);
  const bytes = convertTensorDataToBinary({ data });
  assert.equal(bytes.buffer, data.buffer);
  assert.equal(bytes.byteLength, 12);
});

test('describeTensorDataMismatch catches wrong array kinds and element counts', () => {
  assert.match(describeTensorDataMismatch({ name: 'Y', datatype: 'FP32', shape: [2], data: new Float64Array(2) }) ?? '', /holds Float64Array \(expected Float32Array\)/);
  assert.match(describeTensorDataMismatch({ name: 'Y', datatype: 'BYTES', shape: [1], data: new Uint8Array(1) }) ?? '', /expected Array/);
  assert.match(describeTensorDataMismatch({ name: 'Y', datatype: 'INT32', shape: [3], data: new Int32Array(2) }) ?? '', /shape \[3\] \(3 elements\) but holds 2/);
  assert.equal(describeTensorDataMismatch({ name: 'Y', datatype: 'UINT8', shape: [2], data: Buffer.from([1, 2]) }), undefined);
});

test('a BYTES shape far beyond the bytes sent is refused, not a RangeError (found by fuzzing)', () => {
  // shape [2^32] once made `new Array(count)` throw "Invalid array length": a 500 instead of a 400.
  for (const shape of [[2 ** 32], [2 ** 53 - 1], [2 ** 31, 4]]) {
    assert.throws(
      () => parseBinaryTensorData(new Uint8Array(0), { name: 'S', datatype: 'BYTES', shape }),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && /expected \d+ string elements/.test(err.message),
    );
  }
});
