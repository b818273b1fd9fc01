// Level TENSORS' tensor text: numbers as C++'s ostream prints them (checked against printf's %g), BYTES quoted,
// and the bound: whole elements up to the limit, then `truncated`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convertFloatsToHalfBits } from '../../src/core/codecs/fp16.ts';
import type { Tensor } from '../../src/core/tensor.ts';
import { formatFloat, formatTraceTensor, TRACE_TENSOR_DATA_LIMIT } from '../../src/serving/trace-tensor.ts';
import { formatTritonTrace } from '../../src/serving/triton-trace-file.ts';

test('floats as %g with 6 significant digits (the values printf gives)', () => {
  const cases: [number, string][] = [
    [Math.fround(0.1), '0.1'],
    [1e-7, '1e-07'],
    [123456789, '1.23457e+08'],
    [100000, '100000'],
    [1234567, '1.23457e+06'],
    [0.0001, '0.0001'],
    [0.00001234, '1.234e-05'],
    [999999.5, '1e+06'],
    [-2.25, '-2.25'],
    [3, '3'],
    [1e21, '1e+21'],
    [0.3333333333, '0.333333'],
    [Number.NaN, 'nan'],
    [Number.NEGATIVE_INFINITY, '-inf'],
    [-0, '-0'],
  ];
  assert.deepEqual(
    cases.map(([v]) => formatFloat(v)),
    cases.map(([, text]) => text),
  );
});

test('each datatype as tracer.cc writes it; FP16 as values (Triton writes none)', () => {
  const tensor = (datatype: Tensor['datatype'], data: Tensor['data'], shape = [1, data.length]): Tensor => ({ name: 'T', datatype, shape, data });
  const text = (t: Tensor) => formatTraceTensor('TENSOR_QUEUE_INPUT', t).data;
  assert.equal(text(tensor('INT32', Int32Array.from([1, -2, 3]))), '1,-2,3');
  assert.equal(text(tensor('INT64', BigInt64Array.from([9007199254740993n]))), '9007199254740993');
  assert.equal(text(tensor('BOOL', Uint8Array.from([1, 0]))), '1,0');
  assert.equal(text(tensor('FP32', Float32Array.from([0.1, 2.5]))), '0.1,2.5');
  assert.equal(text(tensor('FP16', convertFloatsToHalfBits([0.5, -1]))), '0.5,-1');
  const enc = new TextEncoder();
  const bytes = formatTraceTensor('TENSOR_BACKEND_OUTPUT', tensor('BYTES', [enc.encode('hi'), enc.encode('a "b"')]));
  assert.equal(bytes.data, '"hi","a "b""');
  // In the file the quotes are escaped, as Triton's `\"` are: trace_summary.py's csv reader reads them back.
  const written = JSON.parse(`[${formatTritonTrace([{ id: 1, model_name: 'm', model_version: 1, timestamps: [], tensors: [bytes] }])}]`) as {
    tensor?: { data: string; shape: string; dtype: string };
  }[];
  assert.deepEqual(written[1]?.tensor, { name: 'T', data: '"hi","a "b""', shape: '1,2', dtype: 'BYTES' });
});

test('a large tensor: whole elements up to the limit, marked truncated, shape kept', () => {
  const data = Int32Array.from({ length: 10_000 }, (_, i) => i);
  const traced = formatTraceTensor('TENSOR_QUEUE_INPUT', { name: 'BIG', datatype: 'INT32', shape: [1, 10_000], data });
  assert.ok(traced.data.length <= TRACE_TENSOR_DATA_LIMIT);
  assert.equal(traced.truncated, true);
  assert.deepEqual(traced.shape, [1, 10_000]);
  const elements = traced.data.split(',');
  assert.deepEqual(
    elements.map(Number),
    Array.from({ length: elements.length }, (_, i) => i),
    'cut between elements',
  );
  const small = formatTraceTensor('TENSOR_QUEUE_INPUT', { name: 'S', datatype: 'INT32', shape: [2], data: Int32Array.from([1, 2]) }, 3);
  assert.deepEqual([small.data, small.truncated], ['1,2', undefined], 'exactly at the limit is whole');
  const file = formatTritonTrace([{ id: 3, model_name: 'm', model_version: 1, timestamps: [], tensors: [traced] }]);
  assert.match(file, /"dtype":"INT32","truncated":true\}\}$/);
});
