// An ensemble whose last step is decoupled streams many responses, as Triton's ensemble scheduler does:
// preprocessor (JS) -> decoupled generator (JS), over gRPC ModelStreamInfer and HTTP generate_stream,
// with a step after the generator that runs once per response, an error mid-stream, a client that
// cancels, and the load-time refusal of a step fed from two decoupled lineages.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { HerdServer } from '../../../src/app.ts';
import { KserveGrpcClient, type StreamInferEvent } from '../../../src/client/index.ts';
import { postJson, request, startTestServer } from '../../e2e/start-test-server.ts';
import { writeRepository, type FixtureModel } from './ensemble-fixtures.ts';

const PREP: FixtureModel = {
  config: `name: "prep"
backend: "js"
max_batch_size: 0
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] }, { name: "N" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "PROMPT" data_type: TYPE_STRING dims: [ 1 ] }, { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`,
  model: `export default {
  initialize(args) { this.herd = args.herd; },
  execute(requests) {
    return requests.map((r) => {
      const [text] = this.herd.decodeStrings(r.input('TEXT'));
      return { outputs: [this.herd.createTensor('PROMPT', 'BYTES', [1], [text.toUpperCase()]), { ...r.input('N'), name: 'COUNT' }] };
    });
  },
};
`,
};

// Decoupled: COUNT responses TOKEN = "<PROMPT>:<i>", a few ms apart; a prompt containing FAIL fails its third.
const GEN: FixtureModel = {
  config: `name: "gen"
backend: "js"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "PROMPT" data_type: TYPE_STRING dims: [ 1 ] }, { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "TOKEN" data_type: TYPE_STRING dims: [ 1 ] } ]
`,
  model: `const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default {
  initialize(args) { this.herd = args.herd; },
  execute(requests) {
    for (const r of requests) void this.generate(r);
  },
  async generate(r) {
    const sender = r.responseSender();
    const [prompt] = this.herd.decodeStrings(r.input('PROMPT'));
    const count = r.input('COUNT').data[0];
    for (let i = 0; i < count; i++) {
      await sleep(2);
      if (sender.isCancelled()) {
        globalThis.__herdGenCancelled = (globalThis.__herdGenCancelled ?? 0) + 1;
        sender.close();
        return;
      }
      if (prompt.includes('FAIL') && i === 2) {
        sender.send({ error: this.herd.createError('INVALID_ARG', 'the generator failed at token 2') }, { final: true });
        return;
      }
      sender.send({ outputs: [this.herd.createTensor('TOKEN', 'BYTES', [1], [prompt + ':' + i])] });
    }
    sender.close();
  },
};
`,
};

const TAG: FixtureModel = {
  config: `name: "tag"
backend: "js"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
`,
  model: `export default {
  initialize(args) { this.herd = args.herd; },
  execute(requests) {
    return requests.map((r) => ({ outputs: [this.herd.createTensor('OUT', 'BYTES', [1], [this.herd.decodeStrings(r.input('IN'))[0] + '!'])] }));
  },
};
`,
};

const ensemble = (name: string, output: string, extraSteps: string) => ({
  config: `name: "${name}"
platform: "ensemble"
max_batch_size: 0
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] }, { name: "N" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "${output}" data_type: TYPE_STRING dims: [ 1 ] } ]
ensemble_scheduling {
  step [
    { model_name: "prep" model_version: -1 input_map [ { key: "TEXT" value: "TEXT" }, { key: "N" value: "N" } ] output_map [ { key: "PROMPT" value: "prompt" }, { key: "COUNT" value: "count" } ] },
    { model_name: "gen" model_version: -1 input_map [ { key: "PROMPT" value: "prompt" }, { key: "COUNT" value: "count" } ] output_map { key: "TOKEN" value: "${extraSteps === '' ? output : 'token'}" } }${extraSteps}
  ]
}
`,
});

let server: HerdServer;
let grpc: KserveGrpcClient;
let dir: string;

before(async () => {
  dir = writeRepository({
    prep: PREP,
    gen: GEN,
    tag: TAG,
    stream_chat: ensemble('stream_chat', 'TOKEN', ''),
    stream_tagged: ensemble(
      'stream_tagged',
      'TAGGED',
      `,\n    { model_name: "tag" model_version: -1 input_map { key: "IN" value: "token" } output_map { key: "OUT" value: "TAGGED" } }`,
    ),
    // A step fed by the generator's tokens and by an ensemble input: Triton refuses it at load.
    mixed_lineage: ensemble(
      'mixed_lineage',
      'OUT',
      `,\n    { model_name: "prep" model_version: -1 input_map [ { key: "TEXT" value: "token" }, { key: "N" value: "N" } ] output_map { key: "PROMPT" value: "OUT" } }`,
    ),
  });
  server = await startTestServer({ repositories: [dir], strictReadiness: false });
  grpc = new KserveGrpcClient({ url: server.grpcUrl as string });
});
after(async () => {
  grpc?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const inputs = (text: string, n: number) => [
  { name: 'TEXT', datatype: 'BYTES' as const, shape: [1], data: [new TextEncoder().encode(text)] },
  { name: 'N', datatype: 'INT32' as const, shape: [1], data: Int32Array.of(n) },
];
const text = (event: StreamInferEvent) => new TextDecoder().decode((event.result?.outputs[0]?.data as Uint8Array[] | undefined)?.[0]);

/** Triton sends a decoupled request's bare final flag over gRPC only when the client asks for it. */
const EMPTY_FINAL = { triton_enable_empty_final_response: true };

/** The events of one request, up to and including its final one. */
async function untilFinal(iterator: AsyncIterator<StreamInferEvent>): Promise<StreamInferEvent[]> {
  const events: StreamInferEvent[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done) return events;
    events.push(next.value);
    if (next.value.final) return events;
  }
}

/** SSE `data:` events of a generate_stream answer, parsed. */
const sseEvents = (body: Buffer) =>
  body
    .toString()
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => {
      assert.ok(e.startsWith('data: '), e);
      return JSON.parse(e.slice(6)) as Record<string, unknown>;
    });

test('the ensemble is decoupled because its last step is; ModelInfer and plain infer refuse it as for any decoupled model', async () => {
  const config = await request(`${server.httpUrl}/v2/models/stream_chat/config`);
  assert.equal((config.json() as { model_transaction_policy?: { decoupled?: boolean } }).model_transaction_policy?.decoupled, true);
  const infer = await postJson(`${server.httpUrl}/v2/models/stream_chat/infer`, {
    inputs: [
      { name: 'TEXT', datatype: 'BYTES', shape: [1], data: ['hi'] },
      { name: 'N', datatype: 'INT32', shape: [1], data: [2] },
    ],
  });
  assert.ok(infer.status >= 400, infer.body.toString());
  assert.match(infer.body.toString(), /decoupled/);
});

test('gRPC ModelStreamInfer: every response of the generator is a response of the ensemble, in order, then the final flag', async () => {
  const stream = grpc.streamInfer();
  const iterator = stream.responses[Symbol.asyncIterator]();
  stream.send('stream_chat', inputs('hi', 3), { id: 'r1', parameters: EMPTY_FINAL });
  const events = await untilFinal(iterator);
  const data = events.filter((e) => e.result !== undefined && e.result.outputs.length > 0);
  assert.deepEqual(data.map(text), ['HI:0', 'HI:1', 'HI:2']);
  assert.ok(
    data.every((e) => e.id === 'r1' && e.result?.modelName === 'stream_chat'),
    'each response names the request and the ensemble',
  );
  assert.equal(events.at(-1)?.final, true);
  assert.equal(events.filter((e) => e.final).length, 1);

  // A step after the decoupled one runs once per response; the same stream carries the next request.
  stream.send('stream_tagged', inputs('yo', 2), { id: 'r2', parameters: EMPTY_FINAL });
  const tagged = (await untilFinal(iterator)).filter((e) => (e.result?.outputs.length ?? 0) > 0);
  assert.deepEqual(tagged.map(text), ['YO:0!', 'YO:1!']);

  // A generator that answers nothing: the final flag alone.
  stream.send('stream_chat', inputs('none', 0), { id: 'r3', parameters: EMPTY_FINAL });
  const empty = await untilFinal(iterator);
  assert.deepEqual(
    empty.map((e) => [e.final, e.result?.outputs.length ?? 0, e.error]),
    [[true, 0, undefined]],
  );
  stream.end();
});

test('HTTP generate_stream: one data event per generated token, no [DONE]', async () => {
  const answer = await postJson(`${server.httpUrl}/v2/models/stream_chat/generate_stream`, { TEXT: 'hey', N: 3 });
  assert.equal(answer.status, 200, answer.body.toString());
  assert.deepEqual(
    sseEvents(answer.body).map((e) => e['TOKEN']),
    ['HEY:0', 'HEY:1', 'HEY:2'],
  );
  const tagged = await postJson(`${server.httpUrl}/v2/models/stream_tagged/generate_stream`, { TEXT: 'a', N: 2 });
  assert.deepEqual(
    sseEvents(tagged.body).map((e) => e['TAGGED']),
    ['A:0!', 'A:1!'],
  );
});

test('an error mid-stream ends the request with the error, naming the step; the gRPC stream stays open', async () => {
  const stream = grpc.streamInfer();
  const iterator = stream.responses[Symbol.asyncIterator]();
  stream.send('stream_chat', inputs('please fail', 5), { id: 'bad', parameters: EMPTY_FINAL });
  const events = await untilFinal(iterator);
  assert.deepEqual(events.filter((e) => e.result !== undefined && e.result.outputs.length > 0).map(text), ['PLEASE FAIL:0', 'PLEASE FAIL:1']);
  const last = events.at(-1);
  assert.equal(last?.final, true);
  assert.equal(last?.error?.message, "in ensemble 'stream_chat', step 'gen': the generator failed at token 2");
  stream.send('stream_chat', inputs('ok', 1), { id: 'after', parameters: EMPTY_FINAL });
  assert.deepEqual((await untilFinal(iterator)).filter((e) => (e.result?.outputs.length ?? 0) > 0).map(text), ['OK:0']);
  stream.end();

  const overHttp = await postJson(`${server.httpUrl}/v2/models/stream_chat/generate_stream`, { TEXT: 'fail', N: 5 });
  assert.equal(overHttp.status, 200, 'the error follows the first event inside the 200 stream');
  const sse = sseEvents(overHttp.body);
  assert.deepEqual(
    sse.map((e) => e['TOKEN'] ?? e['error']),
    ['FAIL:0', 'FAIL:1', "in ensemble 'stream_chat', step 'gen': the generator failed at token 2"],
  );
});

test('a client that cancels mid-stream cancels the decoupled step', async () => {
  const g = globalThis as { __herdGenCancelled?: number };
  const before = g.__herdGenCancelled ?? 0;
  const stream = grpc.streamInfer();
  const iterator = stream.responses[Symbol.asyncIterator]();
  stream.send('stream_chat', inputs('long', 100000), { id: 'long', parameters: EMPTY_FINAL });
  for (let i = 0; i < 2; i++) assert.equal((await iterator.next()).done, false);
  stream.cancel();
  // Waits for the condition, not for a time: the generator notices on its next token.
  while ((g.__herdGenCancelled ?? 0) === before) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(g.__herdGenCancelled, before + 1);
});

test('a step fed from the generator and from an ensemble input is refused at load, as Triton refuses it', async () => {
  const answer = await request(`${server.httpUrl}/v2/models/mixed_lineage`);
  assert.ok(answer.status >= 400);
  assert.match(answer.body.toString(), /in ensemble mixed_lineage, step of model 'prep' receives inputs originated from different decoupled models/);
});
