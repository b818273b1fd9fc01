// The TraceSetting RPC on a real server in OpenTelemetry mode: Triton's response map (the mode's settings as
// strings, the resources gathered under one key), updates per model and globally, and its gRPC refusals.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { status as Status } from '@grpc/grpc-js';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

let server: HerdServer;
let client: KserveGrpcClient;

before(async () => {
  server = await startTestServer({
    repositories: [TRITON_REPOSITORY],
    controlMode: 'explicit',
    loadModel: ['simple'],
    trace: {
      mode: 'opentelemetry',
      level: ['TIMESTAMPS'],
      rate: 0,
      opentelemetry: { url: 'localhost:4318/v1/traces', resource: { a: '1', b: '2' }, bsp_schedule_delay: 0 },
    },
  });
  client = new KserveGrpcClient({ url: server.grpcUrl as string });
});
after(async () => {
  client?.close();
  await server?.close();
});

type Answer = { settings: Record<string, { value: string[] }> };
const values = (answer: Answer) => Object.fromEntries(Object.entries(answer.settings).map(([k, v]) => [k, v.value]));

async function rejectsWith(promise: Promise<unknown>, code: number, message: string): Promise<void> {
  await assert.rejects(promise, (err: { grpcCode: number; message: string }) => {
    assert.deepEqual([err.grpcCode, err.message], [code, message]);
    return true;
  });
}

test("OpenTelemetry mode over gRPC: Triton's settings map, rate 0 as started (propagated requests only)", async () => {
  assert.deepEqual(values(await client.rpc<Answer>('TraceSetting', {})), {
    trace_level: ['TIMESTAMPS'],
    trace_rate: ['0'],
    trace_count: ['-1'],
    trace_mode: ['opentelemetry'],
    url: ['localhost:4318/v1/traces'],
    resource: ['a=1', 'b=2'],
    bsp_max_queue_size: ['2048'],
    bsp_schedule_delay: ['0'],
    bsp_max_export_batch_size: ['512'],
  });
});

test('updates over gRPC: a model override, [] clearing it, the global setting, and refusals', async () => {
  const model = values(await client.rpc<Answer>('TraceSetting', { model_name: 'simple', settings: { trace_rate: { value: ['3'] }, trace_count: { value: ['4'] } } }));
  assert.deepEqual([model['trace_rate'], model['trace_count'], model['trace_file']], [['3'], ['4'], undefined]);
  const cleared = values(await client.rpc<Answer>('TraceSetting', { model_name: 'simple', settings: { trace_rate: { value: [] }, trace_count: { value: [] } } }));
  assert.deepEqual([cleared['trace_rate'], cleared['trace_count']], [['0'], ['-1']], 'back to the global setting');
  await rejectsWith(
    client.rpc('TraceSetting', { settings: { trace_level: { value: ['TENSORS'] } } }),
    Status.INVALID_ARGUMENT,
    'Attempting to set invalid trace setting :sample rate must be non-zero',
  );
  const updated = values(await client.rpc<Answer>('TraceSetting', { settings: { trace_rate: { value: ['2'] }, trace_level: { value: ['TENSORS', 'TIMESTAMPS'] } } }));
  assert.deepEqual([updated['trace_rate'], updated['trace_level']], [['2'], ['TIMESTAMPS', 'TENSORS']]);
  await rejectsWith(
    client.rpc('TraceSetting', { settings: { trace_count: { value: ['-2'] } } }),
    Status.INVALID_ARGUMENT,
    "Unable to parse 'trace_count'. Expecting value >= -1, got: -2",
  );
  await rejectsWith(
    client.rpc('TraceSetting', { settings: { trace_file: { value: ['x.json'] } } }),
    Status.UNIMPLEMENTED,
    'trace file location can not be updated through network protocol',
  );
});
