// The drain's first step in process: after beginDrain() readiness fails on every transport (HTTP 503
// `Server exiting`, gRPC ServerReady false, grpc.health.v1 NOT_SERVING) while liveness and inference go on,
// and each HTTP answer closes its connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { postJson, request, startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

test('beginDrain: not ready on HTTP and gRPC, still live and answering, Connection: close on answers', async (t) => {
  const server = await startTestServer({ repositories: [TRITON_REPOSITORY], controlMode: 'explicit', loadModel: ['simple'] });
  t.after(() => server.close());
  const client = new KserveGrpcClient({ url: server.grpcUrl as string });
  t.after(() => client.close());
  assert.equal(await client.serverReady(), true);
  assert.equal((await request(`${server.httpUrl}/v2/health/ready`)).status, 200);

  server.beginDrain();
  const ready = await request(`${server.httpUrl}/v2/health/ready`);
  assert.equal(ready.status, 503);
  assert.deepEqual(ready.json(), { error: 'Server exiting' });
  assert.equal(await client.serverReady(), false);
  assert.equal(await client.serverLive(), true);
  const live = await request(`${server.httpUrl}/v2/health/live`);
  assert.equal(live.status, 200);
  const infer = await postJson(`${server.httpUrl}/v2/models/simple/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(2) },
    ],
  });
  assert.equal(infer.status, 200);
  assert.equal(infer.headers.get('connection'), 'close');
});
