import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import type { DataType } from '../../src/core/datatype.ts';
import { allocateTensorData, elementCount, type Tensor } from '../../src/core/tensor.ts';
import { validateInferRequest, type ValidationModelConfig } from '../../src/serving/validate-infer-request.ts';
import type { ConfigDataType } from '../../src/serving/model-config/model-config.ts';

type InputOverrides = Partial<ValidationModelConfig['input'][number]>;

function input(name: string, data_type: ConfigDataType, dims: number[], over: InputOverrides = {}): ValidationModelConfig['input'][number] {
  return { name, data_type, dims, optional: false, is_shape_tensor: false, ...over };
}

/** Triton's `simple` example model: two INT32 [16] inputs, two outputs, max_batch_size 8. */
const simple: ValidationModelConfig = {
  name: 'simple',
  max_batch_size: 8,
  input: [input('INPUT0', 'TYPE_INT32', [16]), input('INPUT1', 'TYPE_INT32', [16])],
  output: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1' }],
};

function tensor(name: string, datatype: DataType, shape: number[], count = elementCount(shape)): Tensor {
  return { name, datatype, shape, data: allocateTensorData(datatype, count) };
}

const invalid = (message: string | RegExp) => (err: unknown) =>
  err instanceof HerdError && err.code === 'INVALID_ARG' && (typeof message === 'string' ? err.message === message : message.test(err.message));

const both = (batch = 1) => [tensor('INPUT0', 'INT32', [batch, 16]), tensor('INPUT1', 'INT32', [batch, 16])];

test('a valid request passes, shapes unchanged, batch size reported', () => {
  const inputs = both(8);
  const result = validateInferRequest(simple, { id: '', inputs, outputs: ['OUTPUT1'] });
  assert.equal(result.batchSize, 8);
  assert.deepEqual(
    result.inputs.map((t) => t.shape),
    [
      [8, 16],
      [8, 16],
    ],
  );
  assert.equal(result.inputs[0].data, inputs[0].data); // shared, not copied
});

test("unknown outputs and inputs, in Triton's words", () => {
  assert.throws(() => validateInferRequest(simple, { id: '', inputs: both(), outputs: ['X'] }), invalid("unexpected inference output 'X' for model 'simple'"));
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [both()[0], tensor('X', 'INT32', [1, 16])], outputs: [] }),
    invalid("unexpected inference input 'X' for model 'simple'"),
  );
});

test('input count: missing and surplus inputs', () => {
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [both()[0]], outputs: [] }),
    invalid(
      "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'simple'. Got input(s) ['INPUT0'], " +
        "but missing required input(s) ['INPUT1']. Please provide all required input(s).",
    ),
  );
  assert.throws(
    () => validateInferRequest(simple, { id: 'abc', inputs: [...both(), tensor('X', 'INT32', [1, 16])], outputs: [] }),
    invalid(
      "[request id: abc] expected 2 inputs but got 3 inputs for model 'simple'. Got input(s) ['INPUT0','INPUT1','X'], " +
        'but missing required input(s) []. Please provide all required input(s).',
    ),
  );
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [], outputs: [] }),
    invalid(/expected 2 inputs but got 0 inputs for model 'simple'\. Got input\(s\) \[\], but missing required input\(s\) \['INPUT0','INPUT1'\]/),
  );
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [both()[0], both()[0]], outputs: [] }),
    invalid("[request id: <id_unknown>] input 'INPUT0' already exists in request"),
  );
});

test('optional inputs may be left out; required ones may not', () => {
  const config: ValidationModelConfig = {
    ...simple,
    input: [input('A', 'TYPE_FP32', [2]), input('B', 'TYPE_FP32', [2], { optional: true }), input('C', 'TYPE_FP32', [2], { optional: true })],
  };
  assert.equal(validateInferRequest(config, { id: '', inputs: [tensor('A', 'FP32', [1, 2])], outputs: [] }).batchSize, 1);
  assert.throws(
    () => validateInferRequest(config, { id: '', inputs: [], outputs: [] }),
    invalid(
      "[request id: <id_unknown>] expected number of inputs between 1 and 3 but got 0 inputs for model 'simple'. " +
        "Got input(s) [], but missing required input(s) ['A']. Please provide all required input(s).",
    ),
  );
  // The count alone (1) is in range, but the required input is the one missing.
  assert.throws(
    () => validateInferRequest(config, { id: '', inputs: [tensor('B', 'FP32', [1, 2])], outputs: [] }),
    invalid(/between 1 and 3 but got 1 inputs .* Got input\(s\) \['B'\], but missing required input\(s\) \['A'\]/),
  );
});

test('batch dimension: at most max_batch_size, at least 1, the same for every input, present', () => {
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: both(9), outputs: [] }),
    invalid("[request id: <id_unknown>] inference request batch-size must be <= 8 for 'simple'"),
  );
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: both(0), outputs: [] }),
    invalid("[request id: <id_unknown>] inference request batch-size must be >= 1 for 'simple'"),
  );
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [tensor('INPUT0', 'INT32', [2, 16]), tensor('INPUT1', 'INT32', [3, 16])], outputs: [] }),
    invalid("[request id: <id_unknown>] input 'INPUT1' batch size does not match other inputs for 'simple'"),
  );
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [tensor('INPUT0', 'INT32', []), both()[1]], outputs: [] }),
    invalid("[request id: <id_unknown>] input 'INPUT0' has no shape but model requires batch dimension for 'simple'"),
  );
});

test('datatype mismatch', () => {
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [tensor('INPUT0', 'FP32', [1, 16]), both()[1]], outputs: [] }),
    invalid("[request id: <id_unknown>] inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'"),
  );
  const strings: ValidationModelConfig = { ...simple, max_batch_size: 0, input: [input('S', 'TYPE_STRING', [1])] };
  assert.throws(
    () => validateInferRequest(strings, { id: '', inputs: [tensor('S', 'UINT8', [1])], outputs: [] }),
    invalid(/data-type is 'UINT8', but model 'simple' expects 'BYTES'/),
  );
});

test("shape mismatch: Triton's message, with its batch note when the model batches", () => {
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [tensor('INPUT0', 'INT32', [1, 15]), both()[1]], outputs: [] }),
    invalid(
      "[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,15]. " +
        'NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each ' +
        'input shape. If you want to specify the full shape including the batch dim in your input dims config, try ' +
        'setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.',
    ),
  );
  const unbatched: ValidationModelConfig = { ...simple, max_batch_size: 0 };
  assert.throws(
    () => validateInferRequest(unbatched, { id: '', inputs: [tensor('INPUT0', 'INT32', [1, 16]), tensor('INPUT1', 'INT32', [16])], outputs: [] }),
    invalid("[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'simple'. Expected [16], got [1,16]. "),
  );
  assert.throws(
    () => validateInferRequest(simple, { id: '', inputs: [tensor('INPUT0', 'INT32', [1, -1], 16), both()[1]], outputs: [] }),
    invalid("[request id: <id_unknown>] All input dimensions should be specified for input 'INPUT0' for model 'simple', got [1,-1]"),
  );
});

test('-1 dims accept any size; an unbatched model reports batch size 0', () => {
  const variable: ValidationModelConfig = { ...simple, max_batch_size: 0, input: [input('V', 'TYPE_FP32', [-1, 3])] };
  for (const rows of [0, 1, 7]) {
    const result = validateInferRequest(variable, { id: '', inputs: [tensor('V', 'FP32', [rows, 3])], outputs: [] });
    assert.equal(result.batchSize, 0);
    assert.deepEqual(result.inputs[0].shape, [rows, 3]);
  }
  assert.throws(() => validateInferRequest(variable, { id: '', inputs: [tensor('V', 'FP32', [2, 4])], outputs: [] }), invalid(/Expected \[-1,3\], got \[2,4\]/));
});

test('reshape: the backend sees the reshaped dims, batch dim kept, -1 dims carried over in order', () => {
  const config: ValidationModelConfig = {
    ...simple,
    input: [
      input('R', 'TYPE_FP32', [4], { reshape: { shape: [2, 2] } }),
      input('V', 'TYPE_FP32', [-1, 6], { reshape: { shape: [-1, 2, 3] } }),
      input('S', 'TYPE_FP32', [1], { reshape: { shape: [] } }),
    ],
  };
  const result = validateInferRequest(config, {
    id: '',
    outputs: [],
    inputs: [tensor('R', 'FP32', [3, 4]), tensor('V', 'FP32', [3, 5, 6]), tensor('S', 'FP32', [3, 1])],
  });
  assert.deepEqual(
    result.inputs.map((t) => t.shape),
    [[3, 2, 2], [3, 5, 2, 3], [3]],
  );
  // Shape errors quote the config dims, not the reshape.
  assert.throws(
    () => validateInferRequest(config, { id: '', outputs: [], inputs: [tensor('R', 'FP32', [1, 2, 2]), tensor('V', 'FP32', [1, 1, 6]), tensor('S', 'FP32', [1, 1])] }),
    invalid(/unexpected shape for input 'R' for model 'simple'\. Expected \[-1,4\], got \[1,2,2\]/),
  );
});

test('element counts: numeric byte size and BYTES string elements', () => {
  assert.throws(
    () => validateInferRequest(simple, { id: 'q', inputs: [tensor('INPUT0', 'INT32', [2, 16], 31), both(2)[1]], outputs: [] }),
    invalid("[request id: q] input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 128, got 124"),
  );
  const strings: ValidationModelConfig = { ...simple, input: [input('S', 'TYPE_STRING', [2])] };
  assert.equal(validateInferRequest(strings, { id: '', inputs: [tensor('S', 'BYTES', [3, 2])], outputs: [] }).batchSize, 3);
  assert.throws(
    () => validateInferRequest(strings, { id: '', inputs: [tensor('S', 'BYTES', [1, 2], 3)], outputs: [] }),
    invalid("[request id: <id_unknown>] expected 2 string elements for inference input 'S' for model 'simple', got 3"),
  );
  assert.throws(
    () => validateInferRequest(strings, { id: '', inputs: [{ name: 'S', datatype: 'BYTES', shape: [1, 2], data: new Uint8Array(8) }], outputs: [] }),
    invalid(/expected 2 string elements for inference input 'S' for model 'simple', got 0/),
  );
});

test('shape tensors keep their whole shape and take no part in the batch', () => {
  const config: ValidationModelConfig = {
    ...simple,
    input: [input('DATA', 'TYPE_FP32', [-1]), input('SHAPE', 'TYPE_INT32', [2], { is_shape_tensor: true })],
  };
  const result = validateInferRequest(config, { id: '', outputs: [], inputs: [tensor('DATA', 'FP32', [4, 10]), tensor('SHAPE', 'INT32', [2])] });
  assert.equal(result.batchSize, 4);
  assert.deepEqual(
    result.inputs.map((t) => t.shape),
    [[4, 10], [2]],
  );
});
