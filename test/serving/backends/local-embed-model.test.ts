// The example model local-embed on the real `js` backend with its own config.pbtxt: unit vectors of the
// configured size, the same text always the same vector, similar texts closer than unrelated ones,
// one execute() for a whole batch, and parameters checked at load.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Tensor } from '../../../src/core/tensor.ts';
import type { Backend, InferenceRequest } from '../../../src/serving/backends/backend.ts';
import { jsBackend } from '../../../src/serving/backends/js/js-backend.ts';
import { encodeBytes } from '../../../src/serving/backends/js/model-api.ts';
import { parsePbtxtModelConfig } from '../../../src/serving/repository/parse-model-config.ts';

const MODEL_DIR = fileURLToPath(new URL('../../../examples/model_repository/local-embed/', import.meta.url));

const loaded: Backend[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.allSettled(loaded.map((b) => b.unload()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function load(modelPath = MODEL_DIR): Promise<Backend> {
  const file = join(modelPath, 'config.pbtxt');
  const config = parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, 'local-embed');
  const backend = await jsBackend.load({ config, modelPath, versionPath: join(modelPath, '1'), version: 1, instanceName: 'local-embed_0', instanceKind: 'KIND_CPU' });
  loaded.push(backend);
  return backend;
}

function textRequest(texts: string[]): InferenceRequest {
  const input: Tensor = { name: 'text_input', datatype: 'BYTES', shape: [texts.length, 1], data: texts.map(encodeBytes) };
  return { id: '', modelName: 'local-embed', modelVersion: 1, inputs: [input], requestedOutputs: [], parameters: {} };
}

async function embed(backend: Backend, ...batches: string[][]): Promise<Float32Array[][]> {
  const results = await backend.execute(batches.map(textRequest));
  return results.map((result, i) => {
    assert.ok(!('error' in result && result.error), String((result as { error?: unknown }).error));
    const out = (result as { outputs: Tensor[] }).outputs[0]!;
    assert.equal(out.name, 'embedding');
    assert.equal(out.datatype, 'FP32');
    assert.deepEqual(out.shape, [batches[i]!.length, 256]);
    const data = out.data as Float32Array;
    return batches[i]!.map((_, j) => data.subarray(j * 256, (j + 1) * 256));
  });
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

describe('example model local-embed', () => {
  it('answers one L2-normalised 256-float vector per text, the same for the same text', async () => {
    const backend = await load();
    const [[a, b, c]] = (await embed(backend, ['Hello world', 'hello   WORLD', '部署多模型推理'])) as [[Float32Array, Float32Array, Float32Array]];
    for (const v of [a, b, c]) assert.ok(Math.abs(dot(v, v) - 1) < 1e-5, 'unit length');
    const [[again]] = (await embed(backend, ['Hello world'])) as [[Float32Array]];
    assert.deepEqual(Array.from(again), Array.from(a), 'deterministic');
    assert.ok(dot(a, b) > 0.5, `case and spacing barely matter: ${dot(a, b)}`);
    assert.ok(Math.abs(dot(a, c)) < 0.3, `unrelated texts are far apart: ${dot(a, c)}`);
  });

  it('ranks a paraphrase above an unrelated sentence', async () => {
    const backend = await load();
    const [[query, close, far]] = (await embed(backend, ['the cat sat on the mat', 'a cat was sitting on a mat', 'quarterly revenue grew by four percent'])) as [
      [Float32Array, Float32Array, Float32Array],
    ];
    assert.ok(dot(query, close) > dot(query, far) + 0.2, `${dot(query, close)} vs ${dot(query, far)}`);
  });

  it('executes several requests in one call, each answered with its own texts', async () => {
    const backend = await load();
    const [first, second] = await embed(backend, ['one', 'two'], ['three']);
    const [[alone]] = (await embed(backend, ['three'])) as [[Float32Array]];
    assert.equal(first!.length, 2);
    assert.deepEqual(Array.from(second![0]!), Array.from(alone));
  });

  it('refuses a dimensions parameter that disagrees with the output dims at load', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-local-embed-'));
    dirs.push(dir);
    cpSync(MODEL_DIR, dir, { recursive: true });
    const file = join(dir, 'config.pbtxt');
    writeFileSync(file, readFileSync(file, 'utf8').replace('string_value: "256"', 'string_value: "128"'));
    await assert.rejects(load(dir), /dims \[256\] but parameter 'dimensions' is 128/);
  });
});
