// Triton's own example repository, served by Herd over HTTP: what Triton serves, Herd serves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HerdServer } from '../../src/app.ts';
import { PYTHON_BACKEND_CONFIG } from '../python-interpreter.ts';
import { binaryBody, postJson, request, startTestServer, TRITON_REPOSITORY } from './start-test-server.ts';

let server: HerdServer;
let url: string;
before(async () => {
  server = await startTestServer({ repositories: [TRITON_REPOSITORY], backendConfig: PYTHON_BACKEND_CONFIG });
  url = server.httpUrl;
});
after(() => server.close());

const range = <T = number>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

test('index: ONNX and Python models READY; weightless ones UNAVAILABLE with a reason', async () => {
  const res = await postJson(`${url}/v2/repository/index`, {});
  assert.equal(res.status, 200);
  const index = res.json() as { name: string; version?: string; state: string; reason: string }[];
  const byName = new Map(index.map((e) => [e.name, e]));
  for (const name of ['simple', 'simple_int8', 'simple_string', 'simple_sequence', 'simple_dyna_sequence', 'simple_identity']) {
    assert.equal(byName.get(name)?.state, 'READY', `${name}: ${byName.get(name)?.reason}`);
    assert.equal(byName.get(name)?.version, '1');
  }
  for (const name of ['densenet_onnx', 'inception_onnx']) {
    assert.equal(byName.get(name)?.state, 'UNAVAILABLE');
    assert.match(byName.get(name)?.reason ?? '', /at least one version must be available/);
  }
  const ready = (await postJson(`${url}/v2/repository/index`, { ready: true })).json() as { name: string }[];
  assert.deepEqual(ready.map((e) => e.name).sort(), ['simple', 'simple_dyna_sequence', 'simple_identity', 'simple_int8', 'simple_sequence', 'simple_string']);
});

test('health: live; not ready under strict readiness while some models are unavailable', async () => {
  const live = await request(`${url}/v2/health/live`);
  assert.equal(live.status, 200);
  assert.equal(live.body.length, 0);
  assert.equal((await request(`${url}/v2/health/ready`)).status, 400);
  assert.equal((await request(`${url}/v2/models/simple/ready`)).status, 200);
  assert.equal((await request(`${url}/v2/models/simple/versions/1/ready`)).status, 200);
  // Not ready answers the lookup's error, as Triton's HandleModelReady: NOT_FOUND (404) for a missing
  // version and for a model with no available version, INVALID_ARG (400) for an unknown name.
  assert.equal((await request(`${url}/v2/models/simple/versions/2/ready`)).status, 404);
  assert.equal((await request(`${url}/v2/models/densenet_onnx/ready`)).status, 404);
  assert.equal((await request(`${url}/v2/models/nope/ready`)).status, 400);
});

test('server and model metadata as Triton reports them', async () => {
  const meta = (await request(`${url}/v2`)).json() as { name: string; version: string; extensions: string[] };
  assert.equal(meta.name, 'triton', 'the server id Triton clients expect');
  assert.ok(meta.extensions.includes('binary_tensor_data'));
  const simple = (await request(`${url}/v2/models/simple`)).json();
  assert.deepEqual(simple, {
    name: 'simple',
    versions: ['1'],
    platform: 'onnxruntime_onnx',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
      { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
    ],
    outputs: [
      { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
      { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
    ],
  });
  const str = (await request(`${url}/v2/models/simple_string/versions/1`)).json() as { inputs: { datatype: string }[] };
  assert.equal(str.inputs[0]?.datatype, 'BYTES');
});

test('config prints every default with enums as strings', async () => {
  const config = (await request(`${url}/v2/models/simple/config`)).json() as Record<string, unknown>;
  assert.equal(config['name'], 'simple');
  assert.equal(config['backend'], 'onnxruntime');
  assert.equal(config['max_batch_size'], 8);
  assert.deepEqual(config['version_policy'], { latest: { num_versions: 1 } });
  const input = (config['input'] as Record<string, unknown>[])[0] as Record<string, unknown>;
  assert.equal(input['data_type'], 'TYPE_INT32');
  assert.equal(input['format'], 'FORMAT_NONE');
  const group = (config['instance_group'] as Record<string, unknown>[])[0] as Record<string, unknown>;
  assert.equal(group['kind'], 'KIND_CPU');
  assert.equal(group['count'], 2, "Triton's default for a CPU onnxruntime model");
  assert.equal(group['name'], 'simple');
  assert.equal(config['default_model_filename'], 'model.onnx');
});

test('simple: JSON and binary give the same, correct sums and differences', async () => {
  const a = range(16, (i) => i);
  const b = range(16, () => 1);
  const json = await postJson(`${url}/v2/models/simple/infer`, {
    id: 'req-1',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: [b] },
    ],
  });
  assert.equal(json.status, 200, json.body.toString());
  const answer = json.json() as { id: string; model_name: string; model_version: string; outputs: { name: string; datatype: string; shape: number[]; data: number[] }[] };
  assert.equal(answer.id, 'req-1');
  assert.equal(answer.model_name, 'simple');
  assert.equal(answer.model_version, '1');
  const out0 = answer.outputs.find((o) => o.name === 'OUTPUT0');
  const out1 = answer.outputs.find((o) => o.name === 'OUTPUT1');
  assert.deepEqual(out0, { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: range(16, (i) => i + 1) });
  assert.deepEqual(
    out1?.data,
    range(16, (i) => i - 1),
  );

  const { body, headerLength } = binaryBody(
    {
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
      ],
      outputs: [
        { name: 'OUTPUT0', parameters: { binary_data: true } },
        { name: 'OUTPUT1', parameters: { binary_data: true } },
      ],
    },
    Int32Array.from(a),
    Int32Array.from(b),
  );
  const bin = await request(`${url}/v2/models/simple/infer`, {
    method: 'POST',
    body,
    headers: { 'Inference-Header-Content-Length': String(headerLength), 'content-type': 'application/octet-stream' },
  });
  assert.equal(bin.status, 200, bin.body.toString());
  const jsonLength = Number(bin.headers.get('inference-header-content-length'));
  const header = JSON.parse(bin.body.subarray(0, jsonLength).toString()) as { outputs: { name: string; parameters: { binary_data_size: number } }[] };
  assert.deepEqual(
    header.outputs.map((o) => [o.name, o.parameters.binary_data_size]),
    [
      ['OUTPUT0', 64],
      ['OUTPUT1', 64],
    ],
  );
  const raw = bin.body.subarray(jsonLength);
  const values = new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  assert.deepEqual([...values.subarray(0, 16)], out0?.data);
  assert.deepEqual([...values.subarray(16)], out1?.data);
});

test('simple_int8 and simple_string answer correctly', async () => {
  const res = await postJson(`${url}/v2/models/simple_int8/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'INT8', shape: [1, 16], data: range(16, (i) => i * 5) },
      { name: 'INPUT1', datatype: 'INT8', shape: [1, 16], data: range(16, () => 3) },
    ],
    outputs: [{ name: 'OUTPUT1' }],
  });
  assert.equal(res.status, 200, res.body.toString());
  const outputs = (res.json() as { outputs: { name: string; data: number[] }[] }).outputs;
  assert.deepEqual(
    outputs.map((o) => o.name),
    ['OUTPUT1'],
    'only the requested output',
  );
  assert.deepEqual(
    outputs[0]?.data,
    range(16, (i) => i * 5 - 3),
  );

  const str = await postJson(`${url}/v2/models/simple_string/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'BYTES', shape: [1, 16], data: range(16, (i) => String(i)) },
      { name: 'INPUT1', datatype: 'BYTES', shape: [1, 16], data: range(16, () => '2') },
    ],
  });
  assert.equal(str.status, 200, str.body.toString());
  const sOut = (str.json() as { outputs: { name: string; datatype: string; data: string[] }[] }).outputs;
  const sum = sOut.find((o) => o.name === 'OUTPUT0');
  assert.equal(sum?.datatype, 'BYTES');
  assert.deepEqual(
    sum?.data,
    range(16, (i) => String(i + 2)),
  );
});

test('simple_sequence gets its START/READY controls from the sequence parameters', async () => {
  const send = (value: number, parameters: Record<string, unknown>) =>
    postJson(`${url}/v2/models/simple_sequence/infer`, {
      parameters,
      inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
    });
  // The model computes READY * (INPUT + START).
  const first = await send(10, { sequence_id: 42, sequence_start: true });
  assert.equal(first.status, 200, first.body.toString());
  assert.deepEqual((first.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [11]);
  const next = await send(10, { sequence_id: 42 });
  assert.deepEqual((next.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [10]);
  const missing = await send(10, {});
  assert.equal(missing.status, 400);
  assert.match((missing.json() as { error: string }).error, /must specify a non-zero or non-empty correlation ID/);
});

test('statistics count what was served', async () => {
  const before = (await request(`${url}/v2/models/simple/stats`)).json() as { model_stats: { inference_stats: { success: { count: number } } }[] };
  const n = before.model_stats[0]?.inference_stats.success.count ?? 0;
  await postJson(`${url}/v2/models/simple/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [2, 16], data: range(32, (i) => i) },
      { name: 'INPUT1', datatype: 'INT32', shape: [2, 16], data: range(32, (i) => i) },
    ],
  });
  const stats = (await request(`${url}/v2/models/simple/versions/1/stats`)).json() as { model_stats: Record<string, unknown>[] };
  const s = stats.model_stats[0] as {
    name: string;
    version: string;
    inference_count: number;
    execution_count: number;
    last_inference: number;
    inference_stats: Record<string, { count: number; ns: number }>;
    batch_stats: { batch_size: number }[];
  };
  assert.equal(s.name, 'simple');
  assert.equal(s.version, '1');
  assert.equal(s.inference_stats['success']?.count, n + 1);
  assert.equal(s.inference_stats['queue']?.count, s.inference_stats['success']?.count);
  assert.ok((s.inference_stats['compute_infer']?.ns ?? 0) > 0);
  assert.ok(s.batch_stats.some((b) => b.batch_size === 2));
  assert.ok(s.last_inference > 0);
  for (const key of ['success', 'fail', 'queue', 'compute_input', 'compute_infer', 'compute_output', 'cache_hit', 'cache_miss']) {
    assert.ok(s.inference_stats[key], `inference_stats.${key}`);
  }
  const all = (await request(`${url}/v2/models/stats`)).json() as { model_stats: { name: string }[] };
  assert.ok(all.model_stats.length >= 5);
});

test('none mode refuses the load/unload API with 503, as Triton does', async () => {
  const res = await postJson(`${url}/v2/repository/models/simple/load`, {});
  assert.equal(res.status, 503);
  assert.deepEqual(res.json(), { error: 'explicit model load / unload is not allowed if polling is enabled' });
});

test('simple_identity (a Triton Python-backend model.py, unchanged) echoes BYTES in JSON and binary', async () => {
  const json = await postJson(`${url}/v2/models/simple_identity/infer`, {
    inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2, 2], data: ['a', 'bé', '', 'x y'] }],
  });
  assert.equal(json.status, 200, json.body.toString());
  assert.deepEqual(json.json(), {
    model_name: 'simple_identity',
    model_version: '1',
    outputs: [{ name: 'OUTPUT0', datatype: 'BYTES', shape: [2, 2], data: ['a', 'bé', '', 'x y'] }],
  });
  const element = Buffer.from([3, 0, 0, 0, 0, 0xff, 0x10]);
  const header = {
    inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 1], parameters: { binary_data_size: element.length } }],
    outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
  };
  const { body, headerLength } = binaryBody(header, element);
  const bin = await request(`${url}/v2/models/simple_identity/infer`, { method: 'POST', body, headers: { 'inference-header-content-length': String(headerLength) } });
  assert.equal(bin.status, 200);
  const jsonLength = Number(bin.headers.get('inference-header-content-length'));
  assert.deepEqual([...bin.body.subarray(jsonLength)], [...element], 'non-UTF-8 bytes come back unchanged');
});
