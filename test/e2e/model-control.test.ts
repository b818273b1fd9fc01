// Model control modes over HTTP, with Triton's semantics: explicit loads/unloads on request,
// poll rescans (and keeps a serving version when its update is broken).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, request, startTestServer, TRITON_REPOSITORY } from './start-test-server.ts';

function tempRepository(models: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-control-'));
  for (const m of models) cpSync(join(TRITON_REPOSITORY, m), join(dir, m), { recursive: true });
  return dir;
}

const simpleInfer = (url: string, model = 'simple') =>
  postJson(`${url}/v2/models/${model}/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: model === 'simple_int8' ? 'INT8' : 'INT32', shape: [1, 16], data: Array(16).fill(1) },
      { name: 'INPUT1', datatype: model === 'simple_int8' ? 'INT8' : 'INT32', shape: [1, 16], data: Array(16).fill(2) },
    ],
  });

type IndexEntry = { name: string; version?: string; state?: string; reason?: string };
const index = async (url: string) => (await postJson(`${url}/v2/repository/index`, {})).json() as IndexEntry[];

test('explicit mode: only --load-model at start, then load and unload through the API', async () => {
  const repo = tempRepository(['simple', 'simple_int8']);
  const server = await startTestServer({ repositories: [repo], controlMode: 'explicit', loadModel: ['simple'] });
  const url = server.httpUrl;
  try {
    assert.deepEqual(await index(url), [{ name: 'simple', version: '1', state: 'READY', reason: '' }, { name: 'simple_int8' }]);
    assert.equal((await simpleInfer(url, 'simple_int8')).status, 400);

    const load = await postJson(`${url}/v2/repository/models/simple_int8/load`, {});
    assert.equal(load.status, 200, load.body.toString());
    assert.equal((await simpleInfer(url, 'simple_int8')).status, 200);

    const unload = await request(`${url}/v2/repository/models/simple/unload`, { method: 'POST' });
    assert.equal(unload.status, 200);
    // An unloaded model is known but has nothing to serve: NOT_FOUND (404), as in Triton, where unloading
    // leaves the name in its global map with no identifier (model_repository_manager.cc FindModelIdentifier).
    const gone = await simpleInfer(url);
    assert.equal(gone.status, 404);
    assert.equal((gone.json() as { error: string }).error, "Request for unknown model: 'simple' has no available versions (unloaded)");
    const entry = (await index(url)).find((e) => e.name === 'simple');
    assert.equal(entry?.state, 'UNAVAILABLE');
    assert.equal(entry?.reason, 'unloaded');
    assert.equal((await request(`${url}/v2/models/simple/ready`)).status, 404);

    // Triton's status and words (INTERNAL: its poll of the repository failed), then the reason it only logs.
    const unknown = await postJson(`${url}/v2/repository/models/nope/load`, {});
    assert.equal(unknown.status, 500);
    assert.equal((unknown.json() as { error: string }).error, "failed to load 'nope', failed to poll from model repository: model not found in any model repository");
  } finally {
    await server.close();
  }
});

test('explicit mode: a JSON config override replaces config.pbtxt; a bad one is refused', async () => {
  const repo = tempRepository(['simple']);
  const server = await startTestServer({ repositories: [repo], controlMode: 'explicit' });
  const url = server.httpUrl;
  try {
    const config = await (async () => {
      await postJson(`${url}/v2/repository/models/simple/load`, {});
      return (await request(`${url}/v2/models/simple/config`)).json() as Record<string, unknown>;
    })();
    const override = { ...config, max_batch_size: 4 };
    const res = await postJson(`${url}/v2/repository/models/simple/load`, { parameters: { config: JSON.stringify(override) } });
    assert.equal(res.status, 200, res.body.toString());
    const after = (await request(`${url}/v2/models/simple/config`)).json() as Record<string, unknown>;
    assert.equal(after['max_batch_size'], 4);

    const bad = await postJson(`${url}/v2/repository/models/simple/load`, { parameters: { config: '{"name": "simple", "max_batch_size": "lots"' } });
    assert.equal(bad.status, 400);
    assert.match((bad.json() as { error: string }).error, /^failed to load 'simple': the config override is not valid JSON/);
    assert.equal((await simpleInfer(url)).status, 200, 'a failed reload keeps the loaded model serving');
    const noBackend = await postJson(`${url}/v2/repository/models/simple/load`, { parameters: { config: '{"max_batch_size": 16}' } });
    assert.equal(noBackend.status, 200, `the backend is found from 1/model.onnx: ${noBackend.body.toString()}`);
    assert.equal(((await request(`${url}/v2/models/simple/config`)).json() as Record<string, unknown>)['max_batch_size'], 16);
    const notString = await postJson(`${url}/v2/repository/models/simple/load`, { parameters: { config: { name: 'simple' } } });
    assert.equal(notString.status, 400);
    const badBody = await request(`${url}/v2/repository/models/simple/load`, { method: 'POST', body: '{not json' });
    assert.equal(badBody.status, 400);
    assert.match((badBody.json() as { error: string }).error, /failed to parse the request JSON/);
  } finally {
    await server.close();
  }
});

test('poll mode: new models load, removed ones unload, a broken update keeps the serving version', async () => {
  const repo = tempRepository(['simple']);
  const server = await startTestServer({ repositories: [repo], controlMode: 'poll' });
  const url = server.httpUrl;
  try {
    assert.equal((await simpleInfer(url)).status, 200);
    cpSync(join(TRITON_REPOSITORY, 'simple_int8'), join(repo, 'simple_int8'), { recursive: true });
    await server.repository.poll();
    assert.equal((await simpleInfer(url, 'simple_int8')).status, 200);

    writeFileSync(join(repo, 'simple', 'config.pbtxt'), 'name: "simple"\nmax_batch_size: [oops\n');
    await server.repository.poll();
    assert.equal((await simpleInfer(url)).status, 200, 'the old version keeps serving');
    const entry = (await index(url)).find((e) => e.name === 'simple');
    assert.equal(entry?.state, 'READY');
    assert.match(entry?.reason ?? '', /reload failed.*config\.pbtxt:2:\d+/);

    rmSync(join(repo, 'simple_int8'), { recursive: true });
    await server.repository.poll();
    assert.equal((await simpleInfer(url, 'simple_int8')).status, 400);

    const refused = await postJson(`${url}/v2/repository/models/simple/load`, {});
    assert.equal(refused.status, 503);
  } finally {
    await server.close();
  }
});
