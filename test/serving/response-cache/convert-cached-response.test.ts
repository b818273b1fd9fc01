// Cache entries round-trip every kind of tensor into fresh arrays, refuse to decode what is broken, and
// keys separate requests that differ in any input byte, datatype, shape, name or requested output.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tensor } from '../../../src/core/tensor.ts';
import { convertCacheEntryToResponse, convertResponseToCacheEntry } from '../../../src/serving/response-cache/convert-cached-response.ts';
import { createInferenceCacheKey } from '../../../src/serving/response-cache/create-inference-cache-key.ts';
import { LocalResponseCache } from '../../../src/serving/response-cache/local-response-cache.ts';

const enc = (s: string) => new TextEncoder().encode(s);

test('round trip: numeric, 64-bit, BYTES tensors and parameters', () => {
  const outputs: Tensor[] = [
    { name: 'F', datatype: 'FP32', shape: [1, 3], data: Float32Array.from([1.5, -2, 3]) },
    { name: 'L', datatype: 'INT64', shape: [2], data: BigInt64Array.from([1n, -(2n ** 40n)]) },
    { name: 'S', datatype: 'BYTES', shape: [2], data: [enc('héllo'), enc('')] },
  ];
  const entry = convertResponseToCacheEntry({ outputs, parameters: { note: 'x' } });
  const back = convertCacheEntryToResponse(entry);
  assert.deepEqual(back, { outputs, parameters: { note: 'x' } });
  assert.notEqual(back.outputs[0]?.data, outputs[0]?.data);
});

test('a truncated or inconsistent entry does not decode', () => {
  const entry = convertResponseToCacheEntry({ outputs: [{ name: 'F', datatype: 'FP32', shape: [4], data: new Float32Array(4) }] });
  assert.throws(() => convertCacheEntryToResponse(entry.subarray(0, entry.length - 1)), /truncated/);
  assert.throws(() => convertCacheEntryToResponse(entry.subarray(0, 6)));
});

test('keys differ in every part of the request Herd hashes, not in input order', () => {
  const input = (name: string, data: Float32Array, shape = [1, data.length]): Tensor => ({ name, datatype: 'FP32', shape, data });
  const base = { modelName: 'm', modelVersion: 1, inputs: [input('A', Float32Array.from([1, 2])), input('B', Float32Array.from([3]))], requestedOutputs: [] };
  const key = createInferenceCacheKey(base);
  assert.equal(createInferenceCacheKey({ ...base, inputs: [...base.inputs].reverse() }), key);
  const variants = [
    { ...base, modelName: 'n' },
    { ...base, modelVersion: 2 },
    { ...base, inputs: [input('A', Float32Array.from([1, 2.5])), base.inputs[1] as Tensor] },
    { ...base, inputs: [input('A', Float32Array.from([1, 2]), [2, 1]), base.inputs[1] as Tensor] },
    { ...base, inputs: [{ ...(base.inputs[0] as Tensor), datatype: 'INT32' as const }, base.inputs[1] as Tensor] },
    { ...base, inputs: [input('C', Float32Array.from([1, 2])), base.inputs[1] as Tensor] },
    { ...base, requestedOutputs: ['OUT'] },
  ];
  for (const v of variants) assert.notEqual(createInferenceCacheKey(v), key);
  // BYTES elements are length-prefixed: ['ab', 'c'] and ['a', 'bc'] are different requests.
  const bytes = (parts: string[]): Tensor => ({ name: 'S', datatype: 'BYTES', shape: [2], data: parts.map(enc) });
  assert.notEqual(createInferenceCacheKey({ ...base, inputs: [bytes(['ab', 'c'])] }), createInferenceCacheKey({ ...base, inputs: [bytes(['a', 'bc'])] }));
});

test('the local cache counts keys and entries against its byte budget', async () => {
  const cache = new LocalResponseCache(100);
  assert.equal(await cache.insert('k1', Buffer.alloc(40)), true);
  assert.equal(await cache.insert('k2', Buffer.alloc(40)), true);
  assert.equal(cache.usedBytes, 84);
  assert.equal(await cache.insert('k3', Buffer.alloc(40)), true);
  assert.equal(await cache.lookup('k1'), undefined, 'least recently used, evicted');
  assert.equal(cache.entryCount, 2);
  assert.equal(await cache.insert('big', Buffer.alloc(100)), false);
});
