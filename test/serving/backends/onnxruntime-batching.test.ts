// Batched execution in the onnxruntime backend: several requests concatenated into one session.run and split
// back (each request must get exactly what it gets alone), the planner's grouping, and execution_thread "main".
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HerdError } from '../../../src/core/errors.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import type { InferenceRequest, InferenceResult } from '../../../src/serving/backends/backend.ts';
import { loadOnnxInstance } from '../../../src/serving/backends/onnxruntime/onnxruntime-backend.ts';
import type { OnnxRuntimeInstance } from '../../../src/serving/backends/onnxruntime/onnx-runtime-instance.ts';
import { collectOnnxBatchResults, planOnnxBatch } from '../../../src/serving/backends/onnxruntime/plan-onnx-batch.ts';
import { createOnnxRequestRules } from '../../../src/serving/backends/onnxruntime/validate-onnx-request.ts';
import type { ModelConfig } from '../../../src/serving/model-config/model-config.ts';
import { generateExampleModels } from '../../../scripts/generate-example-models.ts';
import { TRITON_REPO, configInput, configOutput, createLoadContext, createRequest, createTestConfig, tritonTestConfigs } from './onnxruntime-fixtures.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const int32 = (name: string, shape: number[], f: (i: number) => number): Tensor => ({
  name,
  datatype: 'INT32',
  shape,
  data: Int32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => f(i)),
});

function outputsOf(result: InferenceResult | undefined): Tensor[] {
  assert.ok(result, 'missing result');
  if (!result.ok) assert.fail(`request failed: ${result.error.code} ${result.error.message}`);
  return result.outputs;
}

function errorOf(result: InferenceResult | undefined): HerdError {
  assert.ok(result, 'missing result');
  if (result.ok) assert.fail('expected the request to fail');
  assert.ok(result.error instanceof HerdError);
  return result.error;
}

/** Each request run alone, one execute() each: the reference a batched run must reproduce. */
async function runAlone(backend: OnnxRuntimeInstance, requests: InferenceRequest[]): Promise<Tensor[][]> {
  const alone: Tensor[][] = [];
  for (const r of requests) alone.push(outputsOf((await backend.execute([r]))[0]));
  return alone;
}

function assertSameOutputs(batched: Tensor[], alone: Tensor[], tolerance = 0): void {
  assert.deepEqual(
    batched.map((t) => [t.name, t.datatype, t.shape]),
    alone.map((t) => [t.name, t.datatype, t.shape]),
  );
  batched.forEach((t, i) => {
    const want = alone[i].data;
    if (Array.isArray(t.data)) {
      assert.deepEqual(
        t.data.map((b) => decoder.decode(b)),
        (want as Uint8Array[]).map((b) => decoder.decode(b)),
      );
    } else if (tolerance === 0) {
      assert.deepEqual([...(t.data as Int32Array)], [...(want as Int32Array)]);
    } else {
      const got = t.data as Float32Array;
      const ref = want as Float32Array;
      let diff = 0;
      got.forEach((v, j) => {
        diff = Math.max(diff, Math.abs(v - ref[j]));
      });
      assert.ok(diff <= tolerance, `output '${t.name}' differs by ${diff}`);
    }
  });
}

const addSubConfig = (extra: Partial<ModelConfig> = {}): ModelConfig => ({ ...tritonTestConfigs().simple, name: 'add_sub', ...extra });
const myModelConfig = (extra: Partial<ModelConfig> = {}): ModelConfig =>
  createTestConfig({
    name: 'my_model',
    max_batch_size: 128,
    input: [configInput('INPUT__0', 'TYPE_FP32', [768])],
    output: [configOutput('OUTPUT__0', 'TYPE_FP32', [512])],
    ...extra,
    parameters: { intra_op_thread_count: { string_value: '1' }, ...extra.parameters },
  });
const addSubRequest = (seed: number, batch = 1, outputs: string[] = []) =>
  createRequest('add_sub', [int32('INPUT0', [batch, 16], (i) => seed * 1000 + i * 7), int32('INPUT1', [batch, 16], (i) => (i % 5) - seed * 3)], outputs);
const myModelRequest = (seed: number, batch: number) =>
  createRequest('my_model', [
    {
      name: 'INPUT__0',
      datatype: 'FP32',
      shape: [batch, 768],
      data: Float32Array.from({ length: batch * 768 }, (_, i) => Math.sin(i * 0.013 + seed)),
    },
  ]);

for (const thread of ['worker', 'main'] as const) {
  describe(`onnxruntime batched execution (execution_thread ${thread})`, () => {
    let repo = '';
    const loaded: OnnxRuntimeInstance[] = [];
    const load = async (config: ModelConfig, modelPath: string) => {
      const withThread = { ...config, parameters: { ...config.parameters, execution_thread: { string_value: thread } } };
      const backend = await loadOnnxInstance(createLoadContext(withThread, modelPath));
      loaded.push(backend);
      return backend;
    };
    before(async () => {
      repo = await mkdtemp(join(tmpdir(), 'herd-ort-batching-'));
      await generateExampleModels({ outDir: repo, only: ['add_sub', 'my_model'] });
    });
    after(async () => {
      await Promise.all(loaded.map((b) => b.unload()));
      await rm(repo, { recursive: true, force: true });
    });

    it('add_sub: 1 to 8 requests of batch 1 give exactly what each gives alone', async () => {
      const backend = await load(addSubConfig(), join(repo, 'add_sub'));
      for (let n = 1; n <= 8; n++) {
        const requests = Array.from({ length: n }, (_, i) => addSubRequest(n * 10 + i));
        const batched = await backend.execute(requests);
        const alone = await runAlone(backend, requests);
        assert.equal(batched.length, n);
        batched.forEach((r, i) => {
          assertSameOutputs(outputsOf(r), alone[i]);
        });
        const [sum] = outputsOf(batched[n - 1]);
        const [a, b] = requests[n - 1].inputs.map((t) => t.data as Int32Array);
        assert.deepEqual(
          [...(sum.data as Int32Array)],
          [...a].map((x, j) => x + b[j]),
        );
      }
    });

    it('my_model: batch sizes 3 + 1 + 4 split back within 1e-5 of each run alone', async () => {
      const backend = await load(myModelConfig(), join(repo, 'my_model'));
      const requests = [myModelRequest(1, 3), myModelRequest(2, 1), myModelRequest(3, 4)];
      const batched = await backend.execute(requests);
      const alone = await runAlone(backend, requests);
      batched.forEach((r, i) => {
        assert.deepEqual(outputsOf(r)[0].shape, [[3, 1, 4][i], 512]);
        assertSameOutputs(outputsOf(r), alone[i], 1e-5);
      });
      // The callers' input arrays are neither detached nor changed by the concatenation.
      assert.equal((requests[2].inputs[0].data as Float32Array).length, 4 * 768);
      assert.equal((requests[2].inputs[0].data as Float32Array)[5], Math.fround(Math.sin(5 * 0.013 + 3)));
    });

    it('my_model: 16 requests of batch 1 in one call', async () => {
      const backend = await load(myModelConfig(), join(repo, 'my_model'));
      const requests = Array.from({ length: 16 }, (_, i) => myModelRequest(i, 1));
      const batched = await backend.execute(requests);
      const alone = await runAlone(backend, requests);
      batched.forEach((r, i) => {
        assertSameOutputs(outputsOf(r), alone[i], 1e-5);
      });
    });

    it('gives each request the outputs it asked for, in its order', async () => {
      const backend = await load(addSubConfig(), join(repo, 'add_sub'));
      const asked = [['OUTPUT1'], [], ['OUTPUT1', 'OUTPUT0'], ['OUTPUT0']];
      const requests = asked.map((outputs, i) => addSubRequest(i, 1 + (i % 2), outputs));
      const batched = await backend.execute(requests);
      const everything = await runAlone(
        backend,
        requests.map((r) => ({ ...r, requestedOutputs: [] })),
      );
      batched.forEach((r, i) => {
        const names = asked[i].length > 0 ? asked[i] : ['OUTPUT0', 'OUTPUT1'];
        assertSameOutputs(
          outputsOf(r),
          names.map((n) => everything[i].find((t) => t.name === n)!),
        );
      });
    });

    it('simple_string: concatenates BYTES inputs of batch 2 + 1 + 3', async () => {
      const backend = await load(tritonTestConfigs().simple_string, join(TRITON_REPO, 'simple_string'));
      const text = (batch: number, f: (i: number) => number) => Array.from({ length: batch * 16 }, (_, i) => encoder.encode(String(f(i))));
      const requests = [2, 1, 3].map((batch, k) =>
        createRequest('simple_string', [
          { name: 'INPUT0', datatype: 'BYTES', shape: [batch, 16], data: text(batch, (i) => i + 100 * k) },
          { name: 'INPUT1', datatype: 'BYTES', shape: [batch, 16], data: text(batch, (i) => k - i) },
        ]),
      );
      const batched = await backend.execute(requests);
      const alone = await runAlone(backend, requests);
      batched.forEach((r, i) => {
        assertSameOutputs(outputsOf(r), alone[i]);
      });
      const [sum] = outputsOf(batched[2]);
      assert.deepEqual(
        (sum.data as Uint8Array[]).map((b) => decoder.decode(b)),
        Array.from({ length: 48 }, (_, i) => String(i + 200 + 2 - i)),
      );
    });

    it('fails a request with wrong dims alone; the rest of the batch still runs', async () => {
      const backend = await load(addSubConfig(), join(repo, 'add_sub'));
      const bad = createRequest('add_sub', [int32('INPUT0', [1, 8], (i) => i), int32('INPUT1', [1, 8], (i) => i)]);
      const requests = [addSubRequest(1), addSubRequest(2, 2), bad, addSubRequest(3)];
      const results = await backend.execute(requests);
      const error = errorOf(results[2]);
      assert.equal(error.code, 'INVALID_ARG');
      assert.match(error.message, /unexpected shape for input 'INPUT0' for model 'add_sub': expected \[-1,16\], got \[1,8\]/);
      const alone = await runAlone(backend, [requests[0], requests[1], requests[3]]);
      [results[0], results[1], results[3]].forEach((r, i) => {
        assertSameOutputs(outputsOf(r), alone[i]);
      });
    });

    it('fails every request of a run that fails, and only those', async () => {
      // INPUT0/1 declared [-1] so [1,8] passes validation; the model wants 16, so that run fails in ORT.
      const config = addSubConfig({ input: [configInput('INPUT0', 'TYPE_INT32', [-1]), configInput('INPUT1', 'TYPE_INT32', [-1])] });
      const backend = await load(config, join(repo, 'add_sub'));
      const short = (seed: number) => createRequest('add_sub', [int32('INPUT0', [1, 8], (i) => i + seed), int32('INPUT1', [1, 8], (i) => i)]);
      const results = await backend.execute([short(1), addSubRequest(5), short(2)]);
      const [first, third] = [errorOf(results[0]), errorOf(results[2])];
      assert.equal(first, third, 'the members of one run share its error');
      assert.equal(first.code, 'INTERNAL');
      assert.match(first.message, /onnxruntime failed to run model 'add_sub'/);
      assertSameOutputs(outputsOf(results[1]), (await runAlone(backend, [addSubRequest(5)]))[0]);
    });

    it('runs a non-batching model request by request', async () => {
      const config = addSubConfig({
        max_batch_size: 0,
        input: [configInput('INPUT0', 'TYPE_INT32', [-1, 16]), configInput('INPUT1', 'TYPE_INT32', [-1, 16])],
        output: [configOutput('OUTPUT0', 'TYPE_INT32', [-1, 16]), configOutput('OUTPUT1', 'TYPE_INT32', [-1, 16])],
      });
      const backend = await load(config, join(repo, 'add_sub'));
      const requests = [addSubRequest(1, 2), addSubRequest(2, 3)];
      const results = await backend.execute(requests);
      assert.deepEqual(
        results.map((r) => outputsOf(r)[0].shape),
        [
          [2, 16],
          [3, 16],
        ],
      );
      assert.equal(backend.restartCount, 0);
    });
  });
}

describe('execution_thread parameter', () => {
  it('rejects any value but auto, worker or main, naming the parameter', async () => {
    const config = addSubConfig({ parameters: { execution_thread: { string_value: 'gpu' } } });
    await assert.rejects(loadOnnxInstance(createLoadContext(config, join(TRITON_REPO, 'simple'))), (err: unknown) => {
      assert.ok(err instanceof HerdError);
      assert.equal(err.code, 'INVALID_ARG');
      assert.match(err.message, /^model 'add_sub': parameter 'execution_thread' must be "auto" .*, "worker" .* or "main" .*, got 'gpu'$/);
      return true;
    });
  });
});

describe('planOnnxBatch', () => {
  const rules = (config: ModelConfig) =>
    createOnnxRequestRules(
      config,
      config.input.map((i) => i.name),
    );
  const variable = addSubConfig({ input: [configInput('INPUT0', 'TYPE_INT32', [-1]), configInput('INPUT1', 'TYPE_INT32', [-1])] });
  const request = (batch: number, width = 16) => createRequest('add_sub', [int32('INPUT0', [batch, width], (i) => i), int32('INPUT1', [batch, width], (i) => -i)]);
  const membersOf = (plan: ReturnType<typeof planOnnxBatch>) => plan.runs.map((r) => r.members.map((m) => [m.index, m.offset, m.batchSize]));

  it('concatenates into one fresh buffer per input, whatever the input order of each request', () => {
    const a = request(2);
    const b = createRequest('add_sub', [int32('INPUT1', [1, 16], () => 5), int32('INPUT0', [1, 16], () => 9)]);
    const plan = planOnnxBatch(rules(addSubConfig()), [a, b]);
    assert.deepEqual(membersOf(plan), [
      [
        [0, 0, 2],
        [1, 2, 1],
      ],
    ]);
    const [run] = plan.runs;
    assert.equal(run.ownsInputs, true);
    assert.deepEqual(
      run.inputs.map((t) => [t.name, t.shape]),
      [
        ['INPUT0', [3, 16]],
        ['INPUT1', [3, 16]],
      ],
    );
    const input0 = run.inputs[0].data as Int32Array;
    assert.notEqual(input0.buffer, (a.inputs[0].data as Int32Array).buffer);
    assert.equal(input0.byteLength, input0.buffer.byteLength, 'the concatenation owns its whole buffer');
    assert.deepEqual([...input0], [...(a.inputs[0].data as Int32Array), ...new Array(16).fill(9)]);
  });

  it('keeps a lone request as it is (no copy) and runs a non-batching model request by request', () => {
    const single = planOnnxBatch(rules(addSubConfig()), [request(1)]);
    assert.equal(single.runs[0].ownsInputs, false);
    const flat = addSubConfig({ max_batch_size: 0, input: [configInput('INPUT0', 'TYPE_INT32', [-1, 16]), configInput('INPUT1', 'TYPE_INT32', [-1, 16])] });
    assert.deepEqual(membersOf(planOnnxBatch(rules(flat), [request(1), request(1)])), [[[0, 0, 1]], [[1, 0, 1]]]);
  });

  it('groups only requests with the same non-batch dims, and never past max_batch_size', () => {
    assert.deepEqual(membersOf(planOnnxBatch(rules(variable), [request(1, 3), request(1, 5), request(2, 3)])), [
      [
        [0, 0, 1],
        [2, 1, 2],
      ],
      [[1, 0, 1]],
    ]);
    assert.deepEqual(membersOf(planOnnxBatch(rules(addSubConfig()), [request(3), request(4), request(2)])), [
      [
        [0, 0, 3],
        [1, 3, 4],
      ],
      [[2, 0, 2]],
    ]);
  });

  it('splits outputs into views on the run output buffer, and fails the whole run when it cannot', () => {
    const plan = planOnnxBatch(rules(addSubConfig()), [request(1, 16), request(2, 16)]);
    const output = new Int32Array(3 * 16).map((_, i) => i);
    const out = (shape: number[]): Tensor => ({ name: 'OUTPUT0', datatype: 'INT32', shape, data: output });
    const results = collectOnnxBatchResults('add_sub', { ...plan, runs: plan.runs.map((r) => ({ ...r, outputNames: ['OUTPUT0'] })) }, [
      { ok: true, outputs: [out([3, 16]), { ...out([3, 16]), name: 'OUTPUT1' }] },
    ]);
    const second = outputsOf(results[1])[0];
    assert.deepEqual(second.shape, [2, 16]);
    assert.equal((second.data as Int32Array).buffer, output.buffer, 'a view, not a copy');
    assert.equal((second.data as Int32Array)[0], 16);
    const broken = collectOnnxBatchResults('add_sub', plan, [{ ok: true, outputs: [out([48]), { ...out([48]), name: 'OUTPUT1' }] }]);
    for (const r of broken) assert.match(errorOf(r).message, /first dimension is not the batch size 3 of the 2 requests run together/);
  });

  it('rejects bad requests before any run: names, outputs, batch sizes, datatypes', () => {
    const cases: [InferenceRequest, RegExp][] = [
      [createRequest('add_sub', [int32('INPUT0', [1, 16], () => 0), int32('INPUTX', [1, 16], () => 0)]), /unexpected inference input 'INPUTX'/],
      [createRequest('add_sub', [int32('INPUT0', [1, 16], () => 0)]), /expected input 'INPUT1'.*missing/],
      [{ ...request(1), requestedOutputs: ['OUTPUT9'] }, /unexpected inference output 'OUTPUT9'/],
      [createRequest('add_sub', [int32('INPUT0', [1, 16], () => 0), int32('INPUT1', [2, 16], () => 0)]), /batch size 2 does not match/],
      [request(9), /batch-size must be between 1 and 8/],
      [
        createRequest('add_sub', [int32('INPUT0', [1, 16], () => 0), { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) }]),
        /datatype FP32 but model 'add_sub' expects INT32/,
      ],
      [createRequest('add_sub', [int32('INPUT0', [1, 16], () => 0), { ...int32('INPUT1', [1, 16], () => 0), data: new Int32Array(8) }]), /8 elements but shape \[1, 16\] needs 16/],
    ];
    const plan = planOnnxBatch(rules(addSubConfig()), [request(1), ...cases.map(([r]) => r)]);
    assert.deepEqual(membersOf(plan), [[[0, 0, 1]]]);
    cases.forEach(([, message], i) => {
      assert.match(plan.rejected.get(i + 1)?.message ?? '', message);
    });
  });
});
