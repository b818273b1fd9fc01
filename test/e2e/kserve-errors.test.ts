// Every error path of the KServe HTTP server's JSON requests, model validation and routing, through
// real HTTP: each answer is `{"error": "<message naming the problem>"}` with Triton's status, and the
// server keeps serving good requests afterwards. Binary, raw-body and HTTP-level errors are in
// kserve-binary-and-encoding.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { postJson, request, startTestServer, TRITON_REPOSITORY, type HttpAnswer } from './start-test-server.ts';

let server: HerdServer;
let url: string;
let tempRepository: string;

const ECHO_MODEL = `export function execute(requests) {
  return requests.map((r) => ({ outputs: [{ ...r.input('IN'), name: 'OUT' }] }));
}
`;

before(async () => {
  // A repository of its own next to Triton's: one good js model and one config.pbtxt with a syntax
  // error on line 4 (no ':' after data_type).
  tempRepository = mkdtempSync(join(tmpdir(), 'herd-kserve-errors-'));
  writeModel(
    'echo_int32',
    [
      'name: "echo_int32"',
      'backend: "js"',
      'max_batch_size: 4',
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 2 ] } ]',
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 2 ] } ]',
    ].join('\n'),
    ECHO_MODEL,
  );
  writeModel(
    'broken_config',
    [
      'name: "broken_config"',
      'backend: "js"',
      'max_batch_size: 4',
      'input [ { name: "IN" data_type TYPE_INT32 dims: [ 2 ] } ]',
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 2 ] } ]',
    ].join('\n'),
    ECHO_MODEL,
  );
  server = await startTestServer({ repositories: [TRITON_REPOSITORY, tempRepository] });
  url = server.httpUrl;
});
after(async () => {
  await server?.close();
  if (tempRepository) rmSync(tempRepository, { recursive: true, force: true });
});

function writeModel(name: string, config: string, model: string): void {
  mkdirSync(join(tempRepository, name, '1'), { recursive: true });
  writeFileSync(join(tempRepository, name, 'config.pbtxt'), `${config}\n`);
  writeFileSync(join(tempRepository, name, '1', 'model.mjs'), model);
}

const range = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));
const A = range(16, (i) => i);
const B = range(16, () => 1);
const int32 = (name: string, data: unknown, shape: number[] = [1, 16]) => ({ name, datatype: 'INT32', shape, data });
const goodInputs = () => [int32('INPUT0', A), int32('INPUT1', B)];

function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return request(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
}
const inferSimple = (value: unknown) => postJson(`${url}/v2/models/simple/infer`, value);

/** A good request to `simple` still gets the right answer. */
async function assertStillServes(): Promise<void> {
  const res = await inferSimple({ inputs: goodInputs(), outputs: [{ name: 'OUTPUT0' }] });
  assert.equal(res.status, 200, `server stopped serving: ${res.body.toString()}`);
  const out = (res.json() as { outputs: { data: number[] }[] }).outputs[0];
  assert.deepEqual(
    out?.data,
    range(16, (i) => i + 1),
  );
}

/** The answer is `status` with a JSON body of exactly `{"error": string}` matching `message`; then the server still serves. */
async function assertError(answer: HttpAnswer | Promise<HttpAnswer>, status: number, message: RegExp | string): Promise<string> {
  const res = await answer;
  const text = res.body.toString('utf8');
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['error'], text);
  assert.equal(typeof body['error'], 'string');
  const error = body['error'] as string;
  if (typeof message === 'string') assert.equal(error, message);
  else assert.match(error, message);
  await assertStillServes();
  return error;
}

// ---- the request body as JSON ----

test('malformed JSON is 400 with the parser reason and byte offset', async () => {
  // `,}`: the object member after the comma has no name; rapidjson reports it at offset 11.
  await assertError(post('/v2/models/simple/infer', '{"id": "a",}'), 400, 'failed to parse the request JSON buffer: Missing a name for object member. at 11');
  await assertError(post('/v2/models/simple/infer', '{"inputs": ['), 400, /^failed to parse the request JSON buffer: .+ at 12$/);
  await assertError(
    post('/v2/models/simple/infer', '{"inputs": []} trailing'),
    400,
    /^failed to parse the request JSON buffer: The document root must not be followed by other values\. at 15$/,
  );
  // Offsets count bytes, not UTF-16 units, as rapidjson does: "é" is 2 bytes.
  await assertError(post('/v2/models/simple/infer', '{"id": "é" x}'), 400, /at 12$/);
});

test('an empty body is 400 naming the empty document', async () => {
  await assertError(post('/v2/models/simple/infer', ''), 400, /empty|no body/i);
  await assertError(request(`${url}/v2/models/simple/infer`, { method: 'POST' }), 400, /empty|no body/i);
  await assertError(post('/v2/models/simple/infer', '   \n'), 400, /The document is empty\. at \d+/);
});

test('JSON that is not an object is 400', async () => {
  for (const body of ['[]', '[{"inputs": []}]', '"inputs"', '42', 'null', 'true']) {
    await assertError(post('/v2/models/simple/infer', body), 400, /must be an object/);
  }
});

test("'inputs' missing or not an array is 400 naming 'inputs'", async () => {
  await assertError(inferSimple({}), 400, "Unable to parse 'inputs': expected an array, got missing");
  await assertError(inferSimple({ inputs: {} }), 400, "Unable to parse 'inputs': expected an array, got an object");
  await assertError(inferSimple({ inputs: 'INPUT0' }), 400, "Unable to parse 'inputs': expected an array, got a string");
  await assertError(inferSimple({ inputs: [42] }), 400, /'inputs': element 0 is a number, expected an object/);
  await assertError(inferSimple({ inputs: [{ datatype: 'INT32', shape: [1, 16], data: A }] }), 400, /'name' of inputs\[0\]/);
  await assertError(
    inferSimple({ inputs: [{ name: 'INPUT0', datatype: 'INT32', data: A }, int32('INPUT1', B)] }),
    400,
    /'shape' of input 'INPUT0': expected an array, got missing/,
  );
  await assertError(inferSimple({ inputs: [int32('INPUT0', A, [1, -16]), int32('INPUT1', B)] }), 400, /'shape' of input 'INPUT0': dims must be non-negative integers/);
  await assertError(inferSimple({ inputs: [int32('INPUT0', A), int32('INPUT0', B)] }), 400, "input 'INPUT0' already exists in request");
  await assertError(inferSimple({ inputs: goodInputs(), outputs: { name: 'OUTPUT0' } }), 400, /'outputs': expected an array/);
  await assertError(inferSimple({ id: 7, inputs: goodInputs() }), 400, /'id': expected a string/);
  await assertError(inferSimple({ inputs: goodInputs(), parameters: { binary_data_output: 'yes' } }), 400, "Unable to parse 'binary_data_output'");
});

test('an unknown datatype is 400 naming it and the input', async () => {
  await assertError(
    inferSimple({ inputs: [{ ...int32('INPUT0', A), datatype: 'INT33' }, int32('INPUT1', B)] }),
    400,
    /^invalid datatype 'INT33' for input 'INPUT0'; expected one of BOOL, .*BYTES$/,
  );
  await assertError(inferSimple({ inputs: [{ ...int32('INPUT0', A), datatype: 'int32' }, int32('INPUT1', B)] }), 400, /invalid datatype 'int32' for input 'INPUT0'/);
  await assertError(inferSimple({ inputs: [{ ...int32('INPUT0', A), datatype: 32 }, int32('INPUT1', B)] }), 400, /'datatype' of input 'INPUT0': expected a string, got a number/);
});

test('shape and data element counts that differ are 400 with both counts', async () => {
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', A.slice(1)), int32('INPUT1', B)] }),
    400,
    "Unable to parse 'data' for input 'INPUT0': shape [1,16] has 16 element(s) but 'data' has 15",
  );
  await assertError(inferSimple({ inputs: [int32('INPUT0', [...A, 16]), int32('INPUT1', B)] }), 400, /shape \[1,16\] has 16 element\(s\) but 'data' has 17/);
  await assertError(inferSimple({ inputs: [int32('INPUT0', 5), int32('INPUT1', B)] }), 400, /'data' for input 'INPUT0': expected an array, got 5/);
});

test('JSON values of the wrong type are 400 naming the element, the value and the datatype', async () => {
  const withAt = (i: number, v: unknown) => A.map((x, j) => (j === i ? v : x));
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', withAt(3, 'x')), int32('INPUT1', B)] }),
    400,
    `Unable to parse 'data' for input 'INPUT0': element 3 is "x", expected an integer for datatype INT32`,
  );
  await assertError(inferSimple({ inputs: [int32('INPUT0', withAt(0, '1')), int32('INPUT1', B)] }), 400, /element 0 is "1", expected an integer/);
  await assertError(inferSimple({ inputs: [int32('INPUT0', withAt(5, 1.5)), int32('INPUT1', B)] }), 400, /element 5 is 1\.5, expected an integer for datatype INT32/);
  await assertError(inferSimple({ inputs: [int32('INPUT0', withAt(2, true)), int32('INPUT1', B)] }), 400, /element 2 is true, expected an integer/);
  await assertError(inferSimple({ inputs: [int32('INPUT0', withAt(2, null)), int32('INPUT1', B)] }), 400, /element 2 is null, expected an integer/);
  await assertError(inferSimple({ inputs: [int32('INPUT0', withAt(2, { v: 1 })), int32('INPUT1', B)] }), 400, /element 2 is an object/);
  // BYTES wants strings.
  const strings = A.map(String);
  await assertError(
    postJson(`${url}/v2/models/simple_string/infer`, {
      inputs: [
        { name: 'INPUT0', datatype: 'BYTES', shape: [1, 16], data: [42, ...strings.slice(1)] },
        { name: 'INPUT1', datatype: 'BYTES', shape: [1, 16], data: strings },
      ],
    }),
    400,
    "Unable to parse 'data' for input 'INPUT0': element 0 is 42, expected a string for datatype BYTES",
  );
});

test('out-of-range integers are 400 with the datatype range, never clamped', async () => {
  const withAt = (i: number, v: number) => A.map((x, j) => (j === i ? v : x));
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', withAt(1, 2 ** 31)), int32('INPUT1', B)] }),
    400,
    `Unable to parse 'data' for input 'INPUT0': element 1 is 2147483648, expected an integer in [-2147483648, 2147483647] for datatype INT32`,
  );
  await assertError(inferSimple({ inputs: [int32('INPUT0', withAt(1, -(2 ** 31) - 1)), int32('INPUT1', B)] }), 400, /element 1 is -2147483649/);
  await assertError(
    postJson(`${url}/v2/models/simple_int8/infer`, {
      inputs: [
        { name: 'INPUT0', datatype: 'INT8', shape: [1, 16], data: withAt(0, 200) },
        { name: 'INPUT1', datatype: 'INT8', shape: [1, 16], data: B },
      ],
    }),
    400,
    /element 0 is 200, expected an integer in \[-128, 127\] for datatype INT8/,
  );
  // A huge integer literal beyond 2^64 is refused (JSON.parse has already rounded it for the message).
  const text =
    `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[${A.slice(1).join(',')},18446744073709551616]},` +
    `{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":[${B.join(',')}]}]}`;
  await assertError(post('/v2/models/simple/infer', text), 400, /element 15 is 184467440737095\d+, expected an integer in \[-2147483648, 2147483647\]/);
});

test('nested data: leaves are counted whatever the nesting (as Triton), but a wrong count, mixed leaves or over-deep nesting is 400', async () => {
  // Nested to match the shape: accepted.
  const nested = await inferSimple({ inputs: [int32('INPUT0', [A]), int32('INPUT1', [B.slice(0, 8), B.slice(8)])], outputs: [{ name: 'OUTPUT1' }] });
  assert.equal(nested.status, 200, nested.body.toString());
  assert.deepEqual(
    (nested.json() as { outputs: { data: number[] }[] }).outputs[0]?.data,
    A.map((x) => x - 1),
  );
  // Ragged rows whose leaves do not add up to the shape.
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', [A.slice(0, 8), A.slice(8, 15)]), int32('INPUT1', B)] }),
    400,
    /'data' for input 'INPUT0': shape \[1,16\] has 16 element\(s\) but 'data' has 15/,
  );
  // A flat array with an array inside it: that element is not a number.
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', [0, [1, 2], ...A.slice(2)]), int32('INPUT1', B)] }),
    400,
    /'data' for input 'INPUT0': element 1 is an array, expected an integer/,
  );
  // Nesting deeper than Triton's limit of 100.
  let deep: unknown = A;
  for (let i = 0; i < 100; i++) deep = [deep];
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', deep), int32('INPUT1', B)] }),
    400,
    /'data' for input 'INPUT0': JSON nesting depth exceeds maximum allowed limit \(100\)/,
  );
});

// ---- the request against the model's config ----

test("a wrong shape is 400 with Triton's 'unexpected shape' message", async () => {
  const error = await assertError(
    inferSimple({ inputs: [int32('INPUT0', A.slice(1), [1, 15]), int32('INPUT1', B)] }),
    400,
    /^\[request id: <id_unknown>\] unexpected shape for input 'INPUT0' for model 'simple'\. Expected \[-1,16\], got \[1,15\]\. NOTE: Setting a non-zero max_batch_size/,
  );
  assert.ok(error.includes('max_batch_size'));
  // The request id is quoted when there is one.
  await assertError(
    inferSimple({ id: 'r9', inputs: [int32('INPUT0', A, [2, 8]), int32('INPUT1', B, [2, 8])] }),
    400,
    /^\[request id: r9\] unexpected shape for input 'INPUT0' for model 'simple'\. Expected \[-1,16\], got \[2,8\]/,
  );
  // Without the batch dim the first dim is taken as the batch, as Triton does: 16 > 8.
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', A, [16]), int32('INPUT1', B, [16])] }),
    400,
    "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'simple'",
  );
  await assertError(inferSimple({ inputs: [int32('INPUT0', [5], []), int32('INPUT1', B)] }), 400, /input 'INPUT0' has no shape but model requires batch dimension for 'simple'/);
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', [...A, ...A], [2, 16]), int32('INPUT1', B)] }),
    400,
    /input 'INPUT1' batch size does not match other inputs for 'simple'/,
  );
});

test('a batch over max_batch_size (simple: 8) is 400; 8 is served', async () => {
  const rows = (n: number) => range(n * 16, (i) => i % 16);
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', rows(9), [9, 16]), int32('INPUT1', rows(9), [9, 16])] }),
    400,
    "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'simple'",
  );
  await assertError(inferSimple({ inputs: [int32('INPUT0', [], [0, 16]), int32('INPUT1', [], [0, 16])] }), 400, /batch-size must be >= 1 for 'simple'/);
  const eight = await inferSimple({ inputs: [int32('INPUT0', rows(8), [8, 16]), int32('INPUT1', rows(8), [8, 16])] });
  assert.equal(eight.status, 200, eight.body.toString());
});

test('a missing input is 400 naming what is missing', async () => {
  await assertError(
    inferSimple({ inputs: [int32('INPUT0', A)] }),
    400,
    "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'simple'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all required input(s).",
  );
  await assertError(inferSimple({ inputs: [] }), 400, /expected 2 inputs but got 0 inputs for model 'simple'.*missing required input\(s\) \['INPUT0','INPUT1'\]/);
});

test('an unexpected input name is 400 naming it', async () => {
  await assertError(inferSimple({ inputs: [int32('INPUT0', A), int32('INPUTX', B)] }), 400, "unexpected inference input 'INPUTX' for model 'simple'");
  await assertError(inferSimple({ inputs: [...goodInputs(), int32('INPUT2', B)] }), 400, /expected 2 inputs but got 3 inputs for model 'simple'/);
});

test('an unexpected requested output is 400 naming it', async () => {
  await assertError(inferSimple({ inputs: goodInputs(), outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUTX' }] }), 400, "unexpected inference output 'OUTPUTX' for model 'simple'");
  await assertError(inferSimple({ inputs: goodInputs(), outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT0' }] }), 400, "output 'OUTPUT0' already exists in request");
  await assertError(
    inferSimple({ inputs: goodInputs(), outputs: [{ name: 'OUTPUT0', parameters: { binary_data: 'yes' } }] }),
    400,
    /'binary_data' of output 'OUTPUT0': expected true or false/,
  );
});

test('a wrong datatype for an input (FP32 to INT32) is 400 naming both types', async () => {
  await assertError(
    inferSimple({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: A.map((x) => x + 0.5) }, int32('INPUT1', B)] }),
    400,
    "[request id: <id_unknown>] inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'",
  );
});

// ---- models, versions, routes, methods ----

test('an unknown model is 400 "Request for unknown model: \'nope\' is not found" on every model route', async () => {
  const message = "Request for unknown model: 'nope' is not found";
  await assertError(postJson(`${url}/v2/models/nope/infer`, { inputs: goodInputs() }), 400, message);
  // The model is looked up before the body is read, as in Triton.
  await assertError(post('/v2/models/nope/infer', '{"inputs": ['), 400, message);
  await assertError(post('/v2/models/nope/infer', '{}', { 'Inference-Header-Content-Length': 'abc' }), 400, message);
  await assertError(request(`${url}/v2/models/nope`), 400, message);
  await assertError(request(`${url}/v2/models/nope/config`), 400, message);
  await assertError(request(`${url}/v2/models/nope/ready`), 400, message);
  // Statistics have wording of their own in Triton (core tritonserver.cc TRITONSERVER_ServerModelStatistics).
  await assertError(request(`${url}/v2/models/nope/stats`), 400, "requested model 'nope' is not available");
});

test('an unknown version is 404 naming model and version', async () => {
  // NOT_FOUND in Triton's model_lifecycle.cc GetModel, which HttpCodeFromError answers 404.
  const message = "Request for unknown model: 'simple' version 2 is not found";
  await assertError(postJson(`${url}/v2/models/simple/versions/2/infer`, { inputs: goodInputs() }), 404, message);
  await assertError(request(`${url}/v2/models/simple/versions/2`), 404, message);
  await assertError(request(`${url}/v2/models/simple/versions/2/ready`), 404, message);
  await assertError(request(`${url}/v2/models/simple/versions/2/stats`), 400, "requested model version is not available for model 'simple'");
  const ok = await postJson(`${url}/v2/models/simple/versions/1/infer`, { inputs: goodInputs() });
  assert.equal(ok.status, 200, ok.body.toString());
});

test('a non-numeric version in the URL is 400 naming it', async () => {
  // Triton's words (core GetModelVersionFromString), which tritonclient's grpc_explicit_*_client examples match on.
  for (const version of ['abc', '-1', '1.0']) {
    await assertError(
      postJson(`${url}/v2/models/simple/versions/${version}/infer`, { inputs: goodInputs() }),
      400,
      `failed to get model version from specified version string '${version}' (details: versions are non-negative integers), version should be an integral value > 0`,
    );
  }
  await assertError(request(`${url}/v2/models/simple/versions/x1`), 400, /failed to get model version from specified version string 'x1'/);
  // Digits beyond what a version can be are refused as such, not looked up as "version 1e+23".
  await assertError(
    request(`${url}/v2/models/simple/versions/99999999999999999999999`),
    400,
    "failed to get model version from specified version string '99999999999999999999999' (details: out of range, at most 9007199254740991), version should be an integral value > 0",
  );
});

test('a model that failed to load (densenet_onnx) is 404 with its load failure reason', async () => {
  // Triton's model_lifecycle.cc GetModel: NOT_FOUND "has no available versions", answered 404. Herd adds the reason.
  const error = await assertError(
    postJson(`${url}/v2/models/densenet_onnx/infer`, { inputs: [] }),
    404,
    /^Request for unknown model: 'densenet_onnx' has no available versions \(.*at least one version must be available.*\)$/,
  );
  assert.ok(error.includes('densenet_onnx'));
  await assertError(request(`${url}/v2/models/densenet_onnx`), 404, /'densenet_onnx' has no available versions/);
  await assertError(request(`${url}/v2/models/densenet_onnx/config`), 404, /'densenet_onnx' has no available versions/);
  await assertError(request(`${url}/v2/models/densenet_onnx/ready`), 404, /'densenet_onnx' has no available versions/);
  await assertError(request(`${url}/v2/models/densenet_onnx/stats`), 400, "requested model 'densenet_onnx' is not available");
});

test('an unknown route is 404 with an {"error"} body', async () => {
  await assertError(request(`${url}/v2/nope`), 404, 'Not Found: no route for GET /v2/nope');
  await assertError(postJson(`${url}/v3/models/simple/infer`, { inputs: goodInputs() }), 404, /no route for POST \/v3\/models\/simple\/infer/);
  await assertError(request(`${url}/v2/models/simple/infer/extra`, { method: 'POST' }), 404, /no route for POST/);
  await assertError(request(`${url}/`), 404, /no route for GET \/$/);
  // A trailing slash is another path (Triton: 404), not a wrong method on the same one.
  await assertError(postJson(`${url}/v2/models/simple/infer/`, { inputs: goodInputs() }), 404, 'Not Found: no route for POST /v2/models/simple/infer/');
  await assertError(request(`${url}/v2/health/live/`), 404, /no route for GET \/v2\/health\/live\/$/);
});

test('a wrong method is 405 with an Allow header', async () => {
  const getInfer = await request(`${url}/v2/models/simple/infer`);
  assert.equal(getInfer.headers.get('allow'), 'POST');
  await assertError(getInfer, 405, 'Method Not Allowed: GET /v2/models/simple/infer (allowed: POST)');
  const postLive = await request(`${url}/v2/health/live`, { method: 'POST' });
  assert.equal(postLive.headers.get('allow'), 'GET, HEAD');
  await assertError(postLive, 405, /Method Not Allowed: POST \/v2\/health\/live/);
  const putIndex = await request(`${url}/v2/repository/index`, { method: 'PUT', body: '{}' });
  assert.equal(putIndex.headers.get('allow'), 'POST');
  await assertError(putIndex, 405, /PUT \/v2\/repository\/index/);
  const deleteVersion = await request(`${url}/v2/models/simple/versions/1/infer`, { method: 'DELETE' });
  assert.equal(deleteVersion.headers.get('allow'), 'POST');
  await assertError(deleteVersion, 405, /DELETE/);
});

// ---- classification on a type that cannot be ranked ----

test('classification of a BYTES output is 400 naming the type', async () => {
  const strings = (n: number) => range(16, () => n).map(String);
  await assertError(
    postJson(`${url}/v2/models/simple_string/infer`, {
      inputs: [
        { name: 'INPUT0', datatype: 'BYTES', shape: [1, 16], data: strings(1) },
        { name: 'INPUT1', datatype: 'BYTES', shape: [1, 16], data: strings(2) },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { classification: 2 } }],
    }),
    400,
    "class result not available for output due to unsupported type 'BYTES'",
  );
  await assertError(
    inferSimple({ inputs: goodInputs(), outputs: [{ name: 'OUTPUT0', parameters: { classification: -1 } }] }),
    400,
    /'classification' of output 'OUTPUT0': expected a non-negative integer/,
  );
});

// ---- a broken config.pbtxt ----

test('a config.pbtxt with a syntax error: UNAVAILABLE in the index with file:line:column; the rest of its repository serves', async () => {
  const index = (await postJson(`${url}/v2/repository/index`, {})).json() as { name: string; state?: string; reason?: string }[];
  const broken = index.find((e) => e.name === 'broken_config');
  assert.equal(broken?.state, 'UNAVAILABLE');
  // Repository-relative, never the absolute path (docs/security.md: errors show repository-relative paths).
  assert.ok(broken?.reason?.includes('broken_config/config.pbtxt:4:'), broken?.reason);
  assert.ok(!broken?.reason?.includes(tempRepository), broken?.reason);
  assert.match(broken?.reason ?? '', /config\.pbtxt:4:\d+: /);
  assert.equal(index.find((e) => e.name === 'echo_int32')?.state, 'READY');

  await assertError(postJson(`${url}/v2/models/broken_config/infer`, { inputs: [] }), 404, /'broken_config' has no available versions \(.*config\.pbtxt:4:\d+/);
  const echo = await postJson(`${url}/v2/models/echo_int32/infer`, { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1, 2], data: [7, -7] }] });
  assert.equal(echo.status, 200, echo.body.toString());
  assert.deepEqual((echo.json() as { outputs: unknown[] }).outputs, [{ name: 'OUT', datatype: 'INT32', shape: [1, 2], data: [7, -7] }]);
});

test('the control API refuses malformed bodies with an {"error"} body', async () => {
  await assertError(post('/v2/repository/index', '{"ready": '), 400, /failed to parse the request JSON buffer/);
  await assertError(post('/v2/repository/index', '[]'), 400, 'request body must be a JSON object');
  await assertError(postJson(`${url}/v2/repository/index`, { ready: 'yes' }), 400, "'ready' must be true or false");
});
