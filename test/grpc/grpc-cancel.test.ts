// gRPC clients that cancel (RST_STREAM), whose deadline passes, or whose ModelStreamInfer stream is cancelled
// (issue #32): their queued requests leave the queue and never run, and a running JS model sees request.signal
// abort. The calls are made on bare node:http2, as any gRPC client puts them on the wire. No timing: the
// in-process JS models hold requests on gates the test opens, and the test waits on counters.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { startTestServer } from '../e2e/start-test-server.ts';
import { cancelGateConfig, createCancelGateState, writeCancelGateModels } from '../helpers/cancel-gate-models.ts';

const state = createCancelGateState('__herdGrpcCancelTest');

function writeRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-grpc-cancel-'));
  const names = ['rst', 'deadline', 'running', 'streamed'];
  writeCancelGateModels(dir, '__herdGrpcCancelTest', Object.fromEntries(names.map((name) => [name, cancelGateConfig(name)])));
  return dir;
}

let server: HerdServer;
let encoder: KserveGrpcClient;
let session: http2.ClientHttp2Session;

before(async () => {
  server = await startTestServer({ repositories: [writeRepository()] });
  encoder = new KserveGrpcClient({ url: server.grpcUrl! });
  session = http2.connect(`http://${server.grpcUrl!.replace(/^grpc:\/\//, '')}`);
});
after(async () => {
  session?.close();
  encoder?.close();
  await server?.close();
});

/** One length-prefixed ModelInferRequest, as a gRPC client frames it. */
function frame(model: string, id: string): Buffer {
  const { body } = encoder.prepareInfer(model, [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(1) }], { id });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
}

interface OpenCall {
  cancel(): void;
  /** grpc-status from the trailers; undefined when the call was reset before them. */
  status: Promise<string | undefined>;
}

function openCall(method: 'ModelInfer' | 'ModelStreamInfer', frames: Buffer[], headers: Record<string, string> = {}, end = true): OpenCall {
  const stream = session.request({
    ':method': 'POST',
    ':path': `/inference.GRPCInferenceService/${method}`,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...headers,
  });
  const status = new Promise<string | undefined>((resolve) => {
    let got: string | undefined;
    stream.on('response', (h) => {
      if (h['grpc-status'] !== undefined) got = String(h['grpc-status']);
    });
    stream.on('trailers', (t) => {
      got = String(t['grpc-status']);
    });
    stream.on('data', () => {});
    stream.on('close', () => resolve(got));
    stream.on('error', () => resolve(got));
  });
  for (const f of frames) stream.write(f);
  if (end) stream.end();
  return { cancel: () => stream.close(http2.constants.NGHTTP2_CANCEL), status };
}

async function until(what: string, ready: () => boolean): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (ready()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`never happened: ${what}`);
}

const stats = (model: string) => server.repository.get(model).stats;
const ran = (prefix: string) => state.executions.filter((e) => e.startsWith(prefix));

test('ModelInfer: five calls queued behind a busy instance whose clients cancel never execute', async () => {
  const busy = openCall('ModelInfer', [frame('rst', 'block-0')]);
  await until('the first call runs', () => state.gates.has('rst:block-0'));
  const queued = Array.from({ length: 5 }, (_, i) => openCall('ModelInfer', [frame('rst', `q${i}`)]));
  await until('five calls queue', () => stats('rst').pending === 5);
  for (const q of queued) q.cancel();
  await until('the queue empties', () => stats('rst').pending === 0 && stats('rst').cancelled.queued === 5);
  state.gates.get('rst:block-0')?.();
  assert.equal(await busy.status, '0');
  assert.deepEqual(ran('rst:'), ['rst:block-0'], 'only the call that stayed ran');
  assert.equal(stats('rst').failureCounts().CANCELED, 5);
});

test('ModelInfer: calls whose deadline passes while queued leave the queue and never execute', async () => {
  const busy = openCall('ModelInfer', [frame('deadline', 'block-0')]);
  await until('the first call runs', () => state.gates.has('deadline:block-0'));
  const queued = Array.from({ length: 3 }, (_, i) => openCall('ModelInfer', [frame('deadline', `d${i}`)], { 'grpc-timeout': '50m' }));
  const statuses = await Promise.all(queued.map((q) => q.status));
  assert.deepEqual(statuses, ['4', '4', '4'], 'DEADLINE_EXCEEDED');
  await until('the queue empties', () => stats('deadline').pending === 0 && stats('deadline').cancelled.queued === 3);
  state.gates.get('deadline:block-0')?.();
  assert.equal(await busy.status, '0');
  assert.deepEqual(ran('deadline:'), ['deadline:block-0']);
});

test('ModelInfer: a running JS model sees request.signal abort when its client cancels', async () => {
  const watched = openCall('ModelInfer', [frame('running', 'watch-1')]);
  await until('the model runs', () => state.executions.includes('running:watch-1'));
  watched.cancel();
  await until('the model saw the abort', () => state.sawAbort.includes('running:watch-1'));
  await until('the scheduler counted it', () => stats('running').cancelled.running === 1);
});

test('ModelStreamInfer: cancelling a stream takes its queued requests out of the queue', async () => {
  const stream = openCall('ModelStreamInfer', [frame('streamed', 'block-s'), frame('streamed', 's1'), frame('streamed', 's2')], {}, false);
  await until('the first request runs and two queue', () => state.gates.has('streamed:block-s') && stats('streamed').pending === 2);
  stream.cancel();
  await until('the queued two left', () => stats('streamed').pending === 0 && stats('streamed').cancelled.queued === 2);
  await until('the running one was told', () => stats('streamed').cancelled.running === 1);
  state.gates.get('streamed:block-s')?.();
  assert.deepEqual(ran('streamed:'), ['streamed:block-s']);
});
