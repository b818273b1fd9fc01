// Python gRPC stubs for Herd's own copy of Triton's service protos, as tritonclient ships its service_pb2(_grpc):
// for tests that drive Herd from a Python client written the way tritonclient's examples are.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { TEST_PYTHON } from '../python-interpreter.ts';

const run = promisify(execFile);
const PROTOS = resolve('src/grpc/protos');
export const PYTHON_GRPC_MISSING = 'needs python3-grpcio, python3-protobuf, protobuf-compiler and protobuf-compiler-grpc (.ci/run installs them)';

/** A new folder holding grpc_service_pb2(_grpc).py and model_config_pb2.py; throws naming what is missing. */
export async function generatePythonGrpcStubs(): Promise<string> {
  try {
    await run(TEST_PYTHON, ['-c', 'import grpc, google.protobuf']);
  } catch (err) {
    throw new Error(`${TEST_PYTHON} cannot import grpc: this test ${PYTHON_GRPC_MISSING}\n${String(err)}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'herd-pystubs-'));
  try {
    const plugin = (await run('sh', ['-c', 'command -v grpc_python_plugin'])).stdout.trim();
    await run('protoc', [
      `-I${PROTOS}`,
      `--python_out=${dir}`,
      `--grpc_python_out=${dir}`,
      `--plugin=protoc-gen-grpc_python=${plugin}`,
      'grpc_service.proto',
      'model_config.proto',
    ]);
  } catch (err) {
    throw new Error(`generating Python stubs failed: this test ${PYTHON_GRPC_MISSING}\n${String(err)}`);
  }
  return dir;
}
