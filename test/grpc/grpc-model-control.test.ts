// Model control over gRPC in explicit mode: RepositoryIndex, RepositoryModelLoad (with a config
// override, with model files), RepositoryModelUnload, as tritonclient's simple_grpc_model_control example drives them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { status as Status } from '@grpc/grpc-js';
import { KserveGrpcClient } from '../../src/client/index.ts';
type Message = Record<string, unknown>;
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

type GrpcError = { grpcCode: number; message: string };

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

    await assert.rejects(client.loadModel('simple', { config: '"parameters": {"config": {{"max_batch_size": "16"}}}' }), (err: GrpcError) => {
      assert.equal(err.grpcCode, Status.INVALID_ARGUMENT);
      assert.match(err.message, /failed to load/);
      return true;
    });
    await client.loadModel('simple', { config: '{"max_batch_size":"16"}' });
    assert.equal(Number((await client.modelConfig('simple'))['max_batch_size']), 16);

    await client.unloadModel('simple');
    assert.equal(await client.modelReady('simple'), false);
    assert.equal((await client.repositoryIndex()).find((m) => m.name === 'simple')?.state, 'UNAVAILABLE');

    // The stock example's NAME_MAX case: Triton's status and words, and the server stays live.
    await assert.rejects(client.loadModel('simple', { config: '{}', files: { [`file:${'A'.repeat(256)}`]: Buffer.from('a') } }), (err: GrpcError) => {
      assert.equal(err.grpcCode, Status.INTERNAL);
      assert.match(err.message, /failed to load 'simple', failed to poll from model repository: Invalid file parameter 'A{256}': File name too long/);
      return true;
    });
    assert.equal(await client.serverLive(), true);

    await assert.rejects(client.loadModel('wrong_model_name'), (err: GrpcError) => {
      assert.equal(err.grpcCode, Status.INTERNAL);
      assert.match(err.message, /^failed to load 'wrong_model_name', failed to poll from model repository: model not found in any model repository$/);
      return true;
    });
    const refusals: [Message, number, RegExp][] = [
      [{ 'file:1/model.onnx': { string_param: 'x' } }, Status.INVALID_ARGUMENT, /^invalid value type for load parameter 'file:1\/model.onnx', expected bytes_param\.$/],
      [{ config: { bool_param: true } }, Status.INVALID_ARGUMENT, /^invalid value type for load parameter 'config', expected string_param\.$/],
      [{ other: { string_param: 'x' } }, Status.INVALID_ARGUMENT, /^unrecognized load parameter 'other'\.$/],
      [
        { 'file:1/model.onnx': { bytes_param: Buffer.from('x') } },
        Status.INTERNAL,
        /failed to poll from model repository: Load parameter 'config' must be specified for model file override$/,
      ],
      [
        { config: { string_param: '{}' }, 'file:../escape/1/model.onnx': { bytes_param: Buffer.from('x') } },
        Status.INTERNAL,
        /Invalid file parameter 'file:..\/escape\/1\/model.onnx' with normalized path '..\/escape\/1\/model.onnx' must stay within model directory\.$/,
      ],
      [
        { config: { string_param: '{}' }, 'file:/etc/passwd': { bytes_param: Buffer.from('x') } },
        Status.INTERNAL,
        /with normalized path '\/etc\/passwd' must stay within model directory\.$/,
      ],
    ];
    for (const [parameters, code, message] of refusals) {
      await assert.rejects(client.rpc('RepositoryModelLoad', { model_name: 'simple', parameters }), (err: GrpcError) => {
        assert.equal(err.grpcCode, code, err.message);
        assert.match(err.message, message);
        return true;
      });
    }
    await assert.rejects(client.loadModel('../simple'), /invalid model name '..\/simple', model name must not contain path traversal characters/);
    assert.equal(await client.modelReady('simple'), false, 'no refused load touched the model');
  } finally {
    client.close();
    await server.close();
  }
});

test('load with files: the model is built from the bytes sent, under any name', async () => {
  const server = await startTestServer({ repositories: [TRITON_REPOSITORY], controlMode: 'explicit' });
  const client = new KserveGrpcClient({ url: server.grpcUrl! });
  const onnx = readFileSync(join(TRITON_REPOSITORY, 'simple', '1', 'model.onnx'));
  try {
    const config = JSON.stringify({ backend: 'onnxruntime', max_batch_size: 8 });
    await client.loadModel('simple_sent', { config, files: { 'file:1/model.onnx': onnx } });
    assert.equal(await client.modelReady('simple_sent'), true);
    const values = Int32Array.from({ length: 16 }, (_, i) => i);
    const result = await client.infer('simple_sent', [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: values },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: values },
    ]);
    assert.deepEqual(
      [...(result.outputs.find((o) => o.name === 'OUTPUT0')!.data as Int32Array)],
      [...values].map((v) => v * 2),
    );
    assert.ok((await client.repositoryIndex()).some((m) => m.name === 'simple_sent' && m.state === 'READY'));

    // A file the backend cannot read fails the load with the backend's reason, and no server path in it.
    await assert.rejects(client.loadModel('broken_sent', { config, files: { 'file:1/model.onnx': Buffer.from('not onnx') } }), (err: GrpcError) => {
      assert.equal(err.grpcCode, Status.INVALID_ARGUMENT);
      assert.match(err.message, /^failed to load 'broken_sent': /);
      assert.doesNotMatch(err.message, /herd-model-files-/);
      return true;
    });
    await client.unloadModel('simple_sent');
    assert.equal(await client.modelReady('simple_sent'), false);
  } finally {
    client.close();
    await server.close();
  }
});
