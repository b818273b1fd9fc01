// The binary tensor data extension, the raw single-input body, HTTP-level limits and encodings, the
// classification extension and every datatype's round trip, through real HTTP. Errors are
// `{"error": "<message naming the problem>"}` with Triton's status and the server keeps serving.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import type { HerdServer } from '../../src/app.ts';
import { binaryBody, EXAMPLE_REPOSITORY, postJson, request, startTestServer, type HttpAnswer } from './start-test-server.ts';

const MiB = 1024 * 1024;
let server: HerdServer;
let limited: HerdServer;
let url: string;
let tempRepository: string;

// Every datatype, optional, of any length in a [2, n] shape; OUT_<T> echoes IN_<T> untouched.
const TYPES = ['BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'FP32', 'FP64', 'BF16', 'BYTES'] as const;
type WireType = (typeof TYPES)[number];
const configType = (t: WireType) => (t === 'BYTES' ? 'TYPE_STRING' : `TYPE_${t}`);
const ECHO_CONFIG = [
  'name: "echo_types"',
  'backend: "js"',
  'max_batch_size: 0',
  `input [ ${TYPES.map((t) => `{ name: "IN_${t}" data_type: ${configType(t)} dims: [ 2, -1 ] optional: true }`).join(', ')} ]`,
  `output [ ${TYPES.map((t) => `{ name: "OUT_${t}" data_type: ${configType(t)} dims: [ 2, -1 ] }`).join(', ')} ]`,
].join('\n');
const ECHO_MODEL = `export function execute(requests) {
  return requests.map((r) => ({
    outputs: r.requestedOutputNames().map((name) => ({ ...r.input(name.replace('OUT_', 'IN_')), name })),
  }));
}
`;

before(async () => {
  tempRepository = mkdtempSync(join(tmpdir(), 'herd-kserve-binary-'));
  mkdirSync(join(tempRepository, 'echo_types', '1'), { recursive: true });
  writeFileSync(join(tempRepository, 'echo_types', 'config.pbtxt'), `${ECHO_CONFIG}\n`);
  writeFileSync(join(tempRepository, 'echo_types', '1', 'model.mjs'), ECHO_MODEL);
  [server, limited] = await Promise.all([
    startTestServer({ repositories: [EXAMPLE_REPOSITORY, tempRepository] }),
    startTestServer({ repositories: [tempRepository], maxInputSize: MiB }),
  ]);
  url = server.httpUrl;
});
after(async () => {
  await Promise.all([server?.close(), limited?.close()]);
  if (tempRepository) rmSync(tempRepository, { recursive: true, force: true });
});

/** The JSON part of a response whose outputs are all binary. */
type BinaryAnswerHeader = { outputs: { name: string; datatype: string; shape: number[]; parameters: { binary_data_size: number } }[] };

const range = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));
const A = range(16, (i) => i);
const B = range(16, () => 1);
const addSubHeader = (sizes: [number, number] = [64, 64]) => ({
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: sizes[0] } },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: sizes[1] } },
  ],
});
const postBinary = (base: string, path: string, body: Buffer, headerLength: number | string, headers: Record<string, string> = {}) =>
  request(`${base}${path}`, {
    method: 'POST',
    body,
    headers: { 'Inference-Header-Content-Length': String(headerLength), 'content-type': 'application/octet-stream', ...headers },
  });

/** Good requests still get right answers: `add_sub` on the main server, the echo model on the limited one. */
async function assertStillServes(): Promise<void> {
  const res = await postJson(`${url}/v2/models/add_sub/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: A },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: B },
    ],
    outputs: [{ name: 'OUTPUT0' }],
  });
  assert.equal(res.status, 200, `server stopped serving: ${res.body.toString()}`);
  assert.deepEqual(
    (res.json() as { outputs: { data: number[] }[] }).outputs[0]?.data,
    range(16, (i) => i + 1),
  );
  const echo = await postJson(`${limited.httpUrl}/v2/models/echo_types/infer`, {
    inputs: [{ name: 'IN_INT8', datatype: 'INT8', shape: [2, 1], data: [-1, 1] }],
    outputs: [{ name: 'OUT_INT8' }],
  });
  assert.equal(echo.status, 200, `limited server stopped serving: ${echo.body.toString()}`);
}

async function assertError(answer: HttpAnswer | Promise<HttpAnswer>, status: number, message: RegExp | string): Promise<string> {
  const res = await answer;
  const text = res.body.toString('utf8');
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['error'], text);
  const error = body['error'];
  assert.equal(typeof error, 'string');
  if (typeof message === 'string') assert.equal(error, message);
  else assert.match(error as string, message);
  await assertStillServes();
  return error as string;
}

/** node:http, so response bodies arrive exactly as sent (fetch would decompress them). */
function rawHttp(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {}) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Writes `bytes` on a fresh TCP connection, half-closes it, and collects what comes back until the server closes. */
function rawExchange(base: string, bytes: Buffer | string): Promise<{ reply: string; closed: boolean }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ reply: Buffer.concat(chunks).toString('latin1'), closed: false });
    }, 1500);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // a reset is a close too
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ reply: Buffer.concat(chunks).toString('latin1'), closed: true });
    });
  });
}

// ---- Inference-Header-Content-Length and binary_data_size ----

test('Inference-Header-Content-Length beyond the body, non-numeric or negative is 400 naming the header', async () => {
  const { body, headerLength } = binaryBody(addSubHeader(), Int32Array.from(A), Int32Array.from(B));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', body, body.length + 10),
    400,
    `inference header size should be in range (0, ${body.length}), got: ${body.length + 10}`,
  );
  await assertError(postBinary(url, '/v2/models/add_sub/infer', body, 'abc'), 400, 'Unable to parse Inference-Header-Content-Length, got: abc');
  await assertError(postBinary(url, '/v2/models/add_sub/infer', body, '12px'), 400, /Unable to parse Inference-Header-Content-Length, got: 12px/);
  await assertError(postBinary(url, '/v2/models/add_sub/infer', body, -5), 400, /inference header size should be in range \(0, \d+\), got: -5/);
  // Shorter than the JSON: the JSON is cut and fails to parse.
  await assertError(postBinary(url, '/v2/models/add_sub/infer', body, headerLength - 5), 400, /^failed to parse the request JSON buffer: .* at \d+$/);
  const ok = await postBinary(url, '/v2/models/add_sub/infer', body, headerLength);
  assert.equal(ok.status, 200, ok.body.toString());
});

test('binary_data_size that does not add up to the bytes after the header is 400 (too few and too many)', async () => {
  const a = Int32Array.from(A);
  const short = binaryBody(addSubHeader(), a, Int32Array.from(B).subarray(0, 15));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', short.body, short.headerLength),
    400,
    "unexpected size for input 'INPUT1', expecting 4 additional bytes for model 'add_sub' ('binary_data_size' is 64 but only 60 bytes of binary data remain)",
  );
  const extra = binaryBody(addSubHeader(), a, Int32Array.from(B), new Uint8Array(8));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', extra.body, extra.headerLength),
    400,
    /^unexpected additional input data for model 'add_sub': 8 bytes follow the \d+-byte JSON header and the inputs' 'binary_data_size' sections$/,
  );
  // Sizes that add up but do not fit the shape.
  const skewed = binaryBody(addSubHeader([60, 68]), a, Int32Array.from(B));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', skewed.body, skewed.headerLength),
    400,
    "input byte size mismatch for input 'INPUT0' for model 'add_sub'. Expected 64, got 60",
  );
  const negative = binaryBody(addSubHeader([-64, 64]), a, Int32Array.from(B));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', negative.body, negative.headerLength),
    400,
    /'binary_data_size' of input 'INPUT0': expected a non-negative integer/,
  );
});

test('a truncated binary body is 400 naming the input and the missing bytes', async () => {
  const full = binaryBody(addSubHeader(), Int32Array.from(A), Int32Array.from(B));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', full.body.subarray(0, full.headerLength), full.headerLength),
    400,
    /^unexpected size for input 'INPUT0', expecting 64 additional bytes for model 'add_sub'/,
  );
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', full.body.subarray(0, full.headerLength + 100), full.headerLength),
    400,
    /^unexpected size for input 'INPUT1', expecting 28 additional bytes for model 'add_sub'/,
  );
});

test("an input with both 'data' and binary_data_size, or binary_data_size without the header, is 400", async () => {
  const header = addSubHeader();
  (header.inputs[0] as Record<string, unknown>)['data'] = A;
  const both = binaryBody(header, Int32Array.from(A), Int32Array.from(B));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', both.body, both.headerLength),
    400,
    "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But set 'data' 'binary_data_size' for input 'INPUT0'",
  );
  await assertError(postJson(`${url}/v2/models/add_sub/infer`, { inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16] }] }), 400, /But no field is set for input 'INPUT0'/);
  const noHeader = binaryBody(addSubHeader(), Int32Array.from(A), Int32Array.from(B));
  await assertError(
    request(`${url}/v2/models/add_sub/infer`, { method: 'POST', body: noHeader.body }),
    400,
    /^failed to parse the request JSON buffer: The document root must not be followed by other values\. at \d+$/,
  );
  const jsonOnly = Buffer.from(JSON.stringify(addSubHeader()));
  await assertError(
    request(`${url}/v2/models/add_sub/infer`, { method: 'POST', body: jsonOnly }),
    400,
    /input 'INPUT0' has 'binary_data_size' 64 but the request has no Inference-Header-Content-Length header/,
  );
});

test('BYTES in binary form (4-byte little-endian length per element) to token_counter; malformed prefixes are 400', async () => {
  const texts = ['Triton 动态批处理', 'hello world, hello world'];
  const encoded = Buffer.concat(
    texts.flatMap((t) => {
      const bytes = Buffer.from(t, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32LE(bytes.length);
      return [length, bytes];
    }),
  );
  const header = (size: number) => ({ inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [2, 1], parameters: { binary_data_size: size } }] });
  const bin = binaryBody(header(encoded.length), encoded);
  const res = await postBinary(url, '/v2/models/token_counter/infer', bin.body, bin.headerLength);
  assert.equal(res.status, 200, res.body.toString());
  const json = await postJson(`${url}/v2/models/token_counter/infer`, { inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [2, 1], data: texts }] });
  const counts = (json.json() as { outputs: { data: number[] }[] }).outputs[0]?.data;
  assert.deepEqual((res.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, counts);
  assert.ok((counts?.[0] ?? 0) > 0 && (counts?.[1] ?? 0) > 0);

  const lying = Buffer.from([100, 0, 0, 0, 0x61, 0x62, 0x63]);
  const bad = binaryBody(header(lying.length), lying);
  await assertError(
    postBinary(url, '/v2/models/token_counter/infer', bad.body, bad.headerLength),
    400,
    "string element 0 of inference input 'text_input' for model 'token_counter' declares 100 bytes but only 3 bytes remain",
  );
  const one = encoded.subarray(0, 4 + Buffer.byteLength(texts[0] ?? ''));
  const few = binaryBody(header(one.length), one);
  await assertError(
    postBinary(url, '/v2/models/token_counter/infer', few.body, few.headerLength),
    400,
    "expected 2 string elements for inference input 'text_input' for model 'token_counter', got 1",
  );
  const cut = binaryBody(header(one.length + 2), one, Uint8Array.of(1, 0));
  await assertError(
    postBinary(url, '/v2/models/token_counter/infer', cut.body, cut.headerLength),
    400,
    "incomplete string length indicator for inference input 'text_input' for model 'token_counter', expecting 4 bytes but only 2 bytes available",
  );
  const trailing = binaryBody(header(encoded.length + 3), encoded, Uint8Array.of(1, 2, 3));
  await assertError(
    postBinary(url, '/v2/models/token_counter/infer', trailing.body, trailing.headerLength),
    400,
    "inference input 'text_input' for model 'token_counter' has 3 bytes after its 2 string element(s), expecting none",
  );
});

// ---- the raw single-input body (Inference-Header-Content-Length: 0) ----

test('raw body against my_model (FP32 [768], batching -> batch 1) matches JSON; a wrong byte count is 400', async () => {
  const values = Float32Array.from(range(768, (i) => Math.sin(i) / 4));
  const raw = await postBinary(url, '/v2/models/my_model/infer', Buffer.from(values.buffer), 0);
  assert.equal(raw.status, 200, raw.body.toString());
  const jsonLength = Number(raw.headers.get('inference-header-content-length'));
  const header = JSON.parse(raw.body.subarray(0, jsonLength).toString()) as BinaryAnswerHeader;
  assert.deepEqual(header.outputs, [{ name: 'OUTPUT__0', datatype: 'FP32', shape: [1, 512], parameters: { binary_data_size: 2048 } }]);
  const bytes = raw.body.subarray(jsonLength);
  assert.equal(bytes.length, 2048);
  const fromRaw = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const json = await postJson(`${url}/v2/models/my_model/infer`, { inputs: [{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: Array.from(values) }] });
  const fromJson = (json.json() as { outputs: { data: number[] }[] }).outputs[0]?.data ?? [];
  fromJson.forEach((v, i) => {
    assert.ok(Math.abs(v - (fromRaw[i] ?? NaN)) <= 1e-5 * Math.max(1, Math.abs(v)), `element ${i}: ${v} vs ${fromRaw[i]}`);
  });

  await assertError(
    postBinary(url, '/v2/models/my_model/infer', Buffer.from(values.buffer, 0, 3070), 0),
    400,
    "input byte size mismatch for input 'INPUT__0' for model 'my_model'. Expected 3072, got 3070",
  );
  await assertError(postBinary(url, '/v2/models/my_model/infer', Buffer.alloc(0), 0), 400, /Expected 3072, got 0/);
});

test('raw body against a two-input model is 400 saying what a raw request is; against an unknown model, the unknown-model error', async () => {
  const twoInputs =
    "[request id: <id_unknown>] a raw request (Inference-Header-Content-Length: 0: the whole body is the data of the model's one input) " +
    "needs a model with exactly 1 input, but model 'add_sub' has 2 (INPUT0, INPUT1); send a JSON request instead " +
    "(binary tensor data may follow the JSON, with Inference-Header-Content-Length set to the JSON's length)";
  await assertError(postBinary(url, '/v2/models/add_sub/infer', Buffer.alloc(64), 0), 400, twoInputs);
  // A JSON body sent with the header at 0 (a client that always sends the header): the answer says so.
  const json = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(1) }] }));
  await assertError(
    postBinary(url, '/v2/models/add_sub/infer', json, 0),
    400,
    `${twoInputs}. The body looks like a JSON request, but Inference-Header-Content-Length: 0 makes it raw tensor data: ` +
      "leave the header out to send JSON, or set it to the JSON's length in bytes when binary data follows",
  );
  const oneInput = Buffer.from(` ${JSON.stringify({ inputs: [{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: [] }] })}\n`);
  await assertError(
    postBinary(url, '/v2/models/my_model/infer', oneInput, 0),
    400,
    /^input byte size mismatch for input 'INPUT__0' for model 'my_model'\. Expected 3072, got \d+\. The body looks like a JSON request, but Inference-Header-Content-Length: 0 makes it raw tensor data/,
  );
  await assertError(postBinary(url, '/v2/models/nope/infer', Buffer.alloc(64), 0), 400, "Request for unknown model: 'nope' is not found");
});

// ---- HTTP: size limit, lying lengths, encodings ----

test('a body over --http-max-input-size is 400 naming the limit, also when chunked or gzip-expanded', async () => {
  const base = limited.httpUrl;
  const limitMessage = /exceeds the maximum input size of 1048576 bytes; use --http-max-input-size to increase the limit$/;
  const big = Buffer.alloc(2 * MiB, 0x20);
  await assertError(postBinary(base, '/v2/models/echo_types/infer', big, 0), 400, limitMessage);
  const chunked = await new Promise<HttpAnswer>((resolve, reject) => {
    const req = httpRequest(`${base}/v2/models/echo_types/infer`, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), body, json: () => JSON.parse(body.toString()) });
      });
    });
    req.on('error', reject);
    for (let i = 0; i < 4; i++) req.write(big.subarray(0, MiB / 2 + 1));
    req.end();
  });
  await assertError(chunked, 400, limitMessage);
  const bomb = gzipSync(Buffer.alloc(2 * MiB, 0x20));
  assert.ok(bomb.length < 8 * 1024);
  await assertError(
    request(`${base}/v2/models/echo_types/infer`, { method: 'POST', body: bomb, headers: { 'content-encoding': 'gzip' } }),
    400,
    /^decompressed request body exceeds the maximum input size of 1048576 bytes/,
  );
  // Just under the limit is fine.
  const under = { inputs: [{ name: 'IN_UINT8', datatype: 'UINT8', shape: [2, 1000], data: range(2000, (i) => i % 256) }], outputs: [{ name: 'OUT_UINT8' }] };
  const ok = await request(`${base}/v2/models/echo_types/infer`, { method: 'POST', body: gzipSync(JSON.stringify(under)), headers: { 'content-encoding': 'gzip' } });
  assert.equal(ok.status, 200, ok.body.toString());
});

test('a lying Content-Length: the server answers or closes cleanly, and keeps serving', async () => {
  const json = JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: A },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: B },
    ],
  });
  const head = (length: number) => `POST /v2/models/add_sub/infer HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  // Longer than the body, then the client closes its write side: a 400 naming the short body, then a clean close.
  const longer = await rawExchange(url, head(json.length + 100) + json);
  assert.ok(longer.closed, 'the server must close the connection');
  assert.match(
    longer.reply,
    /^HTTP\/1\.1 400 [^\r]*\r\n[\s\S]*\r\n\r\n\{"error":"the connection ended before the request body was complete \(shorter than its Content-Length\)"\}$/,
  );
  // Shorter than the body: the first Content-Length bytes are a (cut) request and the rest is not HTTP.
  // Node's parser refuses the rest at once, so the server answers 400 and closes (the cut request may
  // or may not get its own answer first); every answer is `{"error"}`.
  const shorter = await rawExchange(url, head(json.length - 20) + json);
  assert.ok(shorter.closed, 'the server must close the connection');
  const answers = shorter.reply.split(/(?=HTTP\/1\.1 )/);
  assert.ok(answers.length >= 1 && answers.every((a) => a.startsWith('HTTP/1.1 400 ')), shorter.reply);
  for (const answer of answers) {
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['error'], answer);
    assert.match(String(body['error']), /^(malformed HTTP request \(HPE_[A-Z_]+\): .+|failed to parse the request JSON buffer: .+ at \d+)$/);
  }
  // Garbage instead of HTTP gets the same treatment.
  const garbage = await rawExchange(url, 'NOT HTTP AT ALL\r\n\r\n');
  assert.ok(garbage.closed);
  assert.match(garbage.reply, /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\n\{"error":"malformed HTTP request \(HPE_[A-Z_]+\): [^"]+"\}$/);
  await assertStillServes();
});

test('unsupported Content-Encoding (br) is 501 naming it; corrupt gzip is 400', async () => {
  const body = JSON.stringify({ inputs: [] });
  const br = await request(`${url}/v2/models/add_sub/infer`, { method: 'POST', body, headers: { 'content-encoding': 'br' } });
  assert.equal(br.headers.get('accept-encoding'), 'gzip, deflate');
  await assertError(br, 501, "unsupported Content-Encoding 'br': use gzip, deflate or identity");
  await assertError(
    request(`${url}/v2/models/add_sub/infer`, { method: 'POST', body: Buffer.from('not gzip at all'), headers: { 'content-encoding': 'gzip' } }),
    400,
    /^failed to decompress gzip request body: /,
  );
  const cut = gzipSync(body).subarray(0, 12);
  await assertError(
    request(`${url}/v2/models/add_sub/infer`, { method: 'POST', body: cut, headers: { 'content-encoding': 'gzip' } }),
    400,
    /^failed to decompress gzip request body: unexpected end of file/,
  );
  await assertError(
    request(`${url}/v2/models/add_sub/infer`, { method: 'POST', body: Buffer.from('{}'), headers: { 'content-encoding': 'deflate' } }),
    400,
    /^failed to decompress deflate request body: /,
  );
});

test('gzip and deflate request bodies are decoded; JSON and binary bodies alike', async () => {
  const json = JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: A },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: B },
    ],
  });
  for (const [encoding, compress] of [
    ['gzip', gzipSync],
    ['deflate', deflateSync],
  ] as const) {
    const res = await request(`${url}/v2/models/add_sub/infer`, { method: 'POST', body: compress(json), headers: { 'content-encoding': encoding } });
    assert.equal(res.status, 200, `${encoding}: ${res.body.toString()}`);
    assert.deepEqual(
      (res.json() as { outputs: { data: number[] }[] }).outputs[1]?.data,
      A.map((x) => x - 1),
    );
  }
  // The header length counts decoded bytes.
  const { body, headerLength } = binaryBody(addSubHeader(), Int32Array.from(A), Int32Array.from(B));
  const bin = await postBinary(url, '/v2/models/add_sub/infer', gzipSync(body), headerLength, { 'content-encoding': 'gzip' });
  assert.equal(bin.status, 200, bin.body.toString());
  assert.deepEqual(
    (bin.json() as { outputs: { data: number[] }[] }).outputs[0]?.data,
    A.map((x) => x + 1),
  );
});

test('Accept-Encoding: gzip (or deflate) compresses a large JSON answer to the same JSON', async () => {
  const body = JSON.stringify({ inputs: [{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: range(768, (i) => (i % 7) / 7) }] });
  const headers = { 'content-type': 'application/json' };
  const plain = await rawHttp(url, '/v2/models/my_model/infer', { method: 'POST', body, headers });
  assert.equal(plain.status, 200, plain.body.toString());
  assert.equal(plain.headers['content-encoding'], undefined);
  const expected = JSON.parse(plain.body.toString()) as { outputs: { data: number[] }[] };
  assert.equal(expected.outputs[0]?.data.length, 512);
  for (const [encoding, decompress] of [
    ['gzip', gunzipSync],
    ['deflate', inflateSync],
  ] as const) {
    const res = await rawHttp(url, '/v2/models/my_model/infer', { method: 'POST', body, headers: { ...headers, 'accept-encoding': encoding } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], encoding);
    assert.ok(res.body.length < plain.body.length, `${encoding} answer is ${res.body.length} bytes, plain ${plain.body.length}`);
    assert.deepEqual(JSON.parse(decompress(res.body).toString()), expected);
  }
  // Triton's choice: highest q among identity, gzip and deflate, the first listed on a tie; q=0 refuses.
  const cases: [string, string | undefined][] = [
    ['gzip;q=0', undefined],
    ['deflate, gzip', 'deflate'],
    ['gzip;q=0.5, deflate;q=0.8', 'deflate'],
    ['identity, gzip', undefined],
    ['br, gzip', 'gzip'],
    ['*', undefined],
    ['x-gzip', undefined],
  ];
  for (const [accept, encoding] of cases) {
    const res = await rawHttp(url, '/v2/models/my_model/infer', { method: 'POST', body, headers: { ...headers, 'accept-encoding': accept } });
    assert.equal(res.headers['content-encoding'], encoding, `Accept-Encoding: ${accept}`);
  }
  // A small answer is sent as is.
  const small = await rawHttp(url, '/v2', { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(small.headers['content-encoding'], undefined);
  assert.equal((JSON.parse(small.body.toString()) as { name: string }).name, 'triton');
});

// ---- outputs: subsets, binary choice, classification ----

test('requested-output subset; binary_data_output makes every output binary; binary_data: false overrides it', async () => {
  const inputs = [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: A },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: B },
  ];
  const subset = await postJson(`${url}/v2/models/add_sub/infer`, { inputs, outputs: [{ name: 'OUTPUT1' }] });
  assert.deepEqual((subset.json() as { outputs: unknown[] }).outputs, [{ name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: A.map((x) => x - 1) }]);

  const split = (res: HttpAnswer) => {
    const n = Number(res.headers.get('inference-header-content-length'));
    return { header: JSON.parse(res.body.subarray(0, n).toString()) as { outputs: Record<string, unknown>[] }, rest: res.body.subarray(n) };
  };
  const all = await postJson(`${url}/v2/models/add_sub/infer`, { inputs, parameters: { binary_data_output: true } });
  assert.equal(all.status, 200);
  const allBin = split(all);
  assert.deepEqual(
    allBin.header.outputs.map((o) => [o['name'], o['parameters']]),
    [
      ['OUTPUT0', { binary_data_size: 64 }],
      ['OUTPUT1', { binary_data_size: 64 }],
    ],
  );
  assert.ok(allBin.header.outputs.every((o) => o['data'] === undefined));
  assert.deepEqual([...new Int32Array(allBin.rest.buffer.slice(allBin.rest.byteOffset, allBin.rest.byteOffset + 128))], [...A.map((x) => x + 1), ...A.map((x) => x - 1)]);

  const mixed = await postJson(`${url}/v2/models/add_sub/infer`, {
    inputs,
    parameters: { binary_data_output: true },
    outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }, { name: 'OUTPUT1' }],
  });
  const mixedBin = split(mixed);
  assert.deepEqual(mixedBin.header.outputs[0], { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: A.map((x) => x + 1) });
  assert.deepEqual(mixedBin.header.outputs[1]?.['parameters'], { binary_data_size: 64 });
  assert.equal(mixedBin.rest.length, 64);
});

test('classification: k "value:index" strings per batch element, highest value first', async () => {
  const rows = [range(768, (i) => Math.cos(i * 0.37)), range(768, (i) => ((i * 13) % 17) / 17 - 0.5)];
  const inputs = [{ name: 'INPUT__0', datatype: 'FP32', shape: [2, 768], data: rows }];
  const plain = await postJson(`${url}/v2/models/my_model/infer`, { inputs });
  const values = (plain.json() as { outputs: { data: number[] }[] }).outputs[0]?.data ?? [];
  const res = await postJson(`${url}/v2/models/my_model/infer`, { inputs, outputs: [{ name: 'OUTPUT__0', parameters: { classification: 3 } }] });
  assert.equal(res.status, 200, res.body.toString());
  const out = (res.json() as { outputs: { name: string; datatype: string; shape: number[]; data: string[] }[] }).outputs[0];
  assert.equal(out?.name, 'OUTPUT__0');
  assert.equal(out?.datatype, 'BYTES');
  assert.deepEqual(out?.shape, [2, 3]);
  for (let row = 0; row < 2; row++) {
    const scores = values.slice(row * 512, row * 512 + 512);
    const top = scores
      .map((v, i) => [v, i] as const)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, 3);
    const got = (out?.data ?? []).slice(row * 3, row * 3 + 3).map((s) => s.split(':'));
    assert.deepEqual(
      got.map((p) => Number(p[1])),
      top.map(([, i]) => i),
      `row ${row}: ${JSON.stringify(got)}`,
    );
    got.forEach((p, j) => {
      assert.match(p[0] ?? '', /^-?\d+\.\d{6}$/);
      assert.ok(Math.abs(Number(p[0]) - (top[j]?.[0] ?? NaN)) < 1e-6 + 1e-6 * Math.abs(top[j]?.[0] ?? 0));
    });
  }
});

// ---- every datatype through the echo model ----

const SAMPLES: Record<Exclude<WireType, 'BF16'>, string> = {
  BOOL: '[[true,false],[false,true]]',
  UINT8: '[[0,1],[254,255]]',
  UINT16: '[[0,1],[65534,65535]]',
  UINT32: '[[0,1],[4294967294,4294967295]]',
  UINT64: '[[0,9007199254740993],[18446744073709551614,18446744073709551615]]',
  INT8: '[[-128,-1],[0,127]]',
  INT16: '[[-32768,-1],[0,32767]]',
  INT32: '[[-2147483648,-1],[0,2147483647]]',
  INT64: '[[-9223372036854775808,-9007199254740993],[0,9223372036854775807]]',
  FP16: '[[0.5,-2],[65504,0.00006103515625]]',
  FP32: '[[0.5,-1.25],[1.2676506002282294e+30,1.401298464324817e-45]]',
  FP64: '[[0.1,-1e+308],[5e-324,3.141592653589793]]',
  BYTES: '[["","héllo"],["Triton 动态批处理","a\\u0000b"]]',
};

test('every datatype round-trips identically in JSON (64-bit integers exactly)', async () => {
  const types = Object.keys(SAMPLES) as (keyof typeof SAMPLES)[];
  const inputs = types.map((t) => `{"name":"IN_${t}","datatype":"${t}","shape":[2,2],"data":${SAMPLES[t]}}`).join(',');
  const outputs = types.map((t) => `{"name":"OUT_${t}"}`).join(',');
  const res = await request(`${url}/v2/models/echo_types/infer`, { method: 'POST', body: `{"inputs":[${inputs}],"outputs":[${outputs}]}` });
  assert.equal(res.status, 200, res.body.toString());
  const text = res.body.toString();
  const answer = JSON.parse(text) as { outputs: { name: string; datatype: string; shape: number[]; data: unknown[] }[] };
  assert.deepEqual(
    answer.outputs.map((o) => o.name),
    types.map((t) => `OUT_${t}`),
  );
  for (const t of types) {
    const out = answer.outputs.find((o) => o.name === `OUT_${t}`);
    assert.equal(out?.datatype, t);
    assert.deepEqual(out?.shape, [2, 2]);
    assert.deepEqual(out?.data, (JSON.parse(SAMPLES[t]) as unknown[][]).flat(), t);
  }
  // JSON.parse rounds beyond 2^53; the wire text must keep every digit.
  assert.ok(text.includes('"data":[0,9007199254740993,18446744073709551614,18446744073709551615]'), text);
  assert.ok(text.includes('"data":[-9223372036854775808,-9007199254740993,0,9223372036854775807]'), text);
});

test('every datatype, BF16 included, round-trips byte for byte in binary', async () => {
  const strings = ['', 'héllo', 'Triton 动态批处理', 'a\u0000b'].map((s) => Buffer.from(s, 'utf8'));
  const bytes = Buffer.concat(strings.flatMap((s) => [Buffer.from(Uint32Array.of(s.length).buffer), s]));
  const sections: Record<WireType, ArrayBufferView> = {
    BOOL: Uint8Array.of(1, 0, 0, 1),
    UINT8: Uint8Array.of(0, 1, 254, 255),
    UINT16: Uint16Array.of(0, 1, 65534, 65535),
    UINT32: Uint32Array.of(0, 1, 4294967294, 4294967295),
    UINT64: BigUint64Array.of(0n, 9007199254740993n, 18446744073709551614n, 18446744073709551615n),
    INT8: Int8Array.of(-128, -1, 0, 127),
    INT16: Int16Array.of(-32768, -1, 0, 32767),
    INT32: Int32Array.of(-2147483648, -1, 0, 2147483647),
    INT64: BigInt64Array.of(-9223372036854775808n, -9007199254740993n, 0n, 9223372036854775807n),
    FP16: Uint16Array.of(0x3800, 0xc000, 0x7bff, 0x8000), // 0.5, -2, 65504, -0
    FP32: Float32Array.of(0.5, -0, Number.NaN, -Infinity),
    FP64: Float64Array.of(0.1, -1e308, 5e-324, Number.NaN),
    BF16: Uint16Array.of(0x3f80, 0xbf80, 0x7f80, 0x0001), // 1, -1, inf, smallest subnormal
    BYTES: bytes,
  };
  // A 1-byte section first puts every later one at an odd offset: the server must cope with misalignment.
  const header = {
    inputs: TYPES.map((t) => ({ name: `IN_${t}`, datatype: t, shape: [2, 2], parameters: { binary_data_size: sections[t].byteLength } })),
    outputs: TYPES.map((t) => ({ name: `OUT_${t}`, parameters: { binary_data: true } })),
  };
  const { body, headerLength } = binaryBody(header, ...TYPES.map((t) => sections[t]));
  const res = await postBinary(url, '/v2/models/echo_types/infer', body, headerLength);
  assert.equal(res.status, 200, res.body.toString());
  const n = Number(res.headers.get('inference-header-content-length'));
  const answer = JSON.parse(res.body.subarray(0, n).toString()) as BinaryAnswerHeader;
  let offset = n;
  for (const [i, t] of TYPES.entries()) {
    const out = answer.outputs[i];
    assert.equal(out?.name, `OUT_${t}`);
    assert.equal(out?.datatype, t);
    assert.deepEqual(out?.shape, [2, 2]);
    const view = sections[t];
    const sent = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    const got = res.body.subarray(offset, offset + (out?.parameters.binary_data_size ?? 0));
    assert.deepEqual(got, sent, `${t}: ${got.toString('hex')} vs ${sent.toString('hex')}`);
    offset += got.length;
  }
  assert.equal(offset, res.body.length);
});
