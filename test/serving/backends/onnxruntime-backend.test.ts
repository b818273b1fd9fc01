// The onnxruntime backend end to end on real ONNX files: Triton's test repository models and the generated
// example models (numerics, reshape, requested outputs, per-request failures, load errors, unload).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HerdError } from '../../../src/core/errors.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import type { Backend, InferenceResult } from '../../../src/serving/backends/backend.ts';
import { onnxRuntimeBackend } from '../../../src/serving/backends/onnxruntime/onnxruntime-backend.ts';
import type { ModelConfig } from '../../../src/serving/model-config/model-config.ts';
import { computeDenseReference, createMyModelLayers } from '../../../scripts/onnx/example-models.ts';
import { generateExampleModels } from '../../../scripts/generate-example-models.ts';
import { TRITON_REPO, configInput, configOutput, createLoadContext, createRequest, createTestConfig, tritonTestConfigs } from './onnxruntime-fixtures.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function withBackend<T>(config: ModelConfig, modelPath: string, fn: (backend: Backend) => Promise<T>): Promise<T> {
  const backend = await onnxRuntimeBackend.load(createLoadContext(config, modelPath));
  try {
    return await fn(backend);
  } finally {
    await backend.unload();
  }
}

function okOutputs(result: InferenceResult | undefined): Map<string, Tensor> {
  assert.ok(result, 'missing result');
  if (!result.ok) assert.fail(`request failed: ${result.error.code} ${result.error.message}`);
  return new Map(result.outputs.map((t) => [t.name, t]));
}

const int32 = (name: string, shape: number[], values: number[]): Tensor => ({ name, datatype: 'INT32', shape, data: Int32Array.from(values) });
const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));

describe('onnxruntime backend on the Triton test repository', () => {
  const configs = tritonTestConfigs();

  it('simple: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, batch of 2', async () => {
    await withBackend(configs.simple, join(TRITON_REPO, 'simple'), async (backend) => {
      const a = range(32, (i) => i * 3 - 40);
      const b = range(32, (i) => 7 - i);
      const [result] = await backend.execute([createRequest('simple', [int32('INPUT0', [2, 16], a), int32('INPUT1', [2, 16], b)])]);
      const out = okOutputs(result);
      assert.deepEqual(out.get('OUTPUT0')!.shape, [2, 16]);
      assert.equal(out.get('OUTPUT0')!.datatype, 'INT32');
      assert.deepEqual(
        [...(out.get('OUTPUT0')!.data as Int32Array)],
        a.map((x, i) => x + b[i]),
      );
      assert.deepEqual(
        [...(out.get('OUTPUT1')!.data as Int32Array)],
        a.map((x, i) => x - b[i]),
      );
    });
  });

  it('simple_int8: same arithmetic on INT8', async () => {
    await withBackend(configs.simple_int8, join(TRITON_REPO, 'simple_int8'), async (backend) => {
      const a = Int8Array.from(range(16, (i) => i - 8));
      const b = Int8Array.from(range(16, (i) => 2 * i - 10));
      const [result] = await backend.execute([
        createRequest('simple_int8', [
          { name: 'INPUT0', datatype: 'INT8', shape: [1, 16], data: a },
          { name: 'INPUT1', datatype: 'INT8', shape: [1, 16], data: b },
        ]),
      ]);
      const out = okOutputs(result);
      assert.ok(out.get('OUTPUT0')!.data instanceof Int8Array);
      assert.deepEqual(
        [...(out.get('OUTPUT0')!.data as Int8Array)],
        [...a].map((x, i) => x + b[i]),
      );
      assert.deepEqual(
        [...(out.get('OUTPUT1')!.data as Int8Array)],
        [...a].map((x, i) => x - b[i]),
      );
    });
  });

  it('simple_string: numbers as UTF-8 strings in and out', async () => {
    await withBackend(configs.simple_string, join(TRITON_REPO, 'simple_string'), async (backend) => {
      const a = range(16, (i) => i);
      const b = range(16, () => 1);
      const bytes = (xs: number[]) => xs.map((x) => encoder.encode(String(x)));
      const [result] = await backend.execute([
        createRequest('simple_string', [
          { name: 'INPUT0', datatype: 'BYTES', shape: [1, 16], data: bytes(a) },
          { name: 'INPUT1', datatype: 'BYTES', shape: [1, 16], data: bytes(b) },
        ]),
      ]);
      const out = okOutputs(result);
      assert.equal(out.get('OUTPUT0')!.datatype, 'BYTES');
      const text = (t: Tensor) => (t.data as Uint8Array[]).map((x) => decoder.decode(x));
      assert.deepEqual(
        text(out.get('OUTPUT0')!),
        a.map((x, i) => String(x + b[i])),
      );
      assert.deepEqual(
        text(out.get('OUTPUT1')!),
        a.map((x, i) => String(x - b[i])),
      );
    });
  });

  it('simple_sequence: OUTPUT = READY * (INPUT + START), stateless', async () => {
    await withBackend(configs.simple_sequence, join(TRITON_REPO, 'simple_sequence'), async (backend) => {
      const [result] = await backend.execute([
        createRequest('simple_sequence', [int32('INPUT', [4, 1], [10, 20, 30, 40]), int32('START', [4, 1], [1, 0, 0, 1]), int32('READY', [4, 1], [1, 1, 0, 1])]),
      ]);
      assert.deepEqual([...(okOutputs(result).get('OUTPUT')!.data as Int32Array)], [11, 20, 0, 41]);
    });
  });

  it('simple_dyna_sequence: OUTPUT = READY * (INPUT + START + END * CORRID)', async () => {
    await withBackend(configs.simple_dyna_sequence, join(TRITON_REPO, 'simple_dyna_sequence'), async (backend) => {
      const [result] = await backend.execute([
        createRequest('simple_dyna_sequence', [
          int32('INPUT', [3, 1], [5, 6, 7]),
          int32('START', [3, 1], [1, 0, 0]),
          int32('END', [3, 1], [0, 1, 1]),
          int32('READY', [3, 1], [1, 1, 0]),
          { name: 'CORRID', datatype: 'UINT64', shape: [3, 1], data: BigUint64Array.from([100n, 200n, 300n]) },
        ]),
      ]);
      assert.deepEqual([...(okOutputs(result).get('OUTPUT')!.data as Int32Array)], [6, 206, 0]);
    });
  });

  it('auto-complete keeps every complete Triton config as written (backend fields aside)', async () => {
    for (const [name, config] of Object.entries(configs)) {
      const completed = await onnxRuntimeBackend.autoCompleteConfig!(config, join(TRITON_REPO, name), join(TRITON_REPO, name, '1'));
      assert.deepEqual(completed, { ...config, backend: 'onnxruntime' }, name);
    }
  });

  it('returns only the requested outputs, in request order', async () => {
    await withBackend(configs.simple, join(TRITON_REPO, 'simple'), async (backend) => {
      const [result] = await backend.execute([
        createRequest(
          'simple',
          [
            int32(
              'INPUT0',
              [1, 16],
              range(16, (i) => i),
            ),
            int32(
              'INPUT1',
              [1, 16],
              range(16, () => 1),
            ),
          ],
          ['OUTPUT1'],
        ),
      ]);
      assert.ok(result.ok);
      assert.deepEqual(
        result.outputs.map((t) => t.name),
        ['OUTPUT1'],
      );
    });
  });

  it('fails only the bad request of a batch, with a clear error', async () => {
    await withBackend(configs.simple, join(TRITON_REPO, 'simple'), async (backend) => {
      const good = createRequest('simple', [
        int32(
          'INPUT0',
          [1, 16],
          range(16, (i) => i),
        ),
        int32(
          'INPUT1',
          [1, 16],
          range(16, (i) => i),
        ),
      ]);
      const wrongCount = createRequest('simple', [
        int32(
          'INPUT0',
          [1, 16],
          range(8, (i) => i),
        ),
        int32(
          'INPUT1',
          [1, 16],
          range(16, (i) => i),
        ),
      ]);
      const wrongShape = createRequest('simple', [
        int32(
          'INPUT0',
          [1, 8],
          range(8, (i) => i),
        ),
        int32(
          'INPUT1',
          [1, 8],
          range(8, (i) => i),
        ),
      ]);
      const missing = createRequest('simple', [
        int32(
          'INPUT0',
          [1, 16],
          range(16, (i) => i),
        ),
      ]);
      const badOutput = createRequest('simple', good.inputs, ['OUTPUT9']);
      const results = await backend.execute([good, wrongCount, wrongShape, missing, badOutput]);
      assert.equal(results.length, 5);
      assert.ok(results[0].ok);
      const errors = results.slice(1).map((r) => (r.ok ? assert.fail('expected failure') : r.error));
      for (const e of errors) assert.ok(e instanceof HerdError);
      assert.equal(errors[0].code, 'INVALID_ARG');
      assert.match(errors[0].message, /INPUT0.*8 elements.*16/);
      // Caught before the run (it would otherwise fail inside session.run, with everything batched with it).
      assert.equal(errors[1].code, 'INVALID_ARG');
      assert.match(errors[1].message, /unexpected shape for input 'INPUT0' for model 'simple': expected \[-1,16\], got \[1,8\]/);
      assert.equal(errors[2].code, 'INVALID_ARG');
      assert.match(errors[2].message, /INPUT1.*missing/);
      assert.equal(errors[3].code, 'INVALID_ARG');
      assert.match(errors[3].message, /OUTPUT9/);
    });
  });

  it('rejects execute after unload', async () => {
    const backend = await onnxRuntimeBackend.load(createLoadContext(configs.simple, join(TRITON_REPO, 'simple')));
    await backend.unload();
    await backend.unload();
    await assert.rejects(backend.execute([]), (e: unknown) => e instanceof HerdError && e.code === 'UNAVAILABLE');
  });
});

describe('onnxruntime backend load errors', () => {
  const simple = tritonTestConfigs().simple;
  const path = join(TRITON_REPO, 'simple');
  const loadError = async (config: ModelConfig, kind: 'KIND_CPU' | 'KIND_GPU' = 'KIND_CPU') => {
    try {
      const backend = await onnxRuntimeBackend.load(createLoadContext(config, path, kind));
      await backend.unload();
    } catch (err) {
      assert.ok(err instanceof HerdError);
      return err;
    }
    return assert.fail('load should have failed');
  };

  it('names an input the model does not have', async () => {
    const err = await loadError({ ...simple, input: [configInput('INPUT_X', 'TYPE_INT32', [16]), simple.input[1]] });
    assert.equal(err.code, 'INVALID_ARG');
    assert.match(err.message, /configuration input 'INPUT_X' is not an input of the ONNX model; model inputs: INPUT0, INPUT1/);
  });

  it('reports a datatype mismatch', async () => {
    const err = await loadError({ ...simple, output: [configOutput('OUTPUT0', 'TYPE_FP32', [16]), simple.output[1]] });
    assert.match(err.message, /expects datatype TYPE_FP32 for output 'OUTPUT0', the ONNX model has int32/);
  });

  it('reports a dims mismatch', async () => {
    const err = await loadError({ ...simple, input: [configInput('INPUT0', 'TYPE_INT32', [8]), simple.input[1]] });
    assert.match(err.message, /input 'INPUT0': model shape \[16\] \(batch dim excluded\) doesn't match configuration shape \[8\]/);
  });

  it('reports a model input missing from the config', async () => {
    const err = await loadError({ ...simple, input: [simple.input[0]] });
    assert.match(err.message, /needs input 'INPUT1'/);
  });

  it('reports a missing model file and GPU instances', async () => {
    const missing = await loadError({ ...simple, default_model_filename: 'nope.onnx' });
    assert.equal(missing.code, 'NOT_FOUND');
    assert.match(missing.message, /nope\.onnx/);
    const gpu = await loadError(simple, 'KIND_GPU');
    assert.equal(gpu.code, 'UNSUPPORTED');
  });

  it('reports a malformed thread parameter', async () => {
    const err = await loadError({ ...simple, parameters: { intra_op_thread_count: { string_value: 'two' } } });
    assert.match(err.message, /intra_op_thread_count.*'two'/);
  });
});

describe('onnxruntime backend on the generated example models', () => {
  let repo = '';
  before(async () => {
    repo = await mkdtemp(join(tmpdir(), 'herd-ort-backend-'));
    await generateExampleModels({ outDir: repo });
  });
  after(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  const myModel = () =>
    createTestConfig({
      name: 'my_model',
      max_batch_size: 128,
      input: [configInput('INPUT__0', 'TYPE_FP32', [768])],
      output: [configOutput('OUTPUT__0', 'TYPE_FP32', [512])],
      parameters: { intra_op_thread_count: { string_value: '1' } },
    });

  it('my_model matches a JS reference dense layer within 1e-4', async () => {
    await withBackend(myModel(), join(repo, 'my_model'), async (backend) => {
      const batch = 3;
      const x = Float32Array.from({ length: batch * 768 }, (_, i) => Math.sin(i * 0.37) * 2);
      const [result] = await backend.execute([createRequest('my_model', [{ name: 'INPUT__0', datatype: 'FP32', shape: [batch, 768], data: x }])]);
      const y = okOutputs(result).get('OUTPUT__0')!;
      assert.deepEqual(y.shape, [batch, 512]);
      const ref = computeDenseReference(createMyModelLayers(), x, batch);
      let maxDiff = 0;
      (y.data as Float32Array).forEach((v, i) => {
        maxDiff = Math.max(maxDiff, Math.abs(v - ref[i]));
      });
      assert.ok(maxDiff < 1e-4, `max abs diff ${maxDiff}`);
    });
  });

  it('applies reshape both ways: request [B,4,4] -> model [B,16] -> response [B,2,8]', async () => {
    const config = createTestConfig({
      name: 'add_sub',
      max_batch_size: 8,
      input: [configInput('INPUT0', 'TYPE_INT32', [4, 4], { reshape: { shape: [16] } }), configInput('INPUT1', 'TYPE_INT32', [4, 4], { reshape: { shape: [16] } })],
      output: [configOutput('OUTPUT0', 'TYPE_INT32', [2, 8], { reshape: { shape: [16] } }), configOutput('OUTPUT1', 'TYPE_INT32', [2, 8], { reshape: { shape: [16] } })],
    });
    await withBackend(config, join(repo, 'add_sub'), async (backend) => {
      const a = range(32, (i) => i);
      const b = range(32, (i) => 100 * i);
      const [result] = await backend.execute([createRequest('add_sub', [int32('INPUT0', [2, 4, 4], a), int32('INPUT1', [2, 4, 4], b)])]);
      const out = okOutputs(result);
      assert.deepEqual(out.get('OUTPUT0')!.shape, [2, 2, 8]);
      assert.deepEqual(
        [...(out.get('OUTPUT0')!.data as Int32Array)],
        a.map((x, i) => x + b[i]),
      );
      assert.deepEqual(
        [...(out.get('OUTPUT1')!.data as Int32Array)],
        a.map((x, i) => x - b[i]),
      );
    });
  });

  it('auto-completes my_model from the ONNX file alone (no inputs/outputs in the config)', async () => {
    const bare = createTestConfig({ name: 'my_model', platform: '' });
    const completed = await onnxRuntimeBackend.autoCompleteConfig!(bare, join(repo, 'my_model'), join(repo, 'my_model', '1'));
    assert.equal(completed.platform, 'onnxruntime_onnx');
    assert.equal(completed.backend, 'onnxruntime');
    assert.equal(completed.max_batch_size, 4);
    assert.ok(completed.dynamic_batching);
    assert.deepEqual(
      completed.input.map((i) => [i.name, i.data_type, i.dims]),
      [['INPUT__0', 'TYPE_FP32', [768]]],
    );
    assert.deepEqual(
      completed.output.map((o) => [o.name, o.data_type, o.dims]),
      [['OUTPUT__0', 'TYPE_FP32', [512]]],
    );
    await withBackend(completed, join(repo, 'my_model'), async (backend) => {
      const [result] = await backend.execute([createRequest('my_model', [{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: new Float32Array(768) }])]);
      assert.ok(result.ok);
    });
  });
});
