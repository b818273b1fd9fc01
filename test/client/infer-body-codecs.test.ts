// The client's request encoder and response decoder against the server's own codecs in core: what
// the client writes the server parses back exactly, and what the server writes the client reads back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInferRequestBody } from '../../src/core/codecs/kserve-infer-request.ts';
import { createInferResponseBody } from '../../src/core/codecs/kserve-infer-response.ts';
import { HerdError } from '../../src/core/errors.ts';
import type { Tensor } from '../../src/core/tensor.ts';
import { createInferRequestBody } from '../../src/client/encode-infer-request.ts';
import { parseInferResponseBody } from '../../src/client/parse-infer-response.ts';
import { SAMPLES } from '../core/codecs/tensor-samples.ts';

const tensors: Tensor[] = SAMPLES.map((s) => ({ name: `IN_${s.datatype}`, datatype: s.datatype, shape: s.shape, data: s.data }));

for (const binaryInputs of [true, false]) {
  test(`every datatype survives client encode → server parse (${binaryInputs ? 'binary' : 'JSON'} inputs)`, () => {
    // FP16/BF16 in JSON are numbers the server rounds back to the same bits; Triton refuses them, Herd does not.
    const { body, headerLength, contentType } = createInferRequestBody(tensors, { binaryInputs, id: 'r1', parameters: { priority: 2 } });
    assert.equal(contentType, binaryInputs ? 'application/octet-stream' : 'application/json');
    assert.equal(headerLength === undefined, !binaryInputs);
    const decoded = parseInferRequestBody(body, headerLength);
    assert.equal(decoded.id, 'r1');
    assert.deepEqual(decoded.parameters, { priority: 2, binary_data_output: true });
    assert.deepEqual(
      decoded.inputs.map((t) => [t.name, t.datatype, t.shape]),
      tensors.map((t) => [t.name, t.datatype, t.shape]),
    );
    decoded.inputs.forEach((t, i) => {
      assert.deepEqual(Array.from(t.data as ArrayLike<unknown>), Array.from(tensors[i]?.data as ArrayLike<unknown>), t.name);
    });
  });
}

test('requested outputs carry binary_data and classification; binaryOutputs false sends no binary_data_output', () => {
  const { body, headerLength } = createInferRequestBody([tensors[6] as Tensor], {
    binaryInputs: false,
    binaryOutputs: false,
    outputs: [{ name: 'A', binary: true }, { name: 'B', classCount: 3 }, { name: 'C' }],
  });
  assert.equal(headerLength, undefined);
  const decoded = parseInferRequestBody(body, headerLength);
  assert.equal(decoded.binaryDataOutput, false);
  assert.deepEqual(decoded.parameters, {});
  assert.deepEqual(
    decoded.outputs.map((o) => [o.name, o.binaryData, o.classification]),
    [
      ['A', true, undefined],
      ['B', undefined, 3],
      ['C', undefined, undefined],
    ],
  );
});

test('an input whose data does not fit its shape is refused before sending', () => {
  const bad: Tensor = { name: 'X', datatype: 'INT32', shape: [3], data: new Int32Array(2) };
  assert.throws(
    () => createInferRequestBody([bad]),
    (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && /holds 2/.test(err.message),
  );
});

for (const allBinary of [true, false]) {
  test(`every datatype survives server write → client parse (${allBinary ? 'binary' : 'JSON'} outputs)`, () => {
    const outputs = tensors.map((t) => ({ ...t, name: t.name.replace('IN_', 'OUT_') }));
    const written = createInferResponseBody({ modelName: 'm', modelVersion: 3, id: 'abc', outputs, parameters: { sequence_id: 7 } }, { outputs: [], binaryDataOutput: allBinary });
    const result = parseInferResponseBody(written.body, written.headerLength);
    assert.equal(result.modelName, 'm');
    assert.equal(result.modelVersion, '3');
    assert.equal(result.id, 'abc');
    assert.deepEqual(result.parameters, { sequence_id: 7 });
    result.outputs.forEach((t, i) => {
      const expected = outputs[i] as Tensor;
      assert.deepEqual([t.name, t.datatype, t.shape], [expected.name, expected.datatype, expected.shape]);
      assert.deepEqual(Array.from(t.data as ArrayLike<unknown>), Array.from(expected.data as ArrayLike<unknown>), t.name);
    });
  });
}

test('JSON outputs: INT64 beyond 2^53 stays exact and NaN tokens are read', () => {
  const body = Buffer.from(
    '{"model_name":"m","model_version":"1","outputs":[' +
      '{"name":"I","datatype":"INT64","shape":[2],"data":[9007199254740993,-1]},' +
      '{"name":"F","datatype":"FP32","shape":[2],"data":[NaN,1.5]}]}',
  );
  const result = parseInferResponseBody(body, undefined);
  assert.deepEqual(Array.from(result.outputs[0]?.data as BigInt64Array), [9007199254740993n, -1n]);
  const f = result.outputs[1]?.data as Float32Array;
  assert.ok(Number.isNaN(f[0]));
  assert.equal(f[1], 1.5);
});

test('malformed responses are INTERNAL errors that say what is wrong', () => {
  const check = (body: string, headerLength: number | undefined, pattern: RegExp) =>
    assert.throws(
      () => parseInferResponseBody(Buffer.from(body), headerLength),
      (err: unknown) => err instanceof HerdError && err.code === 'INTERNAL' && pattern.test(err.message),
      pattern.source,
    );
  check('{"outputs":{}}', undefined, /'outputs' is not an array/);
  check('{"outputs":[{"name":"X","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}}]}', undefined, /declares 8 binary bytes but 0 remain/);
  check('{"outputs":[]}xx', 14, /2 bytes follow the last binary output/);
  check('{"outputs":[{"name":"X","datatype":"INT33","shape":[1],"data":[1]}]}', undefined, /unknown datatype "INT33"/);
  check('{}', 10, /outside the 2-byte body/);
});
