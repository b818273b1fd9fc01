// Load with file overrides over HTTP (`file:<path>` parameters in base64, as tritonclient's http load_model sends
// them): the model serves from a temporary folder that goes with it (replaced, unloaded, server closed).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { postJson, startTestServer, TRITON_REPOSITORY } from './start-test-server.ts';

// os.tmpdir() reads TMPDIR on each call: the server's temporary model folders land where this test can count them.
const temp = mkdtempSync(join(tmpdir(), 'herd-load-files-test-'));
const previousTmpdir = process.env['TMPDIR'];
before(() => {
  process.env['TMPDIR'] = temp;
});
after(() => {
  if (previousTmpdir === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = previousTmpdir;
  rmSync(temp, { recursive: true, force: true });
});

const onnx = readFileSync(join(TRITON_REPOSITORY, 'simple', '1', 'model.onnx')).toString('base64');
const config = (maxBatchSize: number) => JSON.stringify({ backend: 'onnxruntime', max_batch_size: maxBatchSize });
const folders = () => readdirSync(temp).filter((n) => n.startsWith('herd-model-files-'));
const load = (url: string, model: string, parameters: Record<string, unknown>) => postJson(`${url}/v2/repository/models/${model}/load`, { parameters });
const error = (answer: { json: () => unknown }) => (answer.json() as { error: string }).error;

const infer = (url: string, model: string) =>
  postJson(`${url}/v2/models/${model}/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(2) },
    ],
  });

test('HTTP: a model built from files serves, and its temporary folder lives exactly as long as it', async () => {
  const server = await startTestServer({ repositories: [TRITON_REPOSITORY], controlMode: 'explicit' });
  const url = server.httpUrl;
  try {
    const first = await load(url, 'sent', { config: config(8), 'file:1/model.onnx': onnx });
    assert.equal(first.status, 200, first.body.toString());
    assert.equal((await infer(url, 'sent')).status, 200);
    const [folder] = folders();
    assert.equal(folders().length, 1);
    assert.deepEqual(readdirSync(join(temp, folder as string, 'sent', '1')), ['model.onnx']);

    // A new load replaces the model and its folder; a failed one keeps both.
    assert.equal((await load(url, 'sent', { config: config(4), 'file:1/model.onnx': onnx })).status, 200);
    assert.equal(folders().length, 1);
    assert.notEqual(folders()[0], folder);
    const broken = await load(url, 'sent', { config: config(2), 'file:1/model.onnx': Buffer.from('not onnx').toString('base64') });
    assert.equal(broken.status, 400);
    assert.match(error(broken), /^failed to load 'sent': /);
    assert.equal(folders().length, 1, "the failed load's folder is gone, the serving one stays");
    assert.equal((await infer(url, 'sent')).status, 200);

    assert.equal((await postJson(`${url}/v2/repository/models/sent/unload`, {})).status, 200);
    assert.deepEqual(folders(), []);

    // A repository model reloaded from files, then from the repository again: the override is undone.
    assert.equal((await load(url, 'simple', { config: config(3), 'file:1/model.onnx': onnx })).status, 200);
    assert.equal(folders().length, 1);
    assert.equal((await load(url, 'simple', {})).status, 200);
    assert.deepEqual(folders(), []);

    assert.equal((await load(url, 'kept', { config: config(8), 'file:1/model.onnx': onnx })).status, 200);
  } finally {
    await server.close();
  }
  assert.deepEqual(folders(), [], 'closing the server removes the folders of the models built from files');
});

test("HTTP: Triton's refusals, with its status and words first, then the reason", async () => {
  const server = await startTestServer({ repositories: [TRITON_REPOSITORY], controlMode: 'explicit' });
  const url = server.httpUrl;
  try {
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [
        { config: '{}', [`file:${'A'.repeat(256)}`]: 'YQ==' },
        500,
        /^failed to load 'simple', failed to poll from model repository: Invalid file parameter 'A{256}': File name too long/,
      ],
      [{ 'file:1/model.onnx': onnx }, 500, /failed to poll from model repository: Load parameter 'config' must be specified for model file override$/],
      [{ config: '{}', 'file:1/../../x': 'YQ==' }, 500, /Invalid file parameter 'file:1\/..\/..\/x' with normalized path '..\/x' must stay within model directory\.$/],
      [{ config: '{}', 'file:/tmp/x': 'YQ==' }, 500, /with normalized path '\/tmp\/x' must stay within model directory\.$/],
      [{ config: '{}', 'file:1': 'YQ==', 'file:1/model.onnx': onnx }, 500, /Invalid file parameter 'file:1\/model.onnx', directory has been created as a file$/],
      [{ config: '{}', 'file:1/model.onnx': 7 }, 400, /^invalid value type for load parameter 'file:1\/model.onnx', expected a base64 string\.$/],
      [{ config: { max_batch_size: 1 } }, 400, /^invalid value type for load parameter 'config', expected a string\.$/],
      [{ unload_dependents: 'true' }, 400, /^unrecognized load parameter 'unload_dependents'\.$/],
    ];
    for (const [parameters, status, message] of cases) {
      const answer = await load(url, 'simple', parameters);
      assert.equal(answer.status, status, answer.body.toString());
      assert.match(error(answer), message);
    }
    // The sent config is a load-API override: the files it names stay inside the temporary model folder.
    const outside = await load(url, 'sent', { config: JSON.stringify({ backend: 'onnxruntime', default_model_filename: '../../../simple/1/model.onnx' }), 'file:1/x': 'YQ==' });
    assert.equal(outside.status, 400);
    assert.match(error(outside), /^failed to load 'sent': model 'sent': default_model_filename '..\/..\/..\/simple\/1\/model.onnx' resolves outside the model directory/);
    assert.deepEqual(folders(), [], 'a refused load leaves nothing behind');
    assert.deepEqual((await postJson(`${url}/v2/repository/index`, { ready: true })).json(), [], 'nothing loaded');

    const unknown = await load(url, 'nope', {});
    assert.equal(unknown.status, 500);
    assert.equal(error(unknown), "failed to load 'nope', failed to poll from model repository: model not found in any model repository");
  } finally {
    await server.close();
  }
});
