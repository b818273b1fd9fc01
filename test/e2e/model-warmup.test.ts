// model_warmup against the real server: samples run on every instance before the model is READY (the
// fixture models count their executions), from zeros, random bytes and warmup/ files, counted in /stats
// and /metrics as Triton counts them, and a failing sample leaves the model UNAVAILABLE with the reason;
// an ONNX model (my_model) warms up through the onnxruntime backend the same way.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import type { ModelStatistics } from '../../src/serving/stats.ts';
import { parseExposition, sampleValue } from '../metrics/parse-exposition.ts';
import { postJson, request, startTestServer } from './start-test-server.ts';

const WARMUP_REPOSITORY = resolve('test/fixtures/warmup_repository');

let server: HerdServer;
let url: string;

before(async () => {
  server = await startTestServer({ repositories: [WARMUP_REPOSITORY], strictReadiness: false });
  url = server.httpUrl;
});
after(async () => {
  await server?.close();
});

interface InferBody {
  outputs: { name: string; data: unknown[] }[];
}
const output = (body: InferBody, name: string) => body.outputs.find((o) => o.name === name)?.data;

async function stats(model: string): Promise<ModelStatistics> {
  const res = await request(`${url}/v2/models/${model}/stats`);
  assert.equal(res.status, 200);
  return (res.json() as { model_stats: ModelStatistics[] }).model_stats[0] as ModelStatistics;
}

test('every instance ran each sample count times before the first request', async () => {
  const res = await postJson(`${url}/v2/models/warm_counter/infer`, { inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 2], data: [3, 4] }] });
  assert.equal(res.status, 200, res.body.toString());
  const body = res.json() as InferBody;
  // zeros: 3 executions, from_file: 1, random: 1, on whichever instance answers.
  assert.deepEqual(output(body, 'EXECS'), [5]);
  assert.deepEqual(output(body, 'FILE_SEEN'), [1]);
  assert.deepEqual(output(body, 'OUT'), [3, 4]);
});

test('warmup requests are counted in /stats and /metrics, as Triton counts them', async () => {
  const before = await stats('warm_counter');
  // Per instance (2): zeros 3 × batch 2, from_file 1 × 1, random 1 × 1; plus this file's one real request (batch 1) at most.
  const real = before.inference_stats.success.count - 16;
  assert.ok(real === 0 || real === 1, `success ${before.inference_stats.success.count}`);
  assert.equal(before.execution_count, 10 + real);
  assert.equal(before.inference_count, 16 + real);
  const sizes = Object.fromEntries(before.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]));
  assert.deepEqual(sizes, { 1: 4 + real, 2: 6 });
  const metrics = parseExposition((await request(`${server.metricsUrl}/metrics`)).body.toString());
  const labels = { model: 'warm_counter', version: '1' };
  assert.equal(sampleValue(metrics, 'nv_inference_exec_count', labels), before.execution_count);
  assert.equal(sampleValue(metrics, 'nv_inference_count', labels), before.inference_count);
  const loadSecs = sampleValue(metrics, 'nv_model_load_duration_secs', labels);
  assert.ok(loadSecs !== undefined && loadSecs > 0);
});

test('BYTES warmup data comes from a file of length-prefixed strings', async () => {
  const res = await postJson(`${url}/v2/models/warm_strings/infer`, { inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [2], data: ['a', 'b'] }] });
  assert.equal(res.status, 200, res.body.toString());
  assert.deepEqual(output(res.json() as InferBody, 'LOG'), ['hello', 'warm']);
});

test('a failing warmup sample makes the model UNAVAILABLE with the reason', async () => {
  const index = (await postJson(`${url}/v2/repository/index`, {})).json() as { name: string; state?: string; reason?: string }[];
  const entry = index.find((e) => e.name === 'warm_fails');
  assert.equal(entry?.state, 'UNAVAILABLE');
  assert.match(entry?.reason ?? '', /failed to run warmup sample 'zero_sample': zeros are not allowed; zeros are not allowed;/);
  const res = await postJson(`${url}/v2/models/warm_fails/infer`, { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1, 1], data: [1] }] });
  assert.notEqual(res.status, 200);
  assert.match(res.body.toString(), /warmup sample 'zero_sample'/);
  assert.equal((await request(`${url}/v2/models/warm_fails/ready`)).status, 404, 'a failed model has no available versions (NOT_FOUND), as in Triton');
});

test('an ONNX model warms up through the onnxruntime backend; a sample that does not fit the model fails its load', async () => {
  const repo = mkdtempSync(join(tmpdir(), 'herd-warmup-onnx-'));
  const examples = resolve('examples/model_repository');
  const copy = (as: string, warmup: string) => {
    cpSync(join(examples, 'my_model'), join(repo, as), { recursive: true });
    const file = join(repo, as, 'config.pbtxt');
    writeFileSync(file, `${readFileSync(file, 'utf8').replace('name: "my_model"', `name: "${as}"`)}\nmodel_warmup [ ${warmup} ]\n`);
  };
  copy('onnx_warm', '{ name: "r" batch_size: 4 count: 2 inputs { key: "INPUT__0" value { data_type: TYPE_FP32 dims: [ 768 ] random_data: true } } }');
  copy('onnx_bad_warmup', '{ name: "wrong_dims" batch_size: 1 inputs { key: "INPUT__0" value { data_type: TYPE_FP32 dims: [ 5 ] zero_data: true } } }');
  const onnx = await startTestServer({ repositories: [repo], strictReadiness: false });
  try {
    const res = await request(`${onnx.httpUrl}/v2/models/onnx_warm/stats`);
    const s = (res.json() as { model_stats: ModelStatistics[] }).model_stats[0] as ModelStatistics;
    // Two instances × count 2, one execution of 4 requests each time.
    assert.equal(s.execution_count, 4);
    assert.equal(s.inference_count, 16);
    assert.deepEqual(
      s.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]),
      [[4, 4]],
    );
    const index = (await postJson(`${onnx.httpUrl}/v2/repository/index`, {})).json() as { name: string; state?: string; reason?: string }[];
    const bad = index.find((e) => e.name === 'onnx_bad_warmup');
    assert.equal(bad?.state, 'UNAVAILABLE');
    assert.match(bad?.reason ?? '', /failed to run warmup sample 'wrong_dims': .*unexpected shape for input 'INPUT__0'/);
  } finally {
    await onnx.close();
    rmSync(repo, { recursive: true, force: true });
  }
});
