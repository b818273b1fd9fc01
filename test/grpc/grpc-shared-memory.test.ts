// System shared memory over gRPC and the HTTP region routes: regions are files under /dev/shm made by the
// client (as tritonclient.utils.shared_memory makes them), inputs read from and outputs written into them.
import assert from 'node:assert/strict';
import { existsSync, openSync, closeSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { status as Status } from '@grpc/grpc-js';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

const KEY = `/herd_grpc_test_${process.pid}`;
const FILE = `/dev/shm${KEY}`;
const SIZE = 256;

let server: HerdServer;
let client: KserveGrpcClient;

before(async () => {
  server = await startTestServer({ repositories: [TRITON_REPOSITORY], strictReadiness: false });
  client = new KserveGrpcClient({ url: server.grpcUrl! });
  writeFileSync(FILE, Buffer.alloc(SIZE));
});
after(async () => {
  client?.close();
  await server?.close();
  if (existsSync(FILE)) rmSync(FILE);
});

const shmParams = (region: string, offset: number, size: number) => ({
  shared_memory_region: { string_param: region },
  shared_memory_offset: { int64_param: offset },
  shared_memory_byte_size: { int64_param: size },
});
const A = Int32Array.from({ length: 16 }, (_, i) => i);
const B = Int32Array.from({ length: 16 }, () => 1);

async function rejectsWith(promise: Promise<unknown>, code: number, message: string): Promise<void> {
  await assert.rejects(promise, (err: { grpcCode: number; message: string }) => {
    assert.deepEqual([err.grpcCode, err.message], [code, message]);
    return true;
  });
}

test('register, infer with inputs and outputs in a region, status, unregister', { skip: !existsSync('/dev/shm') }, async () => {
  const fd = openSync(FILE, 'r+');
  writeSync(fd, Buffer.from(A.buffer), 0, 64, 0);
  writeSync(fd, Buffer.from(B.buffer), 0, 64, 64);
  await client.registerSystemSharedMemory('in', KEY, 128, 0);
  await client.registerSystemSharedMemory('out', KEY, 128, 128);
  const status = await client.systemSharedMemoryStatus();
  assert.deepEqual(Object.keys(status).sort(), ['in', 'out']);
  assert.deepEqual({ ...status['out'] }, { name: 'out', key: KEY, offset: '128', byte_size: '128' });

  const answer = await client.rpc<{ raw_output_contents: Buffer[]; outputs: { name: string }[] }>('ModelInfer', {
    model_name: 'simple',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: shmParams('in', 0, 64) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: shmParams('in', 64, 64) },
    ],
    outputs: [
      { name: 'OUTPUT0', parameters: shmParams('out', 0, 64) },
      { name: 'OUTPUT1', parameters: shmParams('out', 64, 64) },
    ],
  });
  assert.deepEqual(
    answer.outputs.map((o) => o.name),
    ['OUTPUT0', 'OUTPUT1'],
  );
  assert.deepEqual(
    answer.raw_output_contents.map((b) => b.byteLength),
    [0, 0],
    'one empty raw entry per output in a region',
  );
  const out = Buffer.alloc(128);
  readSync(fd, out, 0, 128, 128);
  closeSync(fd);
  const sum = new Int32Array(out.buffer, out.byteOffset, 16);
  const diff = new Int32Array(out.buffer, out.byteOffset + 64, 16);
  assert.deepEqual(
    [...sum],
    [...A].map((a) => a + 1),
  );
  assert.deepEqual(
    [...diff],
    [...A].map((a) => a - 1),
  );

  // The HTTP routes see the same registry.
  const overHttp = await (await fetch(`${server.httpUrl}/v2/systemsharedmemory/region/in/status`)).json();
  assert.deepEqual(overHttp, [{ name: 'in', key: KEY, offset: 0, byte_size: 128 }]);
  await client.unregisterSystemSharedMemory('in');
  assert.deepEqual(Object.keys(await client.systemSharedMemoryStatus()), ['out']);
  await client.unregisterSystemSharedMemory();
  assert.deepEqual(await client.systemSharedMemoryStatus(), {});
});

test("bad regions, offsets past the end and unknown names get Triton's errors", { skip: !existsSync('/dev/shm') }, async () => {
  await client.registerSystemSharedMemory('r', KEY, 64, 0);
  await rejectsWith(client.registerSystemSharedMemory('r', KEY, 64, 0), Status.ALREADY_EXISTS, "shared memory region 'r' already in manager");
  await rejectsWith(client.registerSystemSharedMemory('big', KEY, SIZE + 1, 0), Status.INVALID_ARGUMENT, "failed to register shared memory region 'big': invalid args");
  await rejectsWith(client.registerSystemSharedMemory('nokey', '/herd_no_such_key', 8, 0), Status.INTERNAL, "Unable to open shared memory region: '/herd_no_such_key'");
  await rejectsWith(
    client.registerSystemSharedMemory('py', '/triton_python_backend_shm_region_1', 8, 0),
    Status.INVALID_ARGUMENT,
    "cannot register shared memory region 'py' with key '/triton_python_backend_shm_region_1' as the key contains the reserved prefix 'triton_python_backend_shm_region_'",
  );
  await rejectsWith(client.systemSharedMemoryStatus('nope'), Status.NOT_FOUND, "Unable to find system shared memory region: 'nope'");
  const infer = (params: object) =>
    client.rpc('ModelInfer', {
      model_name: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: params },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: shmParams('r', 0, 64) },
      ],
    });
  await rejectsWith(infer(shmParams('nope', 0, 64)), Status.NOT_FOUND, "Unable to find shared memory region: 'nope'");
  await rejectsWith(infer(shmParams('r', 64, 4)), Status.INVALID_ARGUMENT, "Invalid offset for shared memory region: 'r'");
  await rejectsWith(infer(shmParams('r', 8, 64)), Status.INVALID_ARGUMENT, "Invalid offset + byte size for shared memory region: 'r'");
  await rejectsWith(infer(shmParams('r', 0, 32)), Status.INVALID_ARGUMENT, "input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 32");
  await rejectsWith(
    infer({ shared_memory_region: { string_param: 'r' } }),
    Status.INVALID_ARGUMENT,
    "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'",
  );
  await rejectsWith(
    infer({ shared_memory_offset: { int64_param: 0 } }),
    Status.INVALID_ARGUMENT,
    "'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor 'INPUT0'",
  );
  await rejectsWith(
    client.rpc('ModelInfer', {
      model_name: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: shmParams('r', 0, 64) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: shmParams('r', 0, 64) },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: shmParams('r', 0, 16) }],
    }),
    Status.INTERNAL,
    "shared memory size specified with the request for output 'OUTPUT0' (16 bytes) should be at least 64 bytes to hold the results",
  );
  await client.unregisterSystemSharedMemory('never-registered');
  await client.unregisterSystemSharedMemory('r');
});

test('the HTTP routes register, report and unregister, with KServe errors', { skip: !existsSync('/dev/shm') }, async () => {
  const post = (path: string, body?: unknown) => fetch(`${server.httpUrl}${path}`, { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
  assert.equal((await post('/v2/systemsharedmemory/region/h/register', { key: KEY, offset: 0, byte_size: 32 })).status, 200);
  const dup = await post('/v2/systemsharedmemory/region/h/register', { key: KEY, offset: 0, byte_size: 32 });
  assert.deepEqual([dup.status, await dup.json()], [400, { error: "shared memory region 'h' already in manager" }]);
  const noSize = await post('/v2/systemsharedmemory/region/x/register', { key: KEY });
  assert.deepEqual([noSize.status, await noSize.json()], [400, { error: "Shared memory register request has no 'byte_size' field" }]);
  assert.deepEqual(await (await fetch(`${server.httpUrl}/v2/systemsharedmemory/status`)).json(), [{ name: 'h', key: KEY, offset: 0, byte_size: 32 }]);
  assert.deepEqual((await client.systemSharedMemoryStatus())['h']?.byte_size, '32', 'gRPC sees the HTTP registration');
  assert.equal((await post('/v2/systemsharedmemory/unregister')).status, 200);
  assert.deepEqual(await (await fetch(`${server.httpUrl}/v2/systemsharedmemory/status`)).json(), []);
  const missing = await fetch(`${server.httpUrl}/v2/systemsharedmemory/region/h/status`);
  assert.deepEqual([missing.status, await missing.json()], [404, { error: "Unable to find system shared memory region: 'h'" }]);
  const cuda = await post('/v2/cudasharedmemory/region/g/register', { raw_handle: { b64: '' }, device_id: 0, byte_size: 8 });
  assert.deepEqual([cuda.status, await cuda.json()], [400, { error: "failed to register CUDA shared memory region: 'g', GPUs not supported" }]);
  assert.deepEqual(await (await fetch(`${server.httpUrl}/v2/cudasharedmemory/status`)).json(), []);
});

test('HTTP infer reads inputs from and writes outputs into regions, as tritonclient.http sends them', { skip: !existsSync('/dev/shm') }, async () => {
  const fd = openSync(FILE, 'r+');
  writeSync(fd, Buffer.from(A.buffer), 0, 64, 0);
  writeSync(fd, Buffer.from(B.buffer), 0, 64, 64);
  writeSync(fd, Buffer.alloc(128), 0, 128, 128);
  const post = (path: string, body: unknown) => fetch(`${server.httpUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
  assert.equal((await post('/v2/systemsharedmemory/region/hin/register', { key: KEY, offset: 0, byte_size: 128 })).status, 200);
  assert.equal((await post('/v2/systemsharedmemory/region/hout/register', { key: KEY, offset: 128, byte_size: 128 })).status, 200);
  const region = (name: string, offset: number, size: number) => ({ shared_memory_region: name, shared_memory_offset: offset, shared_memory_byte_size: size });
  const res = await post('/v2/models/simple/infer', {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: region('hin', 0, 64) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: region('hin', 64, 64) },
    ],
    outputs: [
      { name: 'OUTPUT0', parameters: region('hout', 0, 64) },
      { name: 'OUTPUT1', parameters: region('hout', 64, 64) },
    ],
  });
  assert.equal(res.status, 200);
  assert.deepEqual(((await res.json()) as { outputs: unknown[] }).outputs, [
    { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16] },
    { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16] },
  ]);
  const out = Buffer.alloc(128);
  readSync(fd, out, 0, 128, 128);
  closeSync(fd);
  assert.deepEqual(
    [...new Int32Array(out.buffer, out.byteOffset, 16)],
    [...A].map((a) => a + 1),
  );
  assert.deepEqual(
    [...new Int32Array(out.buffer, out.byteOffset + 64, 16)],
    [...A].map((a) => a - 1),
  );
  const bad = await post('/v2/models/simple/infer', {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: region('nope', 0, 64) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: region('hin', 64, 64) },
    ],
  });
  assert.deepEqual([bad.status, await bad.json()], [404, { error: "Unable to find shared memory region: 'nope'" }]);
  assert.equal((await post('/v2/systemsharedmemory/unregister', {})).status, 200);
});
