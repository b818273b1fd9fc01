import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { createRawInputSpec, parseInferenceHeaderLength, parseInferRequestBody, parseRawInferRequest } from '../../../src/core/codecs/kserve-infer-request.ts';
import { convertTensorDataToBinary } from '../../../src/core/codecs/kserve-binary-tensor.ts';
import { jsonDataText, nest, SAMPLES } from './tensor-samples.ts';

const invalid = (pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && pattern.test(err.message);
// Triton's shared-memory manager answers an unknown region NOT_FOUND (server shared_memory_manager.cc GetMemoryInfo).
const notFound = (pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === 'NOT_FOUND' && pattern.test(err.message);

/** A body of JSON text followed by binary sections, and the header length to send with it. */
function body(json: string | object, sections: (Uint8Array | number[])[] = []): { body: Buffer; length: string } {
  const head = Buffer.from(typeof json === 'string' ? json : JSON.stringify(json));
  return { body: Buffer.concat([head, ...sections.map((s) => Uint8Array.from(s))]), length: String(head.length) };
}

const jsonOnly = (json: string | object) => parseInferRequestBody(body(json).body);
const withHeader = (json: string | object, sections: (Uint8Array | number[])[] = []) => {
  const b = body(json, sections);
  return parseInferRequestBody(b.body, b.length, { modelName: 'simple' });
};

for (const sample of SAMPLES) {
  test(`${sample.datatype}: JSON (flat and nested) and binary requests give identical tensors`, () => {
    const { datatype, shape } = sample;
    const flat = `{"inputs":[{"name":"X","datatype":"${datatype}","shape":${JSON.stringify(shape)},"data":${jsonDataText(sample)}}]}`;
    const fromJson = jsonOnly(flat).inputs[0];
    assert.deepEqual(fromJson, { name: 'X', datatype, shape, data: sample.data });
    if (sample.jsonText === undefined) {
      const nested = jsonOnly({ inputs: [{ name: 'X', datatype, shape, data: nest(sample.json, shape) }] }).inputs[0];
      assert.deepEqual(nested, fromJson);
    }
    const header = { inputs: [{ name: 'X', datatype, shape, parameters: { binary_data_size: sample.bytes.length } }] };
    const fromBinary = withHeader(header, [sample.bytes]).inputs[0];
    assert.deepEqual(fromBinary, fromJson);
    // And what we encode is what we decode.
    const again = withHeader(header, [convertTensorDataToBinary(fromJson)]).inputs[0];
    assert.deepEqual(again, fromJson);
  });
}

test('a full request: id, parameters, mixed JSON and binary inputs in order, outputs', () => {
  const decoded = withHeader(
    {
      id: 'req-7',
      parameters: { binary_data_output: true, priority: 2, sequence_id: 'abc', custom: 1.5 },
      inputs: [
        { name: 'A', datatype: 'INT32', shape: [1, 2], parameters: { binary_data_size: 8 } },
        { name: 'B', datatype: 'FP32', shape: [2], data: [0.5, 1] },
        { name: 'C', datatype: 'UINT8', shape: [3], parameters: { binary_data_size: 3 } },
      ],
      outputs: [{ name: 'O1', parameters: { binary_data: false } }, { name: 'O2', parameters: { classification: 3 } }, { name: 'O3' }],
    },
    [
      [1, 0, 0, 0, 2, 0, 0, 0],
      [7, 8, 9],
    ],
  );
  assert.equal(decoded.id, 'req-7');
  assert.deepEqual(decoded.parameters, { binary_data_output: true, priority: 2, sequence_id: 'abc', custom: 1.5 });
  assert.equal(decoded.binaryDataOutput, true);
  assert.equal(decoded.raw, false);
  assert.deepEqual(
    decoded.inputs.map((t) => [t.name, Array.from(t.data as ArrayLike<number>)]),
    [
      ['A', [1, 2]],
      ['B', [0.5, 1]],
      ['C', [7, 8, 9]],
    ],
  );
  assert.deepEqual(decoded.outputs, [
    { name: 'O1', parameters: { binary_data: false }, binaryData: false },
    { name: 'O2', parameters: { classification: 3 }, classification: 3 },
    { name: 'O3', parameters: {} },
  ]);
});

test('defaults: no id, no parameters, no outputs; the header may equal the body length', () => {
  const json = { inputs: [{ name: 'X', datatype: 'BOOL', shape: [1], data: [true] }] };
  const decoded = jsonOnly(json);
  assert.equal(decoded.id, '');
  assert.deepEqual(decoded.parameters, {});
  assert.deepEqual(decoded.outputs, []);
  assert.equal(decoded.binaryDataOutput, false);
  assert.deepEqual(withHeader(json), decoded);
  assert.deepEqual(parseInferRequestBody(body(json).body, Number(body(json).length)), decoded);
});

test('binary FP32 input aligned in the body is a view, not a copy', () => {
  const head = JSON.stringify({ inputs: [{ name: 'X', datatype: 'FP32', shape: [2], parameters: { binary_data_size: 8 } }] });
  const padded = head + ' '.repeat((4 - (head.length % 4)) % 4); // whitespace is valid JSON padding
  const b = body(padded, [new Uint8Array(new Float32Array([3, 4]).buffer)]);
  const data = parseInferRequestBody(b.body, b.length).inputs[0].data as Float32Array;
  assert.equal(data.buffer, b.body.buffer);
  assert.deepEqual(data, new Float32Array([3, 4]));
});

test('lying Inference-Header-Content-Length values', () => {
  const b = body({ inputs: [] });
  assert.throws(() => parseInferRequestBody(b.body, 'abc'), invalid(/^Unable to parse Inference-Header-Content-Length, got: abc$/));
  assert.throws(() => parseInferRequestBody(b.body, '12abc'), invalid(/Unable to parse/));
  assert.throws(() => parseInferRequestBody(b.body, ''), invalid(/Unable to parse/));
  assert.throws(() => parseInferRequestBody(b.body, '-1'), invalid(/inference header size should be in range \(0, 13\), got: -1/));
  assert.throws(() => parseInferRequestBody(b.body, '14'), invalid(/inference header size should be in range \(0, 13\), got: 14/));
  assert.throws(() => parseInferRequestBody(b.body, ['13', '13']), invalid(/must be sent once/));
  assert.throws(() => parseInferRequestBody(b.body, '5'), invalid(/failed to parse the request JSON buffer/));
  assert.equal(parseInferenceHeaderLength(undefined, 10), undefined);
  assert.equal(parseInferenceHeaderLength(' 7 ', 10), 7);
});

test('binary_data_size must add up to the bytes after the JSON', () => {
  const header = { inputs: [{ name: 'X', datatype: 'INT32', shape: [2], parameters: { binary_data_size: 8 } }] };
  assert.throws(
    () => withHeader(header, [[1, 0, 0, 0]]),
    invalid(/^unexpected size for input 'X', expecting 4 additional bytes for model 'simple' \('binary_data_size' is 8 but only 4/),
  );
  assert.throws(() => withHeader(header, [[1, 0, 0, 0, 2, 0, 0, 0, 9]]), invalid(/^unexpected additional input data for model 'simple': 1 bytes follow/));
  assert.throws(() => withHeader({ inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [1] }] }, [[0]]), invalid(/unexpected additional input data/));
  // A size that disagrees with the shape is caught by the tensor codec.
  assert.throws(
    () => withHeader({ inputs: [{ name: 'X', datatype: 'INT32', shape: [3], parameters: { binary_data_size: 8 } }] }, [[1, 0, 0, 0, 2, 0, 0, 0]]),
    invalid(/input byte size mismatch for input 'X' for model 'simple'\. Expected 12, got 8/),
  );
  assert.throws(() => jsonOnly(header), invalid(/has 'binary_data_size' 8 but the request has no Inference-Header-Content-Length header/));
  for (const bad of [-1, 1.5, '8', null]) {
    assert.throws(
      () => withHeader({ inputs: [{ name: 'X', datatype: 'INT32', shape: [2], parameters: { binary_data_size: bad } }] }),
      invalid(/Unable to parse 'binary_data_size' of input 'X'/),
      String(bad),
    );
  }
  // binary_data_size 0 is fine for an empty tensor.
  assert.deepEqual(withHeader({ inputs: [{ name: 'X', datatype: 'FP32', shape: [0], parameters: { binary_data_size: 0 } }] }).inputs[0].data, new Float32Array(0));
});

test('an input sets exactly one of data and binary_data_size', () => {
  assert.throws(
    () => withHeader({ inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [1], parameters: { binary_data_size: 4 } }] }, [[1, 0, 0, 0]]),
    invalid(
      /^Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'\. But set 'data' 'binary_data_size' for input 'X'$/,
    ),
  );
  assert.throws(() => jsonOnly({ inputs: [{ name: 'X', datatype: 'INT32', shape: [1] }] }), invalid(/But no field is set for input 'X'/));
  assert.throws(
    () => jsonOnly({ inputs: [{ name: 'X', datatype: 'INT32', shape: [1], parameters: { shared_memory_region: 'r' } }] }),
    notFound(/Unable to find shared memory region: 'r'/),
  );
});

test('malformed inputs: datatype, shape, name, duplicates, element counts, value types', () => {
  const input = (over: object) => ({ inputs: [{ name: 'X', datatype: 'FP32', shape: [2], data: [1, 2], ...over }] });
  assert.throws(() => jsonOnly(input({ datatype: 'FLOAT32' })), invalid(/^invalid datatype 'FLOAT32' for input 'X'; expected one of BOOL, /));
  assert.throws(() => jsonOnly(input({ datatype: 5 })), invalid(/Unable to parse 'datatype' of input 'X': expected a string, got a number/));
  assert.throws(() => jsonOnly(input({ shape: [-1, 2] })), invalid(/Unable to parse 'shape' of input 'X': dims must be non-negative integers, got \[-1,2\]/));
  assert.throws(() => jsonOnly(input({ shape: [2.5] })), invalid(/dims must be non-negative integers/));
  assert.throws(() => jsonOnly(input({ shape: '2' })), invalid(/Unable to parse 'shape' of input 'X': expected an array, got a string/));
  assert.throws(() => jsonOnly(input({ shape: [2 ** 30, 2 ** 30, 2 ** 30] })), invalid(/causes total element count to exceed maximum size/));
  assert.throws(() => jsonOnly(input({ name: '' })), invalid(/Unable to parse 'name' of inputs\[0\]/));
  assert.throws(() => jsonOnly(input({ shape: [3] })), invalid(/Unable to parse 'data' for input 'X': shape \[3\] has 3 element\(s\) but 'data' has 2/));
  assert.throws(() => jsonOnly(input({ data: [1, 'x'] })), invalid(/element 1 is "x", expected a number for datatype FP32/));
  assert.throws(() => jsonOnly(input({ parameters: [] })), invalid(/Unable to parse 'parameters' of input 'X'/));
  const twice = {
    inputs: [
      { name: 'X', datatype: 'FP32', shape: [1], data: [1] },
      { name: 'X', datatype: 'FP32', shape: [1], data: [1] },
    ],
  };
  assert.throws(() => jsonOnly(twice), invalid(/^input 'X' already exists in request$/));
  assert.throws(() => jsonOnly({ inputs: {} }), invalid(/Unable to parse 'inputs': expected an array, got an object/));
  assert.throws(() => jsonOnly({}), invalid(/Unable to parse 'inputs': expected an array, got missing/));
  assert.throws(() => jsonOnly({ inputs: [3] }), invalid(/Unable to parse 'inputs': element 0 is a number, expected an object/));
  assert.throws(() => jsonOnly([]), invalid(/the document root must be an object/));
  assert.throws(() => jsonOnly({ id: 7, inputs: [] }), invalid(/Unable to parse 'id'/));
});

test('bad JSON is INVALID_ARG with rapidjson wording and the byte offset', () => {
  assert.throws(() => jsonOnly('{"inputs": [1,]}'), invalid(/^failed to parse the request JSON buffer: Invalid value\. at 14$/));
  assert.throws(() => jsonOnly('{"inputs": []} x'), invalid(/The document root must not be followed by other values\. at 15$/));
  assert.throws(() => jsonOnly('{"é": 1,, }'), invalid(/Missing a name for object member\. at 9$/)); // é is 2 bytes
  assert.throws(() => jsonOnly('{"inputs" []}'), invalid(/Missing a colon after a name of object member\. at 10$/));
  assert.throws(() => jsonOnly('{"inputs": [1 2]}'), invalid(/Missing a comma or '\]' after an array element\. at 14$/));
  assert.throws(() => jsonOnly('{"id": "abc'), invalid(/Missing a closing quotation mark in string\. at 7$/));
  assert.throws(() => jsonOnly('{"id": "\\q"}'), invalid(/Invalid escape character in string\. at 7$/));
  assert.throws(() => jsonOnly('{"a": 1.}'), invalid(/Miss fraction part in number\. at 8$/));
  assert.throws(() => jsonOnly('{"a": 1e}'), invalid(/Miss exponent in number\. at 8$/));
  assert.throws(() => jsonOnly(''), invalid(/The document is empty\. at 0$/));
  assert.throws(() => jsonOnly('  '), invalid(/The document is empty\. at 2$/));
});

test('NaN and Infinity tokens are accepted, as Triton accepts them', () => {
  const decoded = jsonOnly('{"inputs":[{"name":"X","datatype":"FP64","shape":[4],"data":[NaN,Infinity,-Infinity,-Inf]}]}');
  assert.deepEqual(decoded.inputs[0].data, new Float64Array([NaN, Infinity, -Infinity, -Infinity]));
});

test('INT64 beyond 2^53: exact through JSON, alongside escaped strings and other inputs', () => {
  const decoded = jsonOnly(
    '{"id":"q\\u00e9","parameters":{"k":"a\\nb"},"inputs":[' +
      '{"name":"F","datatype":"FP32","shape":[1],"data":[0.5]},' +
      '{"name":"I","datatype":"INT64","shape":[2],"data":[[9223372036854775807],[-9007199254740993]]},' +
      '{"name":"U","datatype":"UINT64","shape":[1],"data":[18446744073709551615]}]}',
  );
  assert.equal(decoded.id, 'qé');
  assert.deepEqual(decoded.parameters, { k: 'a\nb' });
  assert.deepEqual(decoded.inputs[1].data, new BigInt64Array([9223372036854775807n, -9007199254740993n]));
  assert.deepEqual(decoded.inputs[2].data, new BigUint64Array([18446744073709551615n]));
  // Written with an exponent the value is not an exact integer literal: refused, not guessed.
  assert.throws(
    () => jsonOnly('{"inputs":[{"name":"I","datatype":"INT64","shape":[1],"data":[1e19]}]}'),
    invalid(/element 0 is 10000000000000000000, beyond 2\^53, and was not written as a plain integer literal/),
  );
  assert.throws(
    () => jsonOnly('{"inputs":[{"name":"I","datatype":"INT64","shape":[1],"data":[9223372036854775808]}]}'),
    invalid(/expected an integer in \[-9223372036854775808, 9223372036854775807\]/),
  );
});

test('request parameters: types Triton checks, reserved keys, unsupported values', () => {
  const withParams = (parameters: unknown) => jsonOnly({ parameters, inputs: [] });
  assert.throws(() => withParams({ binary_data_output: 'yes' }), invalid(/^Unable to parse 'binary_data_output'$/));
  assert.throws(() => withParams({ priority: -1 }), invalid(/^Unable to parse 'priority'$/));
  assert.throws(() => withParams({ timeout: 1.5 }), invalid(/^Unable to parse 'timeout'$/));
  assert.throws(() => withParams({ sequence_start: 1 }), invalid(/^Unable to parse 'sequence_start'$/));
  assert.throws(() => withParams({ sequence_id: true }), invalid(/^Unable to parse 'sequence_id'$/));
  assert.throws(() => withParams({ triton_enable_x: true }), invalid(/reserved for Triton usage/));
  assert.throws(() => withParams({ nested: { a: 1 } }), invalid(/^parameter 'nested' has invalid type\. It should be either 'int', 'bool', or 'string'\.$/));
  assert.throws(() => withParams({ n: null }), invalid(/parameter 'n' has invalid type/));
  assert.throws(() => withParams('x'), invalid(/Unable to parse 'parameters' of the request/));
  assert.deepEqual(withParams({ sequence_id: 5, sequence_end: false }).parameters, { sequence_id: 5, sequence_end: false });
});

test('requested outputs: parameters checked, duplicates refused', () => {
  const withOutputs = (outputs: unknown) => jsonOnly({ inputs: [], outputs });
  assert.throws(() => withOutputs({}), invalid(/Unable to parse 'outputs': expected an array/));
  assert.throws(() => withOutputs([{}]), invalid(/Unable to parse 'name' of outputs\[0\]/));
  assert.throws(() => withOutputs([{ name: 'O' }, { name: 'O' }]), invalid(/^output 'O' already exists in request$/));
  assert.throws(() => withOutputs([{ name: 'O', parameters: { binary_data: 1 } }]), invalid(/Unable to parse 'binary_data' of output 'O'/));
  assert.throws(() => withOutputs([{ name: 'O', parameters: { classification: -2 } }]), invalid(/Unable to set 'classification' of output 'O'/));
  assert.throws(() => withOutputs([{ name: 'O', parameters: { shared_memory_region: 'r' } }]), notFound(/shared memory region/));
});

test("raw form: the model's single input, batch 1 when the model batches", () => {
  const config = { name: 'simple', max_batch_size: 8, input: [{ name: 'IN', data_type: 'TYPE_FP32', dims: [2] }] };
  const spec = createRawInputSpec(config);
  assert.deepEqual(spec, { name: 'IN', datatype: 'FP32', shape: [1, 2] });
  const raw = Buffer.from(new Float32Array([1, 2]).buffer);
  const decoded = parseRawInferRequest(raw, spec);
  assert.deepEqual(decoded, {
    id: '',
    parameters: {},
    outputs: [],
    binaryDataOutput: true,
    raw: true,
    inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 2], data: new Float32Array([1, 2]) }],
  });
  assert.deepEqual(parseInferRequestBody(raw, '0', { rawInput: config }), decoded);
  assert.throws(
    () => parseInferRequestBody(raw, '0'),
    (err: unknown) => err instanceof HerdError && err.code === 'INTERNAL',
  );
  assert.throws(
    () => parseRawInferRequest(raw.subarray(0, 6), spec, { modelName: 'simple' }),
    invalid(/input byte size mismatch for input 'IN' for model 'simple'\. Expected 8, got 6/),
  );
});

test('raw form: one variable dim is deduced from the body size; BYTES needs shape [1]', () => {
  const variable = createRawInputSpec({ name: 'm', max_batch_size: 0, input: [{ name: 'IN', data_type: 'TYPE_INT16', dims: [-1, 3] }] });
  assert.deepEqual(variable.shape, [-1, 3]);
  const decoded = parseRawInferRequest(Buffer.from(new Int16Array([1, 2, 3, 4, 5, 6]).buffer), variable);
  assert.deepEqual(decoded.inputs[0].shape, [2, 3]);
  assert.throws(() => parseRawInferRequest(Buffer.alloc(8), variable), invalid(/raw input 'IN' has 8 bytes, which is not a whole number of INT16 rows/));

  const text = createRawInputSpec({ name: 'm', max_batch_size: 4, input: [{ name: 'T', data_type: 'TYPE_STRING', dims: [1] }] });
  const bytes = parseRawInferRequest(Buffer.from('hello'), text).inputs[0];
  assert.deepEqual(bytes.shape, [1, 1]);
  assert.deepEqual(bytes.data, [new Uint8Array(Buffer.from('hello'))]);

  assert.throws(
    () => createRawInputSpec({ name: 'm', max_batch_size: 0, input: [] }),
    invalid(
      /^\[request id: <id_unknown>\] a raw request \(Inference-Header-Content-Length: 0: the whole body is the data of the model's one input\) needs a model with exactly 1 input, but model 'm' has none; send a JSON request instead/,
    ),
  );
  assert.throws(
    () => createRawInputSpec({ name: 'm', max_batch_size: 0, input: [{ name: 'IN', data_type: 'TYPE_FP32', dims: [-1, -1] }] }),
    invalid(/can not be deduced because there are more than one variable-sized dimension/),
  );
  assert.throws(
    () => createRawInputSpec({ name: 'm', max_batch_size: 0, input: [{ name: 'T', data_type: 'TYPE_STRING', dims: [2] }] }),
    invalid(/For BYTE datatype raw input 'T', the model must have input shape \[1\]/),
  );
  assert.throws(() => createRawInputSpec({ name: 'm', max_batch_size: 0, input: [{ name: 'T', data_type: 'TYPE_INVALID', dims: [2] }] }), invalid(/no usable datatype/));
});
