// gRPC semantics of the node:http2 listener against the real server: request compression (gzip, deflate) and
// an unknown coding refused with UNIMPLEMENTED, unknown methods, a non-gRPC content type, a non-ASCII error
// message, keepalive pings, and a draining close that still answers a unary call already running.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, type IncomingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { Client, credentials, Metadata, status as Status } from '@grpc/grpc-js';
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import type { HerdServer } from '../../src/app.ts';
import { loadGrpcProtos } from '../../src/grpc/load-grpc-protos.ts';
import { startGrpcServer } from '../../src/grpc/start-grpc-server.ts';
import type { GrpcServiceDeps } from '../../src/grpc/grpc-service-deps.ts';
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

const infer = (loadGrpcProtos()['inference.GRPCInferenceService'] as ServiceDefinition)['ModelInfer'] as MethodDefinition<object, Record<string, unknown>>;
const SLOW_CONFIG =
  'name: "slow"\nbackend: "js"\nmax_batch_size: 0\ninput [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]\noutput [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n';

let server: HerdServer;
let repo: string;
let marker: string;

before(async () => {
  repo = mkdtempSync(join(tmpdir(), 'herd-grpc-h2-'));
  marker = join(repo, 'started');
  mkdirSync(join(repo, 'slow', '1'), { recursive: true });
  writeFileSync(join(repo, 'slow', 'config.pbtxt'), SLOW_CONFIG);
  // Marks that it started, then answers once the test removes the mark (no timing in the test).
  writeFileSync(
    join(repo, 'slow', '1', 'model.mjs'),
    `import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout } from 'node:timers/promises';
export async function execute(requests) {
  writeFileSync(${JSON.stringify(marker)}, '1');
  while (existsSync(${JSON.stringify(marker)})) await setTimeout(5);
  return requests.map((r) => ({ outputs: [{ ...r.input('IN'), name: 'OUT' }] }));
}
`,
  );
  // Only the models used here: the whole Triton repository takes seconds to load.
  symlinkSync(join(TRITON_REPOSITORY, 'simple'), join(repo, 'simple'));
  server = await startTestServer({ repositories: [repo], strictReadiness: false });
});
after(async () => {
  rmSync(marker, { force: true });
  await server?.close();
  if (repo) rmSync(repo, { recursive: true, force: true });
});

const simpleRequest = (model = 'simple') => ({
  model_name: model,
  inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1, 16] })),
  raw_input_contents: [0, 1].map(() => Buffer.from(Int32Array.from({ length: 16 }, (_, i) => i).buffer)),
});

function callInfer(client: Client, request: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(infer.path, infer.requestSerialize, infer.responseDeserialize, request, new Metadata(), (err, value) =>
      err ? reject(err) : resolve(value as Record<string, unknown>),
    );
  });
}

test('compressed requests (gzip, deflate) are read; answers come back', async () => {
  for (const algorithm of [1, 2]) {
    const client = new Client(server.grpcUrl!, credentials.createInsecure(), { 'grpc.default_compression_algorithm': algorithm });
    const answer = await callInfer(client, simpleRequest());
    assert.equal((answer['raw_output_contents'] as Buffer[]).length, 2, `algorithm ${algorithm}`);
    client.close();
  }
});

test('an error message outside ASCII arrives intact (percent-encoded on the wire)', async () => {
  const client = new Client(server.grpcUrl!, credentials.createInsecure());
  await assert.rejects(callInfer(client, simpleRequest('modèle_100%')), (err: { code: number; details: string }) => {
    assert.equal(err.code, Status.INVALID_ARGUMENT);
    assert.match(err.details, /modèle_100%/);
    return true;
  });
  client.close();
});

/** One raw HTTP/2 request to the gRPC port: the response headers (trailers-only answers carry grpc-status there). */
async function raw(headers: Record<string, string>): Promise<IncomingHttpHeaders> {
  const session = connect(`http://${server.grpcUrl}`);
  const req = session.request({ ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers', ...headers });
  req.end(Buffer.from([0, 0, 0, 0, 0]));
  const [response] = (await once(req, 'response')) as [IncomingHttpHeaders];
  req.resume();
  await once(req, 'close');
  session.close();
  return response;
}

test('an unknown method, an unknown message coding and a non-gRPC content type are refused as grpc does', async () => {
  const unknown = await raw({ ':path': '/inference.GRPCInferenceService/NoSuchMethod' });
  assert.equal(unknown['grpc-status'], String(Status.UNIMPLEMENTED));
  const coding = await raw({ ':path': infer.path, 'grpc-encoding': 'snappy' });
  assert.equal(coding['grpc-status'], String(Status.UNIMPLEMENTED));
  assert.equal(coding['grpc-accept-encoding'], 'identity,deflate,gzip');
  const html = await raw({ ':path': infer.path, 'content-type': 'text/html' });
  assert.equal(html[':status'], 415);
});

test('keepalive: the server pings a connection every grpc_keepalive.time_ms', async () => {
  const deps = { isReady: () => true, serverId: 'test' } as unknown as Omit<GrpcServiceDeps, 'trackStream'>;
  const keepalive = {
    time_ms: 20,
    timeout_ms: 10_000,
    permit_without_calls: true,
    http2_max_pings_without_data: 2,
    http2_min_recv_ping_interval_without_data_ms: 0,
    http2_max_ping_strikes: 2,
  };
  const grpc = await startGrpcServer(deps, { host: '127.0.0.1', port: 0, keepalive });
  const session = connect(`http://${grpc.address}`);
  await once(session, 'ping');
  session.close();
  await grpc.close();
});

test('a draining close answers the unary call already running (GOAWAY for new ones)', async () => {
  const client = new Client(server.grpcUrl!, credentials.createInsecure());
  const running = callInfer(client, { model_name: 'slow', inputs: [{ name: 'IN', datatype: 'INT32', shape: [1] }], raw_input_contents: [Buffer.from(Int32Array.of(7).buffer)] });
  while (!existsSync(marker)) await sleep(5);
  const closed = server.close();
  rmSync(marker);
  const answer = await running;
  assert.deepEqual([...new Int32Array(new Uint8Array((answer['raw_output_contents'] as Buffer[])[0]!).buffer)], [7]);
  await closed;
  client.close();
});
