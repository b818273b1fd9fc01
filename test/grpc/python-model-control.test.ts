// tritonclient's simple_grpc_model_control.py sequence from Python (python-model-control.py), including the
// load with a file name past NAME_MAX that must be refused with Triton's status while the server stays live.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';
import { generatePythonGrpcStubs } from '../helpers/python-grpc-stubs.ts';
import { TEST_PYTHON } from '../python-interpreter.ts';

const run = promisify(execFile);

test('a Python client runs the stock model-control sequence, with file overrides', async () => {
  const stubs = await generatePythonGrpcStubs();
  const server = await startTestServer({ repositories: [TRITON_REPOSITORY], controlMode: 'explicit' });
  try {
    const args = [resolve('test/grpc/python-model-control.py'), stubs, server.grpcUrl as string, join(TRITON_REPOSITORY, 'simple', '1', 'model.onnx')];
    // Asynchronously: the server answering it lives in this process.
    const { stdout } = await run(TEST_PYTHON, args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } }).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`python-model-control.py failed: ${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    assert.equal(stdout.trim(), 'PASS: model control');
  } finally {
    await server.close();
  }
});
