import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import { createInferResponseBody, type InferResponseContent } from '../../../src/core/codecs/kserve-infer-response.ts';
import { parseBinaryTensorData } from '../../../src/core/codecs/kserve-binary-tensor.ts';
import { parseJsonTensorData } from '../../../src/core/codecs/kserve-json-tensor.ts';
import { parseLosslessJson } from '../../../src/core/codecs/lossless-json.ts';
import { SAMPLES } from './tensor-samples.ts';

interface ResponseOutput {
  name: string;
  datatype: Tensor['datatype'];
  shape: number[];
  data?: unknown;
  parameters?: { binary_data_size: number };
}
interface ResponseJson {
  id?: string;
  model_name: string;
  model_version: string;
  parameters?: object;
  outputs: ResponseOutput[];
}

/** Reads a response back as a client would: JSON header, then binary sections in output order. */
function readResponse(body: Buffer, headerLength: number | undefined): { json: ResponseJson; tensors: Tensor[] } {
  const jsonLength = headerLength ?? body.length;
  const json = parseLosslessJson(body.toString('utf8', 0, jsonLength)) as unknown as ResponseJson;
  let offset = jsonLength;
  const tensors = json.outputs.map((o): Tensor => {
    const size = o.parameters?.binary_data_size;
    if (size === undefined) return { name: o.name, datatype: o.datatype, shape: o.shape, data: parseJsonTensorData(o.data, { ...o, role: 'output' }) };
    const bytes = body.subarray(offset, offset + size);
    offset += size;
    return { name: o.name, datatype: o.datatype, shape: o.shape, data: parseBinaryTensorData(bytes, o) };
  });
  assert.equal(offset, body.length, 'binary sections fill the rest of the body exactly');
  return { json, tensors };
}

const outputs: Tensor[] = SAMPLES.map((s) => ({ name: `OUT_${s.datatype}`, datatype: s.datatype, shape: s.shape, data: s.data }));
const content: InferResponseContent = { modelName: 'simple', modelVersion: 3, id: 'r1', outputs };

test('all-JSON response: every datatype written and read back identically', () => {
  const r = createInferResponseBody(content, { outputs: [], binaryDataOutput: false });
  assert.equal(r.headerLength, undefined);
  assert.equal(r.contentType, 'application/json');
  const { json, tensors } = readResponse(r.body, undefined);
  assert.equal(json.id, 'r1');
  assert.equal(json.model_name, 'simple');
  assert.equal(json.model_version, '3');
  assert.deepEqual(tensors, outputs);
  assert.ok(
    r.body
      .toString()
      .startsWith('{"id":"r1","model_name":"simple","model_version":"3","outputs":[{"name":"OUT_BOOL","datatype":"BOOL","shape":[2,2],"data":[true,false,false,true]}'),
  );
  assert.match(r.body.toString(), /"data":\[-9223372036854775808,9007199254740993,-1,9223372036854775807\]/);
});

test('all-binary response (binary_data_output): sections in output order, header length = JSON length', () => {
  const r = createInferResponseBody(content, { outputs: [], binaryDataOutput: true });
  assert.equal(r.contentType, 'application/octet-stream');
  assert.equal(r.body.toString('latin1', r.headerLength! - 2, r.headerLength), ']}'); // the JSON ends exactly there
  const { json, tensors } = readResponse(r.body, r.headerLength);
  assert.deepEqual(tensors, outputs);
  assert.deepEqual(json.outputs[0], { name: 'OUT_BOOL', datatype: 'BOOL', shape: [2, 2], parameters: { binary_data_size: 4 } });
  const total = SAMPLES.reduce((n, s) => n + s.bytes.length, 0);
  assert.equal(r.body.length, r.headerLength! + total);
  assert.deepEqual([...r.body.subarray(r.headerLength, r.headerLength! + 4)], SAMPLES[0].bytes);
});

test('per-output binary_data overrides the request default both ways', () => {
  const two: InferResponseContent = {
    modelName: 'm',
    modelVersion: '1',
    id: '',
    outputs: [
      { name: 'A', datatype: 'FP32', shape: [2], data: new Float32Array([1, 2]) },
      { name: 'B', datatype: 'INT32', shape: [1], data: new Int32Array([7]) },
    ],
  };
  const binaryA = createInferResponseBody(two, { outputs: [{ name: 'A', binaryData: true }], binaryDataOutput: false });
  const a = readResponse(binaryA.body, binaryA.headerLength);
  assert.deepEqual(
    a.json.outputs.map((o) => o.parameters ?? o.data),
    [{ binary_data_size: 8 }, [7]],
  );
  assert.equal(a.json.id, undefined); // Triton leaves an empty id out
  const jsonB = createInferResponseBody(two, { outputs: [{ name: 'B', binaryData: false }], binaryDataOutput: true });
  const b = readResponse(jsonB.body, jsonB.headerLength);
  assert.deepEqual(
    b.json.outputs.map((o) => o.parameters ?? o.data),
    [{ binary_data_size: 8 }, [7]],
  );
  const raw = createInferResponseBody(two, { outputs: [], binaryDataOutput: false }, true);
  assert.equal(
    readResponse(raw.body, raw.headerLength).json.outputs.every((o) => o.parameters !== undefined),
    true,
  );
});

test('an empty binary output still gets a header and binary_data_size 0', () => {
  const r = createInferResponseBody(
    { modelName: 'm', modelVersion: 1, id: '', outputs: [{ name: 'E', datatype: 'FP32', shape: [0], data: new Float32Array(0) }] },
    { outputs: [], binaryDataOutput: true },
  );
  assert.equal(r.headerLength, r.body.length);
  assert.deepEqual(readResponse(r.body, r.headerLength).json.outputs[0].parameters, { binary_data_size: 0 });
});

test('response parameters are written; NaN and infinities as bare tokens', () => {
  const r = createInferResponseBody(
    {
      modelName: 'm',
      modelVersion: 1,
      id: 'x',
      parameters: { sequence_id: 4, note: 'ok' },
      outputs: [{ name: 'F', datatype: 'FP64', shape: [2], data: new Float64Array([NaN, -Infinity]) }],
    },
    { outputs: [], binaryDataOutput: false },
  );
  assert.equal(
    r.body.toString(),
    '{"id":"x","model_name":"m","model_version":"1","parameters":{"sequence_id":4,"note":"ok"},"outputs":[{"name":"F","datatype":"FP64","shape":[2],"data":[NaN,-Infinity]}]}',
  );
});

test('an output whose data does not fit its datatype or shape is an INTERNAL error', () => {
  const bad = (tensor: Tensor) => () => createInferResponseBody({ modelName: 'm', modelVersion: 1, id: '', outputs: [tensor] }, { outputs: [], binaryDataOutput: true });
  const internal = (pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === 'INTERNAL' && pattern.test(err.message);
  assert.throws(bad({ name: 'O', datatype: 'FP32', shape: [3], data: new Float32Array(2) }), internal(/Failed to write output 'O' of model 'm': .*shape \[3\]/));
  assert.throws(bad({ name: 'O', datatype: 'FP32', shape: [2], data: new Float64Array(2) }), internal(/holds Float64Array/));
});
