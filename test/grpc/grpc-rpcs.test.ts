// Every unary RPC of GRPCInferenceService over real gRPC against the running server: health, metadata,
// config (the same document as HTTP), statistics, repository index, trace and log settings, CUDA shared
// memory as a CPU-only Triton, every datatype raw and typed, error statuses, malformed and oversized messages.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { credentials, Client, Metadata, status as Status } from '@grpc/grpc-js';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import type { Tensor } from '../../src/core/tensor.ts';
import { EXAMPLE_REPOSITORY, startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

const TYPES = ['BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'FP32', 'FP64', 'BF16', 'BYTES'] as const;
const configType = (t: string) => (t === 'BYTES' ? 'TYPE_STRING' : `TYPE_${t}`);
const ECHO_CONFIG = [
  'name: "echo_types"',
  'backend: "js"',
  'max_batch_size: 0',
  `input [ ${TYPES.map((t) => `{ name: "IN_${t}" data_type: ${configType(t)} dims: [ 2, -1 ] optional: true }`).join(', ')} ]`,
  `output [ ${TYPES.map((t) => `{ name: "OUT_${t}" data_type: ${configType(t)} dims: [ 2, -1 ] }`).join(', ')} ]`,
].join('\n');
const ECHO_MODEL = `export function execute(requests) {
  return requests.map((r) => ({ outputs: r.requestedOutputNames().map((name) => ({ ...r.input(name.replace('OUT_', 'IN_')), name })) }));
}
`;

let server: HerdServer;
let client: KserveGrpcClient;
let repo: string;

before(async () => {
  repo = mkdtempSync(join(tmpdir(), 'herd-grpc-rpcs-'));
  mkdirSync(join(repo, 'echo_types', '1'), { recursive: true });
  writeFileSync(join(repo, 'echo_types', 'config.pbtxt'), `${ECHO_CONFIG}\n`);
  writeFileSync(join(repo, 'echo_types', '1', 'model.mjs'), ECHO_MODEL);
  server = await startTestServer({ repositories: [TRITON_REPOSITORY, EXAMPLE_REPOSITORY, repo], strictReadiness: false });
  assert.ok(server.grpcUrl);
  client = new KserveGrpcClient({ url: server.grpcUrl });
});
after(async () => {
  client?.close();
  await server?.close();
  if (repo) rmSync(repo, { recursive: true, force: true });
});

const int32 = (name: string, values: number[]): Tensor => ({ name, datatype: 'INT32', shape: [1, values.length], data: Int32Array.from(values) });
const A = Array.from({ length: 16 }, (_, i) => i);
const B = Array.from({ length: 16 }, () => 1);

async function rejectsWith(promise: Promise<unknown>, code: number, message: RegExp | string): Promise<void> {
  await assert.rejects(promise, (err: { grpcCode: number; message: string }) => {
    assert.equal(err.grpcCode, code, err.message);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

test('health: ServerLive, ServerReady, ModelReady and grpc.health.v1.Health/Check', async () => {
  assert.equal(await client.serverLive(), true);
  assert.equal(await client.serverReady(), true);
  assert.equal(await client.modelReady('simple'), true);
  assert.equal(await client.modelReady('simple', '1'), true);
  assert.equal(await client.modelReady('no_such_model'), false);
  const { loadPackageDefinition } = await import('@grpc/grpc-js');
  const { loadGrpcProtos } = await import('../../src/grpc/load-grpc-protos.ts');
  const proto = loadPackageDefinition(loadGrpcProtos()) as unknown as {
    grpc: { health: { v1: { Health: new (a: string, c: unknown) => Client & { Check: (r: object, cb: (e: unknown, r: { status: string }) => void) => void } } } };
  };
  const health = new proto.grpc.health.v1.Health(server.grpcUrl!, credentials.createInsecure());
  const answer = await new Promise<{ status: string }>((resolve, reject) => health.Check({ service: '' }, (e, r) => (e ? reject(e) : resolve(r))));
  assert.equal(answer.status, 'SERVING');
  health.close();
});

test('ServerMetadata and ModelMetadata say what HTTP says', async () => {
  const meta = await client.serverMetadata();
  const http = (await (await fetch(`${server.httpUrl}/v2`)).json()) as { name: string; version: string; extensions: string[] };
  assert.deepEqual({ name: meta.name, version: meta.version, extensions: meta.extensions }, http);
  assert.ok(meta.extensions.includes('system_shared_memory'));
  const model = await client.modelMetadata('simple');
  assert.deepEqual(model, await (await fetch(`${server.httpUrl}/v2/models/simple`)).json());
});

test('ModelConfig is the HTTP config document as a ModelConfig message', async () => {
  for (const name of ['simple', 'simple_sequence', 'simple_dyna_sequence', 'simple_string', 'add_sub', 'token_counter']) {
    const message = await client.modelConfig(name);
    const json = (await (await fetch(`${server.httpUrl}/v2/models/${name}/config`)).json()) as Record<string, unknown>;
    // proto-loader prints 64-bit integers as strings; Triton's JSON prints most of them as numbers.
    // proto-loader also names the set member of each oneof (`*_choice`); JSON has no such field.
    const normalise = (v: unknown): unknown =>
      JSON.parse(JSON.stringify(v), (k, x: unknown) => {
        if (k.endsWith('_choice') || x === null) return undefined;
        return typeof x === 'string' && /^-?\d+$/.test(x) ? Number(x) : x;
      });
    for (const key of Object.keys(json)) {
      assert.deepEqual(normalise((message as Record<string, unknown>)[key]), normalise(json[key]), `${name}.${key}`);
    }
  }
});

test('ModelStatistics counts gRPC requests in the same statistics as HTTP', async () => {
  const before = (await client.modelStatistics('simple'))[0]!;
  await client.infer('simple', [int32('INPUT0', A), int32('INPUT1', B)]);
  const after = (await client.modelStatistics('simple', '1'))[0]!;
  assert.equal(Number(after.inference_stats.success.count), Number(before.inference_stats.success.count) + 1);
  const http = (await (await fetch(`${server.httpUrl}/v2/models/simple/stats`)).json()) as { model_stats: { inference_count: number }[] };
  assert.equal(Number(after.inference_count), http.model_stats[0]!.inference_count);
  assert.ok((await client.modelStatistics()).length >= 5);
  await rejectsWith(client.modelStatistics('no_such_model'), Status.INVALID_ARGUMENT, /no_such_model/);
});

test('RepositoryIndex lists every model with state and reason', async () => {
  const index = await client.repositoryIndex();
  const simple = index.find((m) => m.name === 'simple');
  assert.deepEqual(simple && { version: simple.version, state: simple.state }, { version: '1', state: 'READY' });
  const identity = index.find((m) => m.name === 'densenet_onnx');
  assert.equal(identity?.state, 'UNAVAILABLE');
  assert.match(identity?.reason ?? '', /version/);
  assert.ok((await client.repositoryIndex(true)).every((m) => m.state === 'READY'));
});

test('ModelInfer: raw contents in, raw_output_contents out, one per output', async () => {
  const result = await client.infer('simple', [int32('INPUT0', A), int32('INPUT1', B)], { id: 'r1' });
  assert.equal(result.id, 'r1');
  assert.equal(result.modelVersion, '1');
  assert.deepEqual(
    result.outputs.map((o) => [o.name, o.datatype, o.shape]),
    [
      ['OUTPUT0', 'INT32', [1, 16]],
      ['OUTPUT1', 'INT32', [1, 16]],
    ],
  );
  assert.deepEqual(
    [...(result.outputs[0]!.data as Int32Array)],
    A.map((a) => a + 1),
  );
  assert.deepEqual(
    [...(result.outputs[1]!.data as Int32Array)],
    A.map((a) => a - 1),
  );
  const raw = await client.rpc<{ raw_output_contents: Buffer[]; outputs: unknown[] }>('ModelInfer', {
    model_name: 'simple',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
    ],
    outputs: [{ name: 'OUTPUT1' }],
    raw_input_contents: [Buffer.from(Int32Array.from(A).buffer), Buffer.from(Int32Array.from(B).buffer)],
  });
  assert.equal(raw.outputs.length, 1);
  assert.equal(raw.raw_output_contents.length, 1);
  assert.equal(raw.raw_output_contents[0]!.byteLength, 64);
});

test('every datatype round-trips raw, and typed where the protocol has a contents field', async () => {
  const samples: Record<(typeof TYPES)[number], Tensor['data']> = {
    BOOL: Uint8Array.of(1, 0, 0, 1),
    UINT8: Uint8Array.of(0, 1, 254, 255),
    UINT16: Uint16Array.of(0, 1, 65534, 65535),
    UINT32: Uint32Array.of(0, 1, 2 ** 32 - 2, 2 ** 32 - 1),
    UINT64: BigUint64Array.of(0n, 1n, 2n ** 64n - 2n, 2n ** 64n - 1n),
    INT8: Int8Array.of(-128, -1, 0, 127),
    INT16: Int16Array.of(-32768, -1, 0, 32767),
    INT32: Int32Array.of(-(2 ** 31), -1, 0, 2 ** 31 - 1),
    INT64: BigInt64Array.of(-(2n ** 63n), -1n, 2n ** 53n + 1n, 2n ** 63n - 1n),
    FP16: Uint16Array.of(0x3800, 0xc000, 0x7bff, 0x8000),
    FP32: Float32Array.of(0.5, -2, 3.25, 1e30),
    FP64: Float64Array.of(0.1, -2, Math.PI, 1e300),
    BF16: Uint16Array.of(0x3f80, 0xbf80, 0x7f80, 0x0001),
    BYTES: ['a', '', 'héllo', '\u0000x'].map((s) => new TextEncoder().encode(s)),
  };
  for (const type of TYPES) {
    const input: Tensor = { name: `IN_${type}`, datatype: type, shape: [2, 2], data: samples[type] };
    const result = await client.infer('echo_types', [input], { outputs: [{ name: `OUT_${type}` }] });
    const out = result.outputs[0]!;
    assert.deepEqual([out.name, out.datatype, out.shape], [`OUT_${type}`, type, [2, 2]], type);
    assert.deepEqual(normalise(out.data), normalise(samples[type]), `${type} raw`);
  }
  const typed: [string, string, unknown[]][] = [
    ['BOOL', 'bool_contents', [true, false, false, true]],
    ['UINT8', 'uint_contents', [0, 1, 254, 255]],
    ['UINT16', 'uint_contents', [0, 1, 65534, 65535]],
    ['UINT32', 'uint_contents', [0, 1, 2 ** 32 - 2, 2 ** 32 - 1]],
    ['UINT64', 'uint64_contents', ['0', '1', '18446744073709551614', '18446744073709551615']],
    ['INT8', 'int_contents', [-128, -1, 0, 127]],
    ['INT16', 'int_contents', [-32768, -1, 0, 32767]],
    ['INT32', 'int_contents', [-(2 ** 31), -1, 0, 2 ** 31 - 1]],
    ['INT64', 'int64_contents', ['-9223372036854775808', '-1', '9007199254740993', '9223372036854775807']],
    ['FP32', 'fp32_contents', [0.5, -2, 3.25, 1e30]],
    ['FP64', 'fp64_contents', [0.1, -2, Math.PI, 1e300]],
    ['BYTES', 'bytes_contents', ['a', '', 'héllo', '\u0000x'].map((s) => Buffer.from(s))],
  ];
  for (const [type, field, values] of typed) {
    const answer = await client.rpc<{ raw_output_contents: Buffer[] }>('ModelInfer', {
      model_name: 'echo_types',
      inputs: [{ name: `IN_${type}`, datatype: type, shape: [2, 2], contents: { [field]: values } }],
      outputs: [{ name: `OUT_${type}` }],
    });
    const { parseBinaryTensorData } = await import('../../src/core/codecs/kserve-binary-tensor.ts');
    const data = parseBinaryTensorData(answer.raw_output_contents[0]!, { name: 'x', datatype: type as Tensor['datatype'], shape: [2, 2] });
    assert.deepEqual(normalise(data), normalise(samples[type as (typeof TYPES)[number]]), `${type} typed`);
  }
});

function normalise(data: Tensor['data']): unknown[] {
  return Array.isArray(data) ? data.map((b) => Buffer.from(b).toString('hex')) : Array.from(data as ArrayLike<number | bigint>, (v) => String(v));
}

test("errors: Triton's status codes, the same messages as HTTP", async () => {
  const httpError = async (path: string, body: unknown) =>
    ((await (await fetch(`${server.httpUrl}${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as { error: string }).error;
  const unknownModel = await httpError('/v2/models/no_such_model/infer', { inputs: [] });
  const missingInput = await httpError('/v2/models/simple/infer', { inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: A }] });
  await rejectsWith(client.infer('no_such_model', [int32('INPUT0', A)]), Status.INVALID_ARGUMENT, unknownModel);
  await rejectsWith(client.modelMetadata('no_such_model'), Status.INVALID_ARGUMENT, /no_such_model/);
  await rejectsWith(client.modelConfig('densenet_onnx'), Status.NOT_FOUND, /densenet_onnx' has no available versions/);
  await rejectsWith(client.infer('simple', [int32('INPUT0', A)]), Status.INVALID_ARGUMENT, missingInput);
  await rejectsWith(
    client.infer('simple', [int32('INPUT0', A), { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) }]),
    Status.INVALID_ARGUMENT,
    /INPUT1/,
  );
  await rejectsWith(
    client.infer('simple', [int32('INPUT0', A), int32('INPUT1', B)], { version: 'x' }),
    Status.INVALID_ARGUMENT,
    /failed to get model version from specified version string 'x'/,
  );
  await rejectsWith(
    client.rpc('ModelInfer', {
      model_name: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], contents: { int_contents: A } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
      ],
      raw_input_contents: [Buffer.alloc(64)],
    }),
    Status.INVALID_ARGUMENT,
    "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'",
  );
  await rejectsWith(
    client.rpc('ModelInfer', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16] }] }),
    Status.INVALID_ARGUMENT,
    "unable to find data for input tensor 'INPUT0' for model 'simple' in request.",
  );
  await rejectsWith(
    client.rpc('ModelInfer', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], contents: { fp32_contents: [1] } }] }),
    Status.INVALID_ARGUMENT,
    "unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple' of type 'FP32', expected datatype 'INT32'",
  );
  await rejectsWith(
    client.rpc('ModelInfer', { model_name: 'simple', parameters: { triton_x: { bool_param: true } }, inputs: [] }),
    Status.INVALID_ARGUMENT,
    /reserved for Triton usage/,
  );
  await rejectsWith(
    client.rpc('ModelInfer', { model_name: 'simple', parameters: { priority: { string_param: 'x' } }, inputs: [] }),
    Status.INVALID_ARGUMENT,
    "invalid value type for 'priority' parameter, expected int64_param or uint64_param.",
  );
  await rejectsWith(client.infer('simple_sequence', [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: Int32Array.of(1) }]), Status.INVALID_ARGUMENT, /correlation ID/);
});

test('TraceSetting and LogSettings are stored and answered as Triton answers them', async () => {
  const trace = await client.rpc<{ settings: Record<string, { value: string[] }> }>('TraceSetting', {});
  assert.deepEqual(trace.settings['trace_level']?.value, ['OFF']);
  assert.deepEqual(trace.settings['trace_rate']?.value, ['1000']);
  // Without a trace file (Triton mode), tracing cannot be turned on, as in Triton; the other values can change.
  await rejectsWith(
    client.rpc('TraceSetting', { settings: { trace_level: { value: ['TIMESTAMPS'] } } }),
    Status.INVALID_ARGUMENT,
    'Attempting to set invalid trace setting :trace file name is not given',
  );
  const updated = await client.rpc<{ settings: Record<string, { value: string[] }> }>('TraceSetting', { settings: { trace_rate: { value: ['50'] } } });
  assert.deepEqual([updated.settings['trace_rate']?.value, updated.settings['trace_level']?.value], [['50'], ['OFF']]);
  const model = await client.rpc<{ settings: Record<string, { value: string[] }> }>('TraceSetting', { model_name: 'simple', settings: { trace_count: { value: ['7'] } } });
  assert.deepEqual([model.settings['trace_count']?.value, model.settings['trace_rate']?.value], [['7'], ['50']]);
  await rejectsWith(
    client.rpc('TraceSetting', { settings: { trace_file: { value: ['/tmp/x'] } } }),
    Status.UNIMPLEMENTED,
    'trace file location can not be updated through network protocol',
  );
  await rejectsWith(client.rpc('TraceSetting', { model_name: 'no_such_model' }), Status.INVALID_ARGUMENT, 'Request for unknown model : no_such_model');
  await rejectsWith(client.rpc('TraceSetting', { settings: { trace_rate: { value: ['fast'] } } }), Status.INVALID_ARGUMENT, "Unable to parse 'trace_rate', got: fast");

  const logs = await client.rpc<{ settings: Record<string, Record<string, unknown>> }>('LogSettings', {
    settings: { log_verbose_level: { uint32_param: 2 }, log_info: { bool_param: false } },
  });
  assert.equal(logs.settings['log_verbose_level']?.['uint32_param'], 2);
  assert.equal(logs.settings['log_info']?.['bool_param'], false);
  assert.equal(logs.settings['log_format']?.['string_param'], 'default');
  await rejectsWith(client.rpc('LogSettings', { settings: { log_info: { string_param: 'yes' } } }), Status.INVALID_ARGUMENT, "expect boolean for 'log_info'");
  await rejectsWith(client.rpc('LogSettings', { settings: { log_format: { string_param: 'xml' } } }), Status.INVALID_ARGUMENT, 'invalid argument for log_format, got: xml');
});

test('CUDA shared memory answers as a tritonserver without GPUs', async () => {
  assert.deepEqual((await client.rpc<{ regions: object }>('CudaSharedMemoryStatus', {})).regions, {});
  await rejectsWith(client.rpc('CudaSharedMemoryStatus', { name: 'gpu0' }), Status.NOT_FOUND, "Unable to find cuda shared memory region: 'gpu0'");
  await rejectsWith(
    client.rpc('CudaSharedMemoryRegister', { name: 'gpu0', raw_handle: Buffer.alloc(64), device_id: 0, byte_size: 64 }),
    Status.INVALID_ARGUMENT,
    "failed to register CUDA shared memory region: 'gpu0', GPUs not supported",
  );
  await client.rpc('CudaSharedMemoryUnregister', { name: 'gpu0' });
});

test('malformed messages get an error status, never a crash, and the server keeps serving', async () => {
  const raw = new Client(server.grpcUrl!, credentials.createInsecure());
  const send = (bytes: Buffer) =>
    new Promise<{ code: number; details: string }>((resolve) => {
      raw.makeUnaryRequest(
        '/inference.GRPCInferenceService/ModelInfer',
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        new Metadata(),
        (err) => resolve(err as unknown as { code: number; details: string }),
      );
    });
  // protobufjs decodes some broken encodings leniently (a string cut short is read as far as it goes), so
  // each of these is refused either by the decoder or by the request checks that follow it.
  const broken = [
    [0x0a, 0x0a, 0x61, 0x62],
    [0x0f, 0x01],
    [0x2a, 0x05, 0x0a],
    [0x22, 0x02, 0x12, 0x09, 0x46],
    [0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
  ];
  for (const bytes of broken) {
    const err = await send(Buffer.from(bytes));
    assert.ok(err && [Status.INTERNAL, Status.INVALID_ARGUMENT, Status.NOT_FOUND].includes(err.code), `${bytes}: ${err?.code} ${err?.details}`);
  }
  const name = [0x0a, 0x06, ...Buffer.from('simple')];
  const emptyParameter = Buffer.from([...name, 0x22, 0x04, 0x0a, 0x02, 0x49, 0x4e]); // parameters { key: 'IN' } with no value
  const undecodable = await send(emptyParameter);
  assert.deepEqual([undecodable.code, undecodable.details], [Status.INTERNAL, 'Error deserializing request']);
  const input = Buffer.from([...name, 0x2a, 0x04, 0x0a, 0x02, 0x49, 0x4e]); // inputs { name: 'IN' }: no datatype, no data
  assert.equal((await send(input)).code, Status.INVALID_ARGUMENT);
  raw.close();
  assert.equal((await client.infer('simple', [int32('INPUT0', A), int32('INPUT1', B)])).outputs.length, 2);
});

test('messages beyond grpc-js default 4 MiB limit pass both ways', async () => {
  const n = 2 * 1024 * 1024; // 8 MiB of FP32 each way
  const data = new Float32Array(n).map((_, i) => i % 1000);
  const result = await client.infer('echo_types', [{ name: 'IN_FP32', datatype: 'FP32', shape: [2, n / 2], data }], { outputs: [{ name: 'OUT_FP32' }] });
  const out = result.outputs[0]!.data as Float32Array;
  assert.equal(out.length, n);
  assert.equal(out[n - 1], data[n - 1]);
});
