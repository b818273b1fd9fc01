// Triton Python-backend models served by Herd over HTTP: the suite's own models (test/fixtures/python_models)
// beside the ONNX add_sub they call through BLS.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { PYTHON_BACKEND_CONFIG } from '../python-interpreter.ts';
import { binaryBody, EXAMPLE_REPOSITORY, postJson, request, startTestServer } from './start-test-server.ts';

const PYTHON_MODELS = resolve('test/fixtures/python_models');
const MODELS = [
  'add_sub',
  'add_sub_py',
  'add_sub_batched',
  'bytes_upper',
  'error_response',
  'raises',
  'auto_complete',
  'init_fails',
  'bls_onnx',
  'add_sub_ensemble',
  'crashy',
  'noisy',
  'accumulate',
];

let server: HerdServer;
let url: string;
const logs: string[] = [];
before(async () => {
  server = await startTestServer({
    repositories: [PYTHON_MODELS, EXAMPLE_REPOSITORY],
    controlMode: 'explicit',
    loadModel: MODELS,
    backendConfig: PYTHON_BACKEND_CONFIG,
    log: (line) => logs.push(line),
  });
  url = server.httpUrl;
});
after(() => server.close());

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const infer = (model: string, body: unknown) => postJson(`${url}/v2/models/${model}/infer`, body);

test('add/sub with numpy: JSON and binary, batched by the dynamic batcher', async () => {
  const a = range(16, (i) => i);
  const b = range(16, () => 3);
  const res = await infer('add_sub_py', {
    id: 'r1',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
    ],
  });
  assert.equal(res.status, 200, res.body.toString());
  const body = res.json() as { id: string; outputs: { name: string; datatype: string; shape: number[]; data: number[] }[]; parameters: Record<string, unknown> };
  assert.equal(body.id, 'r1');
  assert.deepEqual(
    body.outputs.map((o) => [o.name, o.datatype, o.shape]),
    [
      ['OUTPUT0', 'INT32', [1, 16]],
      ['OUTPUT1', 'INT32', [1, 16]],
    ],
  );
  assert.deepEqual(
    body.outputs[0]?.data,
    a.map((x) => x + 3),
  );
  assert.deepEqual(
    body.outputs[1]?.data,
    a.map((x) => x - 3),
  );
  assert.equal(body.parameters['instance'], 'add_sub_py_0_0');

  const in0 = new Int32Array(range(32, (i) => i * 7));
  const in1 = new Int32Array(range(32, (i) => -i));
  const header = {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [2, 16], parameters: { binary_data_size: 128 } },
      { name: 'INPUT1', datatype: 'INT32', shape: [2, 16], parameters: { binary_data_size: 128 } },
    ],
    outputs: [{ name: 'OUTPUT1', parameters: { binary_data: true } }],
  };
  const { body: raw, headerLength } = binaryBody(header, in0, in1);
  const bin = await request(`${url}/v2/models/add_sub_py/infer`, { method: 'POST', body: raw, headers: { 'inference-header-content-length': String(headerLength) } });
  assert.equal(bin.status, 200);
  const jsonLength = Number(bin.headers.get('inference-header-content-length'));
  const meta = JSON.parse(bin.body.subarray(0, jsonLength).toString()) as { outputs: { name: string }[] };
  assert.deepEqual(
    meta.outputs.map((o) => o.name),
    ['OUTPUT1'],
    'outputs pruned to the requested one',
  );
  const out = new Int32Array(bin.body.buffer.slice(bin.body.byteOffset + jsonLength, bin.body.byteOffset + bin.body.byteLength));
  assert.deepEqual(
    [...out],
    range(32, (i) => i * 7 + i),
  );

  // Concurrent requests reach execute() as one list (dynamic batching; this copy waits up to 200 ms for 4).
  const answers = await Promise.all(
    range(12, (k) => k).map((k) =>
      infer('add_sub_batched', {
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: range(16, () => k) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: range(16, () => 1) },
        ],
      }),
    ),
  );
  const batches = answers.map((r) => r.json() as { outputs: { data: number[] }[]; parameters: { batch_requests: number } });
  answers.forEach((_r, k) => {
    assert.equal(batches[k]?.outputs[0]?.data[0], k + 1);
  });
  assert.ok(
    batches.some((b) => b.parameters.batch_requests > 1),
    'some requests shared a batch',
  );
});

test('BYTES in and out as numpy object arrays; args, request fields and pb_utils helpers as Triton gives them', async () => {
  const res = await infer('bytes_upper', {
    id: 'req-7',
    parameters: { answer: 42, flag: true },
    inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [3], data: ['héllo', '', 'abc def'] }],
  });
  assert.equal(res.status, 200, res.body.toString());
  const outputs = (res.json() as { outputs: { name: string; data: unknown[] }[] }).outputs;
  const byName = new Map(outputs.map((o) => [o.name, o.data]));
  assert.deepEqual(byName.get('UPPER'), ['HÉLLO', '', 'ABC DEF']);
  assert.deepEqual(byName.get('LENGTHS'), [6, 0, 7]);
  // biome-ignore lint/suspicious/noExplicitAny: the stub's echo of Triton's args, read field by field below
  const seen = JSON.parse(String(byName.get('ARGS')?.[0])) as Record<string, any>;
  assert.equal(seen.args.model_name, 'bytes_upper');
  assert.equal(seen.args.model_version, '1');
  assert.equal(seen.args.model_instance_kind, 'CPU');
  assert.equal(seen.args.model_instance_name, 'bytes_upper_0');
  assert.equal(seen.args.model_instance_device_id, '0');
  assert.equal(seen.args.model_repository, resolve(PYTHON_MODELS, 'bytes_upper'));
  assert.equal(JSON.parse(seen.args.model_config).name, 'bytes_upper', 'model_config is a JSON string');
  assert.equal(seen.request_id, 'req-7');
  assert.deepEqual(seen.parameters, { answer: 42, flag: true });
  assert.deepEqual(seen.requested, ['ARGS', 'LENGTHS', 'UPPER']);
  assert.equal(seen.model_dir, resolve(PYTHON_MODELS, 'bytes_upper'));
  assert.equal(seen.dtype_number, 11);
  assert.equal(seen.numpy_of_11, 'float32');
});

test('an error response keeps its TritonError code; other requests are unaffected', async () => {
  const x = (v: number) => ({ inputs: [{ name: 'X', datatype: 'FP32', shape: [1], data: [v] }] });
  const invalid = await infer('error_response', x(-1));
  assert.equal(invalid.status, 400);
  assert.deepEqual(invalid.json(), { error: 'value -1 is not accepted' });
  assert.equal((await infer('error_response', x(-3))).status, 503);
  const internal = await infer('error_response', x(-4));
  assert.equal(internal.status, 500);
  assert.deepEqual(internal.json(), { error: 'negative input' });
  const ok = await infer('error_response', x(2.5));
  assert.deepEqual((ok.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [5]);
});

test('an exception in execute fails the batch with the exception line; the instance keeps serving', async () => {
  const x = (v: number) => ({ inputs: [{ name: 'X', datatype: 'FP32', shape: [1], data: [v] }] });
  const raised = await infer('raises', x(1));
  assert.equal(raised.status, 500);
  assert.deepEqual(raised.json(), { error: "Failed to process the request(s) for model 'raises_0', message: ValueError: the model does not like ones" });
  assert.ok(
    logs.some((l) => l.includes('Traceback') && l.includes('model.py')),
    'the full traceback is in the log',
  );
  const wrongCount = (await infer('raises', x(2))).json() as { error: string };
  assert.match(wrongCount.error, /Number of InferenceResponse objects do not match the number of InferenceRequest objects/);
  const tme = (await infer('raises', x(3))).json() as { error: string };
  assert.match(tme.error, /TritonModelException: raised as TritonModelException/);
  const ok = await infer('raises', x(0));
  assert.equal(ok.status, 200);
});

test('auto_complete_config fills inputs, outputs, max_batch_size and dynamic batching before the instances start', async () => {
  type Io = { name: string; data_type: string; dims: number[] };
  const config = (await request(`${url}/v2/models/auto_complete/config`)).json() as { max_batch_size: number; input: Io[]; output: Io[]; dynamic_batching?: unknown };
  assert.equal(config.max_batch_size, 4);
  assert.deepEqual(
    config.input.map((i) => [i.name, i.data_type, i.dims]),
    [['IN', 'TYPE_FP32', [3]]],
  );
  assert.deepEqual(
    config.output.map((o) => [o.name, o.data_type, o.dims]),
    [['OUT', 'TYPE_FP32', [3]]],
  );
  assert.ok(config.dynamic_batching, 'dynamic_batching set');
  const res = await infer('auto_complete', { inputs: [{ name: 'IN', datatype: 'FP32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }] });
  assert.deepEqual((res.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [10, 20, 30, 40, 50, 60]);
});

test("a model whose initialize fails is UNAVAILABLE with the traceback's last line as the reason", async () => {
  const index = (await postJson(`${url}/v2/repository/index`, {})).json() as { name: string; state: string; reason: string }[];
  const entry = index.find((e) => e.name === 'init_fails');
  assert.equal(entry?.state, 'UNAVAILABLE');
  assert.match(entry?.reason ?? '', /FileNotFoundError: weights\.bin is missing from init_fails$/);
  assert.ok(
    logs.some((l) => l.includes('initialize() failed') && l.includes('_open_weights')),
    'the traceback is logged',
  );
});

test('BLS: a Python model calls the ONNX add_sub through exec(), async_exec() and an ensemble; a failed call is an error response', async () => {
  const a = range(16, (i) => i * 2);
  const b = range(16, (i) => i);
  const body = (mode: string) => ({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
      { name: 'MODE', datatype: 'BYTES', shape: [1], data: [mode] },
    ],
  });
  for (const mode of ['sync', 'async', 'ensemble']) {
    const res = await infer('bls_onnx', body(mode));
    assert.equal(res.status, 200, `${mode}: ${res.body.toString()}`);
    const outputs = (res.json() as { outputs: { name: string; data: number[] }[] }).outputs;
    assert.deepEqual(
      outputs.find((o) => o.name === 'SUM')?.data,
      a.map((x, i) => x + (b[i] as number)),
    );
    assert.deepEqual(
      outputs.find((o) => o.name === 'DIFF')?.data,
      a.map((x, i) => x - (b[i] as number)),
    );
  }
  const missing = await infer('bls_onnx', body('missing'));
  assert.equal(missing.status, 500);
  assert.match((missing.json() as { error: string }).error, /^add_sub failed: .*no_such_model/);
  const stats = (await request(`${url}/v2/models/add_sub/stats`)).json() as { model_stats: { inference_stats: { success: { count: number } } }[] };
  assert.ok((stats.model_stats[0]?.inference_stats.success.count ?? 0) >= 2, 'the BLS calls ran on add_sub');
});

test('sequence batching: correlation_id(), flags() and the START control reach the model; two instances serve', async () => {
  const step = (sequence: number, value: number, flags: { start?: boolean; end?: boolean } = {}) =>
    infer('accumulate', {
      parameters: { sequence_id: sequence, ...(flags.start ? { sequence_start: true } : {}), ...(flags.end ? { sequence_end: true } : {}) },
      inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
    });
  const read = async (answer: Promise<{ json: () => unknown }>) => {
    const body = (await answer).json() as { outputs: { data: number[] }[]; parameters: { instance: string; correlation_id: string; start: boolean } };
    return { total: body.outputs[0]?.data[0], ...body.parameters };
  };
  const a1 = await read(step(11, 5, { start: true }));
  const b1 = await read(step(22, 100, { start: true }));
  assert.deepEqual([a1.total, a1.correlation_id, a1.start], [5, '11', true]);
  assert.deepEqual([b1.total, b1.correlation_id], [100, '22']);
  assert.equal((await read(step(11, 7))).total, 12);
  assert.equal((await read(step(22, 1))).total, 101);
  const a3 = await read(step(11, 1, { end: true }));
  assert.equal(a3.total, 13);
  assert.equal(a3.instance, a1.instance, 'a sequence stays on its instance');
  assert.ok(/^accumulate_0_[01]$/.test(a1.instance) && /^accumulate_0_[01]$/.test(b1.instance));
});

test("print(), stderr and pb_utils.Logger land in Herd's log and never corrupt the protocol", async () => {
  const res = await infer('noisy', { inputs: [{ name: 'X', datatype: 'FP32', shape: [3], data: [1, 2, 3] }] });
  assert.equal(res.status, 200, res.body.toString());
  assert.deepEqual((res.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [2, 3, 4]);
  const deadline = Date.now() + 5000;
  const wanted = [
    'stdout: noisy: initialize says hello',
    'stdout: noisy stdout: [1.0, 2.0, 3.0]',
    'stderr: noisy stderr line',
    'INFO model.py:18] noisy logger info',
    'WARNING model.py:19] noisy logger warning',
  ];
  while (Date.now() < deadline && !wanted.every((w) => logs.some((l) => l.includes(w)))) await new Promise((r) => setTimeout(r, 50));
  for (const w of wanted)
    assert.ok(
      logs.some((l) => l.startsWith('python model noisy/1/noisy_0') && l.includes(w)),
      `log has '${w}'`,
    );
  assert.equal((await infer('noisy', { inputs: [{ name: 'X', datatype: 'FP32', shape: [1], data: [9] }] })).status, 200);
});

test('a stub killed mid-request fails that request clearly, restarts, and serves the next; other models keep serving', async () => {
  const call = (ms: number) => infer('crashy', { inputs: [{ name: 'SLEEP_MS', datatype: 'INT32', shape: [1], data: [ms] }] });
  const first = await call(0);
  const pid = (first.json() as { outputs: { data: number[] }[] }).outputs[0]?.data[0] as number;
  assert.ok(pid > 0);
  const slow = call(5000);
  await new Promise((r) => setTimeout(r, 300));
  process.kill(pid, 'SIGKILL');
  const failed = await slow;
  assert.equal(failed.status, 503);
  assert.match((failed.json() as { error: string }).error, /crashy\/1\/crashy_0: the stub process was killed by SIGKILL while executing this request/);
  const other = await infer('error_response', { inputs: [{ name: 'X', datatype: 'FP32', shape: [1], data: [1] }] });
  assert.equal(other.status, 200);
  const next = await call(0);
  assert.equal(next.status, 200, next.body.toString());
  const newPid = (next.json() as { outputs: { data: number[] }[] }).outputs[0]?.data[0];
  assert.notEqual(newPid, pid, 'a new stub process answered');
  assert.ok(logs.some((l) => l.includes('was killed by SIGKILL; restarting it')));
});

test('unload runs finalize and ends the stub processes', async () => {
  const first = await infer('crashy', { inputs: [{ name: 'SLEEP_MS', datatype: 'INT32', shape: [1], data: [0] }] });
  const pid = (first.json() as { outputs: { data: number[] }[] }).outputs[0]?.data[0] as number;
  const res = await postJson(`${url}/v2/repository/models/crashy/unload`, {});
  assert.equal(res.status, 200);
  assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the stub process is gone');
});
