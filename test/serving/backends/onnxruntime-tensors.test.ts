// Tensor conversion (zero-copy, every datatype through a real identity model), reshape rules and
// session options of the onnxruntime backend.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HerdError } from '../../../src/core/errors.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import { convertTensorToOrt } from '../../../src/serving/backends/onnxruntime/convert-ort-tensor.ts';
import { onnxRuntimeBackend } from '../../../src/serving/backends/onnxruntime/onnxruntime-backend.ts';
import { convertShapeForReshape } from '../../../src/serving/backends/onnxruntime/reshape.ts';
import { createSessionOptions } from '../../../src/serving/backends/onnxruntime/session-options.ts';
import type { ConfigDataType } from '../../../src/serving/model-config/model-config.ts';
import { createNode, createValueInfo, encodeOnnxModel } from '../../../scripts/onnx/onnx-model-writer.ts';
import { OnnxDataType, type OnnxDataTypeCode } from '../../../scripts/onnx/onnx-schema.ts';
import { configInput, configOutput, createLoadContext, createRequest, createTestConfig } from './onnxruntime-fixtures.ts';

const utf8 = new TextEncoder();

describe('convertTensorToOrt', () => {
  it('hands ORT the same typed array (no copy), including a view at an offset', () => {
    const backing = new Int32Array(20);
    const view = new Int32Array(backing.buffer, 8, 16);
    const ortTensor = convertTensorToOrt({ name: 'X', datatype: 'INT32', shape: [1, 16], data: view }, [1, 16]);
    assert.equal(ortTensor.data, view);
    assert.equal(ortTensor.type, 'int32');
  });

  it('maps BOOL, FP16 and INT64 to bool, float16 and int64 without copying', () => {
    const bools = Uint8Array.from([1, 0]);
    const halves = Uint16Array.from([0x3c00, 0xc000]);
    const longs = BigInt64Array.from([1n, -2n]);
    assert.equal(convertTensorToOrt({ name: 'b', datatype: 'BOOL', shape: [2], data: bools }, [2]).type, 'bool');
    const f16 = convertTensorToOrt({ name: 'h', datatype: 'FP16', shape: [2], data: halves }, [2]);
    assert.equal(f16.type, 'float16');
    assert.equal(f16.data, halves);
    assert.equal(convertTensorToOrt({ name: 'l', datatype: 'INT64', shape: [2], data: longs }, [2]).data, longs);
  });

  it('rejects BF16, wrong array kinds, wrong element counts and invalid UTF-8', () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        assert.ok(e instanceof HerdError);
        return e.code;
      }
      return assert.fail('expected an error');
    };
    assert.equal(
      code(() => convertTensorToOrt({ name: 'x', datatype: 'BF16', shape: [1], data: new Uint16Array(1) }, [1])),
      'UNSUPPORTED',
    );
    assert.equal(
      code(() => convertTensorToOrt({ name: 'x', datatype: 'FP32', shape: [1], data: new Float64Array(1) }, [1])),
      'INTERNAL',
    );
    assert.equal(
      code(() => convertTensorToOrt({ name: 'x', datatype: 'FP32', shape: [2], data: new Float32Array(3) }, [2])),
      'INVALID_ARG',
    );
    assert.equal(
      code(() => convertTensorToOrt({ name: 'x', datatype: 'BYTES', shape: [1], data: [Uint8Array.from([0xff, 0xfe])] }, [1])),
      'INVALID_ARG',
    );
  });
});

describe('convertShapeForReshape', () => {
  it('moves variable dims in order and passes the batch dim through', () => {
    assert.deepEqual(convertShapeForReshape('t', [5, 3, 7], { from: [3, -1], to: [-1, 3], hasBatchDim: true }), [5, 7, 3]);
    assert.deepEqual(convertShapeForReshape('t', [4, 4], { from: [4, 4], to: [16], hasBatchDim: false }), [16]);
    assert.deepEqual(convertShapeForReshape('t', [2, 1], { from: [1], to: [], hasBatchDim: true }), [2]);
    assert.deepEqual(convertShapeForReshape('t', [2, 6], { from: [6], to: [2, -1], hasBatchDim: true }), [2, 2, 3]);
  });

  it('refuses a reshape that changes the element count', () => {
    assert.throws(() => convertShapeForReshape('t', [1, 5], { from: [-1], to: [2, 2], hasBatchDim: true }), /cannot reshape tensor 't'/);
  });
});

describe('createSessionOptions', () => {
  const config = (parameters: Record<string, string>, level?: number) =>
    createTestConfig({
      name: 'm',
      parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, { string_value: v }])),
      ...(level === undefined ? {} : { optimization: { graph: { level }, priority: 'PRIORITY_DEFAULT', gather_kernel_buffer_threshold: 0, eager_batching: false } }),
    });

  it('defaults to one intra-op thread, no spinning, all optimisations', () => {
    const options = createSessionOptions(config({}));
    assert.equal(options.intraOpNumThreads, 1);
    assert.equal(options.interOpNumThreads, undefined);
    assert.equal(options.graphOptimizationLevel, 'all');
    assert.deepEqual(options.extra, { 'session.intra_op.allow_spinning': '0', 'session.inter_op.allow_spinning': '0' });
  });

  it("reads Triton's parameter keys and passes session.* entries through", () => {
    const options = createSessionOptions(
      config(
        {
          intra_op_thread_count: '2',
          inter_op_thread_count: '3',
          execution_mode: '1',
          enable_mem_arena: 'false',
          enable_mem_pattern: '1',
          'session.intra_op.allow_spinning': '1',
          'session.use_device_allocator_for_initializers': '1',
          unrelated: 'x',
        },
        2,
      ),
    );
    assert.equal(options.intraOpNumThreads, 2);
    assert.equal(options.interOpNumThreads, 3);
    assert.equal(options.executionMode, 'parallel');
    assert.equal(options.enableCpuMemArena, false);
    assert.equal(options.enableMemPattern, true);
    assert.equal(options.graphOptimizationLevel, 'disabled');
    assert.deepEqual(options.extra, {
      'session.intra_op.allow_spinning': '1',
      'session.inter_op.allow_spinning': '0',
      'session.use_device_allocator_for_initializers': '1',
    });
  });

  it('maps graph levels -1/1 and leaves intra-op threads to ORT for 0', () => {
    assert.equal(createSessionOptions(config({}, -1)).graphOptimizationLevel, 'basic');
    assert.equal(createSessionOptions(config({}, 1)).graphOptimizationLevel, 'extended');
    assert.equal(createSessionOptions(config({ intra_op_thread_count: '0' })).intraOpNumThreads, undefined);
  });

  it('rejects malformed values, naming the parameter', () => {
    assert.throws(() => createSessionOptions(config({ inter_op_thread_count: '-1' })), /'inter_op_thread_count' must be a non-negative integer, got '-1'/);
    assert.throws(() => createSessionOptions(config({ execution_mode: '2' })), /'execution_mode' must be 0 \(sequential\) or 1 \(parallel\)/);
    assert.throws(() => createSessionOptions(config({ enable_mem_arena: 'maybe' })), /'enable_mem_arena' must be true or false/);
  });
});

describe('every datatype through a real identity model', () => {
  // One Identity node per datatype, batch dim symbolic, written with the example-model writer.
  const cases: { name: string; onnx: OnnxDataTypeCode; config: ConfigDataType; tensor: (n: string) => Tensor }[] = [
    { name: 'BOOL', onnx: OnnxDataType.BOOL, config: 'TYPE_BOOL', tensor: (n) => ({ name: n, datatype: 'BOOL', shape: [1, 3], data: Uint8Array.from([1, 0, 1]) }) },
    {
      name: 'FP16',
      onnx: OnnxDataType.FLOAT16,
      config: 'TYPE_FP16',
      tensor: (n) => ({ name: n, datatype: 'FP16', shape: [1, 3], data: Uint16Array.from([0x3c00, 0xc000, 0x7bff]) }),
    },
    {
      name: 'INT64',
      onnx: OnnxDataType.INT64,
      config: 'TYPE_INT64',
      tensor: (n) => ({ name: n, datatype: 'INT64', shape: [1, 3], data: BigInt64Array.from([1n, -(2n ** 62n), 3n]) }),
    },
    { name: 'UINT8', onnx: OnnxDataType.UINT8, config: 'TYPE_UINT8', tensor: (n) => ({ name: n, datatype: 'UINT8', shape: [1, 3], data: Uint8Array.from([0, 128, 255]) }) },
    { name: 'FP64', onnx: OnnxDataType.DOUBLE, config: 'TYPE_FP64', tensor: (n) => ({ name: n, datatype: 'FP64', shape: [1, 3], data: Float64Array.from([Math.PI, -0, 1e300]) }) },
    {
      name: 'STRING',
      onnx: OnnxDataType.STRING,
      config: 'TYPE_STRING',
      tensor: (n) => ({ name: n, datatype: 'BYTES', shape: [1, 3], data: ['', 'héllo', '日本'].map((s) => utf8.encode(s)) }),
    },
  ];
  let modelPath = '';
  before(async () => {
    modelPath = await mkdtemp(join(tmpdir(), 'herd-ort-identity-'));
    const bytes = encodeOnnxModel({
      graph: {
        name: 'identity_all',
        nodes: cases.map((c) => createNode('Identity', [`IN_${c.name}`], [`OUT_${c.name}`])),
        initializers: [],
        inputs: cases.map((c) => createValueInfo(`IN_${c.name}`, c.onnx, ['batch', 3])),
        outputs: cases.map((c) => createValueInfo(`OUT_${c.name}`, c.onnx, ['batch', 3])),
      },
    });
    await mkdir(join(modelPath, '1'), { recursive: true });
    await writeFile(join(modelPath, '1', 'model.onnx'), bytes);
  });
  after(async () => {
    await rm(modelPath, { recursive: true, force: true });
  });

  it('round-trips values and datatypes exactly', async () => {
    const config = createTestConfig({
      name: 'identity_all',
      max_batch_size: 2,
      input: cases.map((c) => configInput(`IN_${c.name}`, c.config, [3])),
      output: cases.map((c) => configOutput(`OUT_${c.name}`, c.config, [3])),
    });
    const backend = await onnxRuntimeBackend.load(createLoadContext(config, modelPath));
    try {
      const inputs = cases.map((c) => c.tensor(`IN_${c.name}`));
      const [result] = await backend.execute([createRequest('identity_all', inputs)]);
      if (!result.ok) assert.fail(result.error.message);
      for (const [i, c] of cases.entries()) {
        const out: Tensor = result.outputs[i];
        assert.equal(out.name, `OUT_${c.name}`);
        assert.equal(out.datatype, inputs[i].datatype);
        assert.deepEqual(out.shape, [1, 3]);
        assert.deepEqual(out.data, inputs[i].data, c.name);
      }
    } finally {
      await backend.unload();
    }
  });
});
