// Model control over gRPC in explicit mode: RepositoryIndex, RepositoryModelLoad (with a config
// override), RepositoryModelUnload, as tritonclient's simple_grpc_model_control example drives them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { status as Status } from '@grpc/grpc-js';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

test('explicit mode: index, load with and without override, unload, errors', async () => {
  const server = await startTestServer({ repositories: [TRITON_REPOSITORY], controlMode: 'explicit' });
  const client = new KserveGrpcClient({ url: server.grpcUrl! });
  try {
    const index = await client.repositoryIndex();
    assert.equal(index.length, 8, 'every model of the example repository, none loaded');
    assert.ok(index.every((m) => m.state === '' && m.version === ''));
    assert.equal(await client.modelReady('simple'), false);

    await client.loadModel('simple');
    assert.equal(await client.modelReady('simple'), true);
    assert.equal(Number((await client.modelConfig('simple'))['max_batch_size']), 8);

    await assert.rejects(client.loadModel('simple', { config: '"parameters": {"config": {{"max_batch_size": "16"}}}' }), (err: { grpcCode: number; message: string }) => {
      assert.equal(err.grpcCode, Status.INVALID_ARGUMENT);
      assert.match(err.message, /failed to load/);
      return true;
    });
    await client.loadModel('simple', { config: '{"max_batch_size":"16"}' });
    assert.equal(Number((await client.modelConfig('simple'))['max_batch_size']), 16);

    await client.unloadModel('simple');
    assert.equal(await client.modelReady('simple'), false);
    assert.equal((await client.repositoryIndex()).find((m) => m.name === 'simple')?.state, 'UNAVAILABLE');

    await assert.rejects(client.loadModel('wrong_model_name'), /failed to load 'wrong_model_name'/);
    await assert.rejects(
      client.rpc('RepositoryModelLoad', { model_name: 'simple', parameters: { 'file:1/model.onnx': { bytes_param: Buffer.from('x') } } }),
      (err: { grpcCode: number }) => err.grpcCode === Status.UNIMPLEMENTED,
    );
    await assert.rejects(
      client.rpc('RepositoryModelLoad', { model_name: 'simple', parameters: { config: { bool_param: true } } }),
      (err: { grpcCode: number }) => err.grpcCode === Status.INVALID_ARGUMENT,
    );
  } finally {
    client.close();
    await server.close();
  }
});
