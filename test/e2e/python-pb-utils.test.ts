// pb_utils as Triton's python_backend documents it, through the real server: custom metrics on /metrics,
// BLS with a bytes model name (examples/bls/sync_model.py), Logger records and levels, TritonError codes
// as HTTP and gRPC statuses, and an auto-completed config as the clients' get_model_config reads it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { PYTHON_BACKEND_CONFIG } from '../python-interpreter.ts';
import { EXAMPLE_REPOSITORY, postJson, request, startTestServer } from './start-test-server.ts';

const PYTHON_MODELS = resolve('test/fixtures/python_models');

let server: HerdServer;
let url: string;
let grpc: KserveGrpcClient;
const logs: string[] = [];
before(async () => {
  server = await startTestServer({
    repositories: [PYTHON_MODELS, EXAMPLE_REPOSITORY],
    controlMode: 'explicit',
    loadModel: ['add_sub', 'custom_metrics', 'bls_sync', 'error_response', 'noisy', 'auto_complete'],
    backendConfig: PYTHON_BACKEND_CONFIG,
    log: (line) => logs.push(line),
  });
  url = server.httpUrl;
  grpc = new KserveGrpcClient({ url: server.grpcUrl as string });
});
after(async () => {
  grpc?.close();
  await server?.close();
});

const infer = (model: string, body: unknown) => postJson(`${url}/v2/models/${model}/infer`, body);
const metricsText = async () => (await request(`${server.metricsUrl}/metrics`)).body.toString();
const x = (values: number[]) => ({ inputs: [{ name: 'X', datatype: 'FP32', shape: [values.length], data: values }] });

test('MetricFamily counters, gauges and histograms show on /metrics; value() answers the shared series; unload removes them', async () => {
  const counts: number[] = [];
  for (const values of [[1, 2], [3], [1, 2, 3, 4, 5]]) {
    const res = await infer('custom_metrics', x(values));
    assert.equal(res.status, 200, res.body.toString());
    counts.push((res.json() as { outputs: { data: number[] }[] }).outputs[0]?.data[0] as number);
  }
  // Two instances hold the same labels: one series, and value() reads it whichever instance answered.
  assert.deepEqual(counts, [1, 2, 3]);
  const text = await metricsText();
  for (const line of [
    '# HELP pyutils_requests_total Requests seen by the custom_metrics test model',
    '# TYPE pyutils_requests_total counter',
    'pyutils_requests_total{model="custom_metrics",version="1"} 3',
    '# TYPE pyutils_last_sum gauge',
    'pyutils_last_sum 15',
    '# TYPE pyutils_input_size histogram',
    'pyutils_input_size_bucket{model="custom_metrics",le="1"} 1',
    'pyutils_input_size_bucket{model="custom_metrics",le="4"} 2',
    'pyutils_input_size_bucket{model="custom_metrics",le="16"} 3',
    'pyutils_input_size_bucket{model="custom_metrics",le="+Inf"} 3',
    'pyutils_input_size_sum{model="custom_metrics"} 8',
    'pyutils_input_size_count{model="custom_metrics"} 3',
  ]) {
    assert.ok(text.split('\n').includes(line), `/metrics has '${line}'`);
  }

  // A thread's update after execute returned arrives without any response to carry it.
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && !/^pyutils_background\{instance="custom_metrics_0_\d"\} 3$/m.test(await metricsText())) await new Promise((r) => setTimeout(r, 50));
  assert.match(await metricsText(), /^pyutils_background\{instance="custom_metrics_0_\d"\} 3$/m);

  const refused = await infer('custom_metrics', x([-1]));
  assert.deepEqual((refused.json() as { error: string }).error.split('\n'), [
    'Failed to increment metric value: TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.',
    'Failed to set metric value: TRITONSERVER_METRIC_KIND_COUNTER does not support Set',
    'Failed to get metric value: TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Value',
    'Failed to create metric. Unexpected buckets found.',
    'Failed to create metric. Missing required buckets.',
    'Error when creating MetricFamily: Family name already exists with different type',
    "Error when creating MetricFamily: 'nv_inference_count' is the name of one of Herd's own metrics",
  ]);

  assert.equal((await postJson(`${url}/v2/repository/models/custom_metrics/unload`, {})).status, 200);
  const after = await metricsText();
  assert.ok(!after.includes('pyutils_'), 'the families left /metrics with the model');
  assert.ok(after.includes('nv_inference_count'), "Herd's own families stay");
});

test("BLS: a bytes model_name read from a BYTES tensor (examples/bls/sync_model.py) calls that model; an unknown one fails with Triton's reason", async () => {
  const a = Array.from({ length: 16 }, (_, i) => i * 3);
  const b = Array.from({ length: 16 }, (_, i) => i);
  const body = (model: string) => ({
    inputs: [
      { name: 'MODEL_NAME', datatype: 'BYTES', shape: [1], data: [model] },
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
    ],
  });
  const res = await infer('bls_sync', body('add_sub'));
  assert.equal(res.status, 200, res.body.toString());
  const outputs = new Map((res.json() as { outputs: { name: string; data: number[] }[] }).outputs.map((o) => [o.name, o.data]));
  assert.deepEqual(
    outputs.get('OUTPUT0'),
    a.map((v, i) => v + (b[i] as number)),
  );
  assert.deepEqual(
    outputs.get('OUTPUT1'),
    a.map((v, i) => v - (b[i] as number)),
  );
  const missing = await infer('bls_sync', body('undefined_model'));
  assert.equal(missing.status, 500);
  assert.match(
    (missing.json() as { error: string }).error,
    /^Failed to process the request\(s\) for model 'bls_sync_0', message: TritonModelException: Request for unknown model: 'undefined_model' is not found$/,
  );
});

test("pb_utils.Logger records carry the level and the model's file:line; VERBOSE shows once log_verbose_level is set, INFO goes when log_info is off", async () => {
  const seen = (text: string) => logs.filter((l) => l.startsWith('python model noisy/1/noisy_0') && l.includes(text));
  assert.equal((await infer('noisy', x([1]))).status, 200);
  assert.match(seen('noisy logger info')[0] ?? '', /^python model noisy\/1\/noisy_0 INFO model\.py:\d+\] noisy logger info$/);
  assert.match(seen('noisy logger warning')[0] ?? '', / WARNING model\.py:\d+\] noisy logger warning$/);
  assert.match(seen('noisy logger error')[0] ?? '', / ERROR model\.py:\d+\] noisy logger error$/);
  assert.match(seen('noisy logger bytes')[0] ?? '', / INFO model\.py:\d+\] noisy logger bytes$/, 'bytes messages are read as UTF-8');
  assert.equal(seen('noisy logger verbose').length, 0, 'VERBOSE is off at log_verbose_level 0');

  assert.equal((await postJson(`${url}/v2/logging`, { log_verbose_level: 1, log_info: false })).status, 200);
  const before = seen('noisy logger info').length;
  assert.equal((await infer('noisy', x([2]))).status, 200);
  // The stub writes its records before the response, so they are logged by the time the answer arrives.
  assert.match(seen('noisy logger verbose')[0] ?? '', / VERBOSE model\.py:\d+\] noisy logger verbose$/);
  assert.equal(seen('noisy logger info').length, before, 'INFO records are dropped with log_info off');
  await postJson(`${url}/v2/logging`, { log_verbose_level: 0, log_info: true });
});

test("a TritonError's code is the status Triton answers for it, over HTTP and gRPC", async () => {
  // value -> [TritonError code, HTTP status (HttpCodeFromError), gRPC status (GrpcStatusUtil::CodeToStatus)]
  const cases: [number, string, number, number][] = [
    [-1, 'INVALID_ARG', 400, GrpcStatus.INVALID_ARGUMENT],
    [-2, 'NOT_FOUND', 404, GrpcStatus.NOT_FOUND],
    [-3, 'UNAVAILABLE', 503, GrpcStatus.UNAVAILABLE],
    [-4, 'INTERNAL (the default)', 500, GrpcStatus.INTERNAL],
    [-5, 'UNSUPPORTED', 501, GrpcStatus.UNIMPLEMENTED],
    [-6, 'ALREADY_EXISTS', 400, GrpcStatus.ALREADY_EXISTS],
    [-7, 'CANCELLED', 400, GrpcStatus.CANCELLED],
    [-8, 'UNKNOWN', 400, GrpcStatus.UNKNOWN],
    [-9, 'INTERNAL', 500, GrpcStatus.INTERNAL],
  ];
  for (const [value, code, httpStatus, grpcStatus] of cases) {
    const res = await infer('error_response', x([value]));
    assert.equal(res.status, httpStatus, `${code} over HTTP`);
    const message = (res.json() as { error: string }).error;
    await assert.rejects(
      grpc.rpc('ModelInfer', {
        model_name: 'error_response',
        inputs: [{ name: 'X', datatype: 'FP32', shape: [1] }],
        raw_input_contents: [Buffer.from(Float32Array.of(value).buffer)],
      }),
      (err: { grpcCode: number; message: string }) => {
        assert.equal(err.grpcCode, grpcStatus, `${code} over gRPC`);
        assert.equal(err.message, message, 'the same message on both');
        return true;
      },
    );
  }
});

test('get_model_config of an auto-completed Python model answers the completed config over HTTP and gRPC', async () => {
  type Io = { name: string; data_type: string; dims: (number | string)[] };
  const http = (await request(`${url}/v2/models/auto_complete/config`)).json() as { name: string; backend: string; max_batch_size: number; input: Io[]; output: Io[] };
  const answer = await grpc.rpc<{ config: { name: string; backend: string; max_batch_size: number; input: Io[]; output: Io[] } }>('ModelConfig', { name: 'auto_complete' });
  for (const config of [http, answer.config]) {
    assert.equal(config.name, 'auto_complete');
    assert.equal(config.backend, 'python');
    assert.equal(config.max_batch_size, 4);
    assert.deepEqual(
      config.input.map((i) => [i.name, i.data_type, i.dims.map(Number)]),
      [['IN', 'TYPE_FP32', [3]]],
    );
    assert.deepEqual(
      config.output.map((o) => [o.name, o.data_type, o.dims.map(Number)]),
      [['OUT', 'TYPE_FP32', [3]]],
    );
  }
});
