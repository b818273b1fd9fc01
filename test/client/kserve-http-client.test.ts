// The client SDK against the real Herd server: health, metadata, config, statistics, infer with
// binary and JSON tensors, the timed exchange, and errors as HerdError with the server's message.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HerdServer } from '../../src/app.ts';
import { HerdError } from '../../src/core/errors.ts';
import type { Tensor } from '../../src/core/tensor.ts';
import { KserveHttpClient, parseServerUrl, type TimedInferExchange } from '../../src/client/index.ts';
import { EXAMPLE_REPOSITORY, startTestServer } from '../e2e/start-test-server.ts';

let server: HerdServer;
let client: KserveHttpClient;

before(async () => {
  // Explicit mode loads only what the tests use: the whole example repository takes seconds to load.
  server = await startTestServer({ repositories: [EXAMPLE_REPOSITORY], controlMode: 'explicit', loadModel: ['add_sub', 'token_counter'] });
  client = new KserveHttpClient({ url: server.httpUrl });
});
after(async () => {
  await client?.close();
  await server?.close();
});

const range = (n: number, f: (i: number) => number) => Int32Array.from({ length: n }, (_, i) => f(i));
const addSubInputs: Tensor[] = [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: range(16, (i) => i) },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: range(16, () => 1) },
];

test('health, server metadata, model metadata and config', async () => {
  assert.equal(await client.serverLive(), true);
  assert.equal(await client.serverReady(), true);
  assert.equal(await client.modelReady('add_sub'), true);
  assert.equal(await client.modelReady('add_sub', '7'), false);
  assert.equal((await client.serverMetadata()).name, 'triton');
  const metadata = await client.modelMetadata('add_sub');
  assert.deepEqual(metadata.inputs[0], { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] });
  const config = await client.modelConfig('add_sub', '1');
  assert.equal(config.max_batch_size, 8);
  assert.deepEqual(
    config.input.map((i) => i.name),
    ['INPUT0', 'INPUT1'],
  );
});

for (const binary of [true, false]) {
  test(`infer with ${binary ? 'binary' : 'JSON'} tensors decodes the outputs`, async () => {
    const result = await client.infer('add_sub', addSubInputs, { binaryInputs: binary, binaryOutputs: binary, id: 'q7' });
    assert.equal(result.modelName, 'add_sub');
    assert.equal(result.modelVersion, '1');
    assert.equal(result.id, 'q7');
    const byName = new Map(result.outputs.map((t) => [t.name, t]));
    assert.deepEqual(Array.from(byName.get('OUTPUT0')?.data as Int32Array), Array.from(range(16, (i) => i + 1)));
    assert.deepEqual(Array.from(byName.get('OUTPUT1')?.data as Int32Array), Array.from(range(16, (i) => i - 1)));
  });
}

test('BYTES inputs and a requested subset of outputs', async () => {
  const text = new TextEncoder().encode('Triton 动态批处理');
  const result = await client.infer('token_counter', [{ name: 'text_input', datatype: 'BYTES', shape: [1, 1], data: [text] }], {
    outputs: [{ name: 'token_count', binary: false }],
  });
  assert.equal(result.outputs.length, 1);
  assert.ok(((result.outputs[0]!.data as Int32Array)[0] as number) > 0);
});

test('statistics count the requests made', async () => {
  const before = (await client.modelStatistics('add_sub')).find((s) => s.name === 'add_sub');
  await client.infer('add_sub', addSubInputs);
  const after = (await client.modelStatistics('add_sub', '1'))[0];
  assert.equal(after?.inference_stats.success.count, (before?.inference_stats.success.count ?? 0) + 1);
  assert.ok((await client.modelStatistics()).some((s) => s.name === 'token_counter'));
});

test("server errors are HerdError with the server's message", async () => {
  await assert.rejects(
    client.modelMetadata('nope'),
    (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && err.message === "Request for unknown model: 'nope' is not found",
  );
  const wrongShape: Tensor = { name: 'INPUT0', datatype: 'INT32', shape: [1, 3], data: new Int32Array(3) };
  await assert.rejects(
    client.infer('add_sub', [wrongShape, addSubInputs[1] as Tensor]),
    (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && /INPUT0/.test(err.message) && !err.message.startsWith('{'),
  );
});

test('a server that does not answer is one UNAVAILABLE error naming it', async () => {
  const down = new KserveHttpClient({ url: '127.0.0.1:1' });
  await assert.rejects(
    down.serverLive(),
    (err: unknown) => err instanceof HerdError && err.code === 'UNAVAILABLE' && /^cannot reach the server at http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/.test(err.message),
  );
  await down.destroy();
});

test('a prepared request is sent many times by one reusable timed exchange', async () => {
  const prepared = client.prepareInfer('add_sub', addSubInputs);
  const seen: { ok: boolean; latency: number; sentAfterStart: boolean; bytes: number }[] = [];
  await new Promise<void>((resolve) => {
    const exchange: TimedInferExchange = client.createTimedExchange((ex) => {
      seen.push({
        ok: ex.error === undefined && ex.statusCode === 200,
        latency: ex.latencyMs,
        sentAfterStart: ex.sentMs >= ex.startMs && ex.endMs >= ex.responseStartMs,
        bytes: ex.responseBytes,
      });
      if (seen.length < 3) ex.send(prepared);
      else resolve();
    });
    exchange.send(prepared);
  });
  assert.equal(seen.length, 3);
  for (const s of seen) {
    assert.ok(s.ok && s.latency > 0 && s.sentAfterStart && s.bytes > 0, JSON.stringify(s));
  }
  const failing = client.prepareInfer('nope', addSubInputs);
  const error = await new Promise<HerdError | undefined>((resolve) => client.createTimedExchange((ex) => resolve(ex.error)).send(failing));
  assert.equal(error?.message, "Request for unknown model: 'nope' is not found");
});

test('server URLs: host:port, http(s) URLs; paths and other schemes are refused', () => {
  assert.equal(parseServerUrl('localhost:8000'), 'http://localhost:8000');
  assert.equal(parseServerUrl('http://10.0.0.5:8000/'), 'http://10.0.0.5:8000');
  assert.equal(parseServerUrl('https://triton.example.com'), 'https://triton.example.com');
  assert.throws(() => parseServerUrl('grpc://host:8001'), /only http and https/);
  assert.throws(() => parseServerUrl('http://host:8000/v2'), /only scheme, host and port/);
  assert.throws(() => parseServerUrl(' '), /empty/);
});
