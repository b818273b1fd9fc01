// ModelStreamInfer over real gRPC: sequences through the sequence batcher (the same answers as HTTP),
// in-stream errors, the triton_grpc_error header, a client that goes away mid-stream, and shutdown
// with streams open.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { status as Status } from '@grpc/grpc-js';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient, KserveHttpClient, type StreamInferEvent } from '../../src/client/index.ts';
import type { Tensor } from '../../src/core/tensor.ts';
import { startTestServer, TRITON_REPOSITORY } from '../e2e/start-test-server.ts';

const SLOW_REPOSITORY = resolve('test/fixtures/slow_repository');
const DECOUPLED_REPOSITORY = resolve('test/fixtures/decoupled_repository');

let server: HerdServer;
let client: KserveGrpcClient;
let http: KserveHttpClient;

before(async () => {
  server = await startTestServer({ repositories: [TRITON_REPOSITORY, SLOW_REPOSITORY, DECOUPLED_REPOSITORY], strictReadiness: false });
  client = new KserveGrpcClient({ url: server.grpcUrl! });
  http = new KserveHttpClient({ url: server.httpUrl });
});
after(async () => {
  client?.close();
  await http?.close();
  await server?.close();
});

const value = (v: number): Tensor => ({ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: Int32Array.of(v) });
const first = (e: StreamInferEvent) => Number((e.result?.outputs[0]?.data as Int32Array | undefined)?.[0]);

async function collect(events: AsyncIterable<StreamInferEvent>): Promise<StreamInferEvent[]> {
  const out: StreamInferEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** Two interleaved sequences of `values`, each request flagged start/end as tritonclient's examples send them. */
function sequenceRequests(values: number[], ids: [number, number]) {
  return values.flatMap((v, i) =>
    ids.map((id, k) => ({
      id: `${id}-${i}`,
      input: value(k === 0 ? v : -v),
      parameters: { sequence_id: id, sequence_start: i === 0, sequence_end: i === values.length - 1 },
    })),
  );
}

for (const model of ['simple_sequence', 'simple_dyna_sequence']) {
  test(`${model}: two interleaved sequences through ModelStreamInfer answer as over HTTP`, async () => {
    const values = [11, 7, 5, 3, 2, 0, 1];
    const requests = sequenceRequests(values, [1001, 1002]);
    const stream = client.streamInfer();
    for (const r of requests) stream.send(model, [r.input], { id: r.id, parameters: r.parameters });
    stream.end();
    const events = await collect(stream.responses);
    assert.deepEqual(
      events.map((e) => e.id),
      requests.map((r) => r.id),
      'answers in request order',
    );
    assert.ok(events.every((e) => e.final && e.error === undefined));
    // The same requests over HTTP, one after the other with the same sequence ids (the gRPC ones ended).
    const overHttp: number[] = [];
    for (const r of requests) overHttp.push(Number((await http.infer(model, [r.input], { id: r.id, parameters: r.parameters })).outputs[0]!.data[0]));
    assert.deepEqual(events.map(first), overHttp);
  });
}

test('a failed request answers in-stream with error_message and the stream stays open', async () => {
  const stream = client.streamInfer();
  const good = [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(3) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(1) },
  ] as Tensor[];
  stream.send('simple', good, { id: 'a' });
  stream.send('no_such_model', good, { id: 'b' });
  stream.send('simple', good.slice(0, 1), { id: 'c' });
  stream.send('simple', good, { id: 'd' });
  stream.end();
  const events = await collect(stream.responses);
  assert.deepEqual(
    events.map((e) => [e.id, e.error === undefined]),
    [
      ['a', true],
      ['b', false],
      ['c', false],
      ['d', true],
    ],
  );
  assert.equal(events[1]!.error!.message, "Request for unknown model: 'no_such_model' is not found");
  assert.match(events[2]!.error!.message, /expected 2 inputs but got 1 inputs for model 'simple'/);
  assert.deepEqual([...(events[3]!.result!.outputs[0]!.data as Int32Array)], new Array(16).fill(4));
});

test('with the triton_grpc_error header a failed request ends the stream with its status', async () => {
  const stream = client.streamInfer({ triton_grpc_error: 'true' });
  stream.send('simple_sequence', [value(1)], { id: 'x', parameters: { sequence_id: 77, sequence_start: true } });
  stream.send('no_such_model', [value(1)], { id: 'y' });
  const events: StreamInferEvent[] = [];
  await assert.rejects(
    async () => {
      for await (const e of stream.responses) events.push(e);
    },
    (err: { grpcCode: number; message: string }) => {
      assert.equal(err.grpcCode, Status.INVALID_ARGUMENT);
      assert.equal(err.message, "Request for unknown model: 'no_such_model' is not found");
      return true;
    },
  );
  assert.deepEqual(
    events.map((e) => e.id),
    ['x'],
  );
  await http.infer('simple_sequence', [value(1)], { parameters: { sequence_id: 77, sequence_end: true } });
});

test('a client that disconnects mid-stream leaves the server serving', async () => {
  const stream = client.streamInfer();
  for (let i = 0; i < 3; i++) stream.send('slow_echo', [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(i) }], { id: String(i) });
  await new Promise((r) => setTimeout(r, 50));
  stream.cancel();
  assert.deepEqual(await collect(stream.responses), []);
  const again = client.streamInfer();
  again.send('slow_echo', [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(9) }], { id: 'after' });
  again.end();
  const events = await collect(again.responses);
  assert.deepEqual(
    events.map((e) => [e.id, Number(e.result?.outputs[0]?.data[0])]),
    [['after', 9]],
  );
});

test('shutdown answers what open streams sent, refuses later requests, and ends the streams', async () => {
  const own = await startTestServer({ repositories: [SLOW_REPOSITORY] });
  const c = new KserveGrpcClient({ url: own.grpcUrl! });
  const stream = c.streamInfer();
  const idle = c.streamInfer();
  stream.send('slow_echo', [{ name: 'IN', datatype: 'INT32', shape: [1], data: Int32Array.of(5) }], { id: 'inflight' });
  await new Promise((r) => setTimeout(r, 100));
  const closing = own.close();
  const events = await collect(stream.responses);
  assert.deepEqual(
    events.map((e) => [e.id, Number(e.result?.outputs[0]?.data[0])]),
    [['inflight', 5]],
  );
  assert.deepEqual(await collect(idle.responses), [], 'an idle stream ends cleanly');
  await closing;
  c.close();
});

test('a decoupled model streams many responses per request, the last with triton_final_response', async () => {
  const stream = client.streamInfer();
  const ints = (...v: number[]): Tensor => ({ name: 'IN', datatype: 'INT32', shape: [v.length], data: Int32Array.from(v) });
  stream.send('repeat_int32', [ints(4, 5, 6)], { id: 'three', parameters: { triton_enable_empty_final_response: true } });
  stream.send('repeat_int32', [ints(7, -1, 8)], { id: 'bad-element' });
  stream.end();
  const events = await collect(stream.responses);
  const of = (id: string) => events.filter((e) => e.id === id);
  const out = (e: StreamInferEvent) => {
    const tensor = e.result?.outputs.find((o) => o.name === 'OUT');
    return tensor ? Number(tensor.data[0]) : null;
  };
  assert.deepEqual(
    of('three').map((e) => [out(e), e.final]),
    [
      [4, false],
      [5, false],
      [6, false],
      [null, true],
    ],
    'three responses, then the empty final response it asked for',
  );
  const bad = of('bad-element');
  assert.deepEqual(
    bad.map((e) => e.error?.message ?? 'ok'),
    ['ok', 'element 1 is -1', 'ok'],
    'an error response in the middle, the stream goes on',
  );
  assert.equal(
    bad.some((e) => e.final),
    false,
    'no empty final response unless asked for',
  );
  await assert.rejects(http.infer('repeat_int32', [ints(1)]), /decoupled/);
});
