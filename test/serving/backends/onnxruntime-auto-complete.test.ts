// Triton's ONNX auto-complete rules as a pure function, plus auto-complete from the real Triton test models
// followed by a load of the completed config (the completed config must pass its own validation).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HerdError } from '../../../src/core/errors.ts';
import { autoCompleteOnnxConfig, needsOnnxSignature } from '../../../src/serving/backends/onnxruntime/onnx-auto-complete.ts';
import type { OnnxIoInfo, OnnxSignature } from '../../../src/serving/backends/onnxruntime/onnx-model-file.ts';
import { onnxRuntimeBackend } from '../../../src/serving/backends/onnxruntime/onnxruntime-backend.ts';
import { validateOnnxConfig } from '../../../src/serving/backends/onnxruntime/validate-onnx-config.ts';
import { listSequenceInputs } from '../../../src/serving/backends/onnxruntime/sequence-inputs.ts';
import type { ConfigDataType, ModelConfig } from '../../../src/serving/model-config/model-config.ts';
import { mapConfigTypeToDataType } from '../../../src/core/datatype.ts';
import { allocateTensorData, elementCount, isBytesData, type Tensor } from '../../../src/core/tensor.ts';
import { TRITON_REPO, configInput, configOutput, createLoadContext, createRequest, createTestConfig, tritonTestConfigs } from './onnxruntime-fixtures.ts';

const io = (name: string, ortType: string, dims: number[]): OnnxIoInfo => ({ name, ortType, dims });
const batchable: OnnxSignature = {
  inputs: [io('A', 'float32', [-1, 3, 4]), io('B', 'int64', [-1])],
  outputs: [io('Y', 'float32', [-1, 2])],
};
const fixed: OnnxSignature = { inputs: [io('A', 'float32', [1, 3])], outputs: [io('Y', 'bool', [])] };

/** Zeros of the config type; string models parse their inputs as numbers, so BYTES gets "0". */
function zeroInput(name: string, configType: ConfigDataType, shape: number[]): Tensor {
  const datatype = mapConfigTypeToDataType(configType)!;
  const data = allocateTensorData(datatype, elementCount(shape));
  return { name, datatype, shape, data: isBytesData(data) ? data.map(() => new TextEncoder().encode('0')) : data };
}

function errorOf(fn: () => unknown): HerdError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof HerdError);
    return err;
  }
  return assert.fail('expected an error');
}

describe('autoCompleteOnnxConfig', () => {
  it('leaves a config that lists inputs and outputs untouched (same object)', () => {
    const config = createTestConfig({ name: 'm', input: [configInput('A', 'TYPE_FP32', [3, 4])], output: [configOutput('Y', 'TYPE_FP32', [2])] });
    assert.equal(needsOnnxSignature(config), false);
    assert.equal(autoCompleteOnnxConfig(config, batchable), config);
  });

  it('batchable model, no max_batch_size: Triton default 4, dynamic_batching {}, batch dim stripped', () => {
    const out = autoCompleteOnnxConfig(createTestConfig({ name: 'm' }), batchable);
    assert.equal(out.max_batch_size, 4);
    assert.deepEqual(out.dynamic_batching, {
      preferred_batch_size: [],
      max_queue_delay_microseconds: 0,
      preserve_ordering: false,
      priority_levels: 0,
      default_priority_level: 0,
      priority_queue_policy: {},
    });
    assert.deepEqual(
      out.input.map((i) => [i.name, i.data_type, i.dims, i.reshape]),
      [
        ['A', 'TYPE_FP32', [3, 4], undefined],
        // [-1] debatched is a scalar: dims [1] with an empty reshape, as Triton writes it.
        ['B', 'TYPE_INT64', [1], { shape: [] }],
      ],
    );
    assert.deepEqual(
      out.output.map((o) => [o.name, o.data_type, o.dims]),
      [['Y', 'TYPE_FP32', [2]]],
    );
  });

  it('keeps a user max_batch_size and existing batching, adds no dynamic_batching for max_batch_size 1', () => {
    assert.equal(autoCompleteOnnxConfig(createTestConfig({ name: 'm', max_batch_size: 16 }), batchable).max_batch_size, 16);
    assert.equal(autoCompleteOnnxConfig(createTestConfig({ name: 'm', max_batch_size: 1 }), batchable).dynamic_batching, undefined);
    assert.equal(autoCompleteOnnxConfig(createTestConfig({ name: 'm' }), batchable, { defaultMaxBatchSize: 0 }).max_batch_size, 0);
    const seq = tritonTestConfigs().simple_sequence;
    const out = autoCompleteOnnxConfig(
      { ...seq, max_batch_size: 0, input: [], output: [] },
      {
        inputs: [io('INPUT', 'int32', [-1, 1]), io('START', 'int32', [-1, 1]), io('READY', 'int32', [-1, 1])],
        outputs: [io('OUTPUT', 'int32', [-1, 1])],
      },
    );
    assert.equal(out.dynamic_batching, undefined, 'sequence_batching models get no dynamic_batching');
    assert.deepEqual(
      out.input.map((i) => i.name),
      ['INPUT'],
      'control inputs are fed by the batcher, not listed',
    );
  });

  it('model without a variable first dim: no batching; full dims; scalars as [1]', () => {
    const out = autoCompleteOnnxConfig(createTestConfig({ name: 'm' }), fixed);
    assert.equal(out.max_batch_size, 0);
    assert.equal(out.dynamic_batching, undefined);
    assert.deepEqual(out.input[0].dims, [1, 3]);
    assert.deepEqual([out.output[0].dims, out.output[0].reshape, out.output[0].data_type], [[1], undefined, 'TYPE_BOOL']);
  });

  it('rejects a non-zero max_batch_size for a model that cannot batch', () => {
    const err = errorOf(() => autoCompleteOnnxConfig(createTestConfig({ name: 'm', max_batch_size: 8 }), fixed));
    assert.equal(err.code, 'INVALID_ARG');
    assert.match(err.message, /autofill failed for model 'm': model does not support batching while non-zero max_batch_size 8/);
  });

  it('fills only the missing side and checks the given names against the model', () => {
    const given = createTestConfig({ name: 'm', input: [configInput('A', 'TYPE_FP32', [3, 4]), configInput('B', 'TYPE_INT64', [1], { reshape: { shape: [] } })] });
    const out = autoCompleteOnnxConfig(given, batchable);
    assert.equal(out.input, given.input);
    assert.deepEqual(
      out.output.map((o) => o.name),
      ['Y'],
    );
    const err = errorOf(() => autoCompleteOnnxConfig(createTestConfig({ name: 'm', input: [configInput('Z', 'TYPE_FP32', [1])] }), batchable));
    assert.match(err.message, /configuration input 'Z' is not an input of the ONNX model; model inputs: A, B/);
  });

  it('reports ONNX types Herd cannot serve', () => {
    const err = errorOf(() => autoCompleteOnnxConfig(createTestConfig({ name: 'm' }), { inputs: [io('S', 'non-tensor', [])], outputs: [io('Y', 'float32', [2])] }));
    assert.equal(err.code, 'UNSUPPORTED');
    assert.match(err.message, /input 'S' has ONNX type 'non-tensor'/);
  });

  it('produces configs that pass load-time validation', () => {
    for (const signature of [batchable, fixed]) {
      validateOnnxConfig(autoCompleteOnnxConfig(createTestConfig({ name: 'm' }), signature), signature);
    }
  });
});

describe('validateOnnxConfig', () => {
  it('accepts a -1 config dim against a fixed model input dim but not for outputs', () => {
    const sig: OnnxSignature = { inputs: [io('A', 'float32', [-1, 3])], outputs: [io('Y', 'float32', [-1, 3])] };
    const base = { name: 'm', max_batch_size: 4 };
    validateOnnxConfig(createTestConfig({ ...base, input: [configInput('A', 'TYPE_FP32', [-1])], output: [configOutput('Y', 'TYPE_FP32', [3])] }), sig);
    const err = errorOf(() => validateOnnxConfig(createTestConfig({ ...base, input: [configInput('A', 'TYPE_FP32', [3])], output: [configOutput('Y', 'TYPE_FP32', [-1])] }), sig));
    assert.match(err.message, /output 'Y'/);
  });

  it('requires a variable batch dim when max_batch_size > 0', () => {
    const err = errorOf(() =>
      validateOnnxConfig(createTestConfig({ name: 'm', max_batch_size: 4, input: [configInput('A', 'TYPE_FP32', [3])], output: [configOutput('Y', 'TYPE_BOOL', [1])] }), fixed),
    );
    assert.match(err.message, /max_batch_size is 4 but the model's first dimension is not a variable batch dimension/);
  });
});

describe('auto-complete on the Triton test models', () => {
  const configs = tritonTestConfigs();
  const cases: [string, (c: ModelConfig) => ModelConfig][] = [
    ['simple', (c) => c],
    ['simple_int8', (c) => c],
    ['simple_string', (c) => c],
    ['simple_sequence', (c) => ({ ...c, sequence_batching: configs.simple_sequence.sequence_batching })],
    ['simple_dyna_sequence', (c) => ({ ...c, sequence_batching: configs.simple_dyna_sequence.sequence_batching })],
  ];
  for (const [name, extend] of cases) {
    it(`${name}: completes a bare config, and the result loads and runs`, async () => {
      const bare = extend(createTestConfig({ name, platform: '' }));
      const modelPath = join(TRITON_REPO, name);
      const completed = await onnxRuntimeBackend.autoCompleteConfig!(bare, modelPath, join(modelPath, '1'));
      assert.equal(completed.max_batch_size, 4);
      assert.equal(completed.dynamic_batching !== undefined, completed.sequence_batching === undefined);
      for (const t of [...completed.input, ...completed.output]) {
        assert.deepEqual(t.dims, name.includes('sequence') ? [1] : [16], `${name} ${t.name}`);
      }
      const backend = await onnxRuntimeBackend.load(createLoadContext(completed, modelPath));
      try {
        const inputs = [
          ...completed.input.map((i) => zeroInput(i.name, i.data_type, [1, ...i.dims])),
          ...listSequenceInputs(completed).map((c) => zeroInput(c.name, c.dataType!, [1, 1])),
        ];
        const [result] = await backend.execute([createRequest(name, inputs)]);
        assert.ok(result.ok, result.ok ? '' : result.error.message);
      } finally {
        await backend.unload();
      }
    });
  }
});
