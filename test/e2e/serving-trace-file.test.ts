// Triton mode's trace file from the real server (`--trace-config triton,file=…`): the JSON tracer.cc writes,
// in the shape Triton's own qa/common/trace_summary.py reads, over HTTP, gRPC and an ensemble.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { EXAMPLE_REPOSITORY, postJson, startTestServer, TRITON_REPOSITORY } from './start-test-server.ts';

const data = Array.from({ length: 16 }, (_, i) => i);
const inputs = [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
];

type TraceObject = { id: number; model_name?: string; model_version?: number; request_id?: string; parent_id?: number; timestamps?: { name: string; ns: number }[] };

test('Triton mode writes the JSON trace file Triton writes: frontend stamps, model header, Triton timestamps', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-trace-file-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'trace.json');
  const server = await startTestServer({
    repositories: [TRITON_REPOSITORY, resolve('test/fixtures/python_models'), EXAMPLE_REPOSITORY],
    controlMode: 'explicit',
    loadModel: ['simple', 'add_sub', 'add_sub_ensemble'],
    strictReadiness: false,
    trace: { mode: 'triton', level: ['TIMESTAMPS'], rate: 1, triton: { file } },
  });
  let closed = false;
  t.after(async () => {
    if (!closed) await server.close();
  });
  assert.equal((await postJson(`${server.httpUrl}/v2/models/simple/infer`, { id: 'h1', inputs })).status, 200);
  assert.equal((await postJson(`${server.httpUrl}/v2/models/add_sub_ensemble/infer`, { id: 'e1', inputs })).status, 200);
  const grpc = new KserveGrpcClient({ url: server.grpcUrl as string });
  await grpc.infer(
    'simple',
    inputs.map((i) => ({ ...i, datatype: 'INT32' as const, data: Int32Array.from(i.data) })),
    { id: 'g1' },
  );
  grpc.close();
  // log-frequency 0: the traces are written at shutdown, as one array.
  await server.close();
  closed = true;

  const objects = JSON.parse(readFileSync(file, 'utf8')) as TraceObject[];
  const headers = objects.filter((o) => o.model_name !== undefined);
  assert.deepEqual(
    headers.map((h) => [h.model_name, h.model_version, h.request_id, h.parent_id]),
    [
      ['simple', 1, 'h1', undefined],
      ['add_sub_ensemble', 1, 'e1', undefined],
      ['add_sub', 1, 'e1', headers[1]?.id],
      ['simple', 1, 'g1', undefined],
    ],
  );
  const stamps = (id: number) => objects.filter((o) => o.id === id && o.timestamps).map((o) => o.timestamps?.[0]?.name);
  const [http, ensemble, step, viaGrpc] = headers.map((h) => h.id);
  assert.deepEqual(stamps(http as number), [
    'HTTP_RECV_START',
    'HTTP_RECV_END',
    'REQUEST_START',
    'QUEUE_START',
    'COMPUTE_START',
    'COMPUTE_INPUT_END',
    'COMPUTE_OUTPUT_START',
    'COMPUTE_END',
    'REQUEST_END',
    'INFER_RESPONSE_COMPLETE',
    'HTTP_SEND_START',
    'HTTP_SEND_END',
  ]);
  assert.deepEqual(stamps(ensemble as number), ['HTTP_RECV_START', 'HTTP_RECV_END', 'REQUEST_START', 'REQUEST_END', 'INFER_RESPONSE_COMPLETE', 'HTTP_SEND_START', 'HTTP_SEND_END']);
  assert.deepEqual(stamps(step as number), ['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END']);
  assert.deepEqual(stamps(viaGrpc as number).slice(0, 2), ['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END']);
  // The model header comes at REQUEST_START, after the frontend's first stamps (as tracer.cc streams them).
  const headerAt = objects.indexOf(headers[0] as TraceObject);
  assert.equal(objects[headerAt + 1]?.timestamps?.[0]?.name, 'REQUEST_START');
  // Monotonic nanoseconds, in order.
  const ns = objects.filter((o) => o.id === http && o.timestamps).map((o) => o.timestamps?.[0]?.ns as number);
  assert.deepEqual(
    ns,
    [...ns].sort((a, b) => a - b),
  );

  // Triton's own qa/common/trace_summary.py read this file's format by hand beside Herd (fetched code is not committed):
  // the grouping by id and the timestamp names above are what it reads.
});
