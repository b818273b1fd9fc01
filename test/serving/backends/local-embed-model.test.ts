// The example model local-embed's js step, local-embed-tokenizer, on the real `js` backend with its own
// config.pbtxt: 32 ids in [1, 8192) then pad 0 with a matching mask, the same text always the same ids,
// shared words shared ids, one execute() for a whole batch, and its parameters checked at load.
// The ONNX step is checked against a JS reference in test/scripts/generate-example-models.test.ts.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LOCAL_EMBED_TOKENS, LOCAL_EMBED_VOCAB } from '../../../scripts/onnx/example-models.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import type { Backend, InferenceRequest } from '../../../src/serving/backends/backend.ts';
import { jsBackend } from '../../../src/serving/backends/js/js-backend.ts';
import { encodeBytes } from '../../../src/serving/backends/js/model-api.ts';
import { parsePbtxtModelConfig } from '../../../src/serving/model-config/parse-model-config.ts';

const MODEL_DIR = fileURLToPath(new URL('../../../examples/model_repository/local-embed-tokenizer/', import.meta.url));

const loaded: Backend[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.allSettled(loaded.map((b) => b.unload()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function load(modelPath = MODEL_DIR): Promise<Backend> {
  const file = join(modelPath, 'config.pbtxt');
  const config = parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, 'local-embed-tokenizer');
  const backend = await jsBackend.load({ config, modelPath, versionPath: join(modelPath, '1'), version: 1, instanceName: 'local-embed-tokenizer_0', instanceKind: 'KIND_CPU' });
  loaded.push(backend);
  return backend;
}

function textRequest(texts: string[]): InferenceRequest {
  const input: Tensor = { name: 'text_input', datatype: 'BYTES', shape: [texts.length, 1], data: texts.map(encodeBytes) };
  return { id: '', modelName: 'local-embed-tokenizer', modelVersion: 1, inputs: [input], requestedOutputs: [], parameters: {} };
}

interface Tokens {
  ids: number[];
  mask: number[];
}

async function tokenize(backend: Backend, ...batches: string[][]): Promise<Tokens[][]> {
  const L = LOCAL_EMBED_TOKENS;
  const results = await backend.execute(batches.map(textRequest));
  return results.map((result, i) => {
    assert.ok(!('error' in result && result.error), String((result as { error?: unknown }).error));
    const [ids, mask] = (result as { outputs: Tensor[] }).outputs as [Tensor, Tensor];
    assert.deepEqual([ids.name, ids.datatype, ids.shape], ['token_ids', 'INT64', [batches[i]!.length, L]]);
    assert.deepEqual([mask.name, mask.datatype, mask.shape], ['attention_mask', 'FP32', [batches[i]!.length, L]]);
    return batches[i]!.map((_, j) => ({
      ids: Array.from((ids.data as BigInt64Array).subarray(j * L, (j + 1) * L), Number),
      mask: Array.from((mask.data as Float32Array).subarray(j * L, (j + 1) * L)),
    }));
  });
}

const tokens = (t: Tokens) => t.ids.filter((_, i) => t.mask[i] === 1);

describe('example model local-embed-tokenizer', () => {
  it('pads each text to 32 ids below the vocabulary, 0 where the mask is 0, the same for the same text', async () => {
    const backend = await load();
    const [[a, b, long, empty]] = (await tokenize(backend, ['Hello world', 'hello   WORLD', 'word '.repeat(40), ''])) as [[Tokens, Tokens, Tokens, Tokens]];
    for (const t of [a, b, long, empty]) {
      for (const [i, id] of t.ids.entries()) {
        if (t.mask[i] === 1) assert.ok(id >= 1 && id < LOCAL_EMBED_VOCAB, `id ${id}`);
        else assert.equal(id, 0);
      }
      const count = t.mask.filter((m) => m === 1).length;
      assert.deepEqual(t.mask, [...Array(count).fill(1), ...Array(LOCAL_EMBED_TOKENS - count).fill(0)], 'tokens first, then padding');
    }
    assert.deepEqual(a, b, 'case and spacing do not matter');
    assert.equal(tokens(a).length, 2 + 5 + 5, 'two words, then the five trigrams of " hello " and of " world "');
    assert.equal(tokens(long).length, LOCAL_EMBED_TOKENS, 'a long text is truncated');
    assert.equal(tokens(empty).length, 0);
  });

  it('gives shared words shared ids', async () => {
    const backend = await load();
    const [[query, close, far]] = (await tokenize(backend, ['the cat sat on the mat', 'a cat was sitting on a mat', 'quarterly revenue grew'])) as [[Tokens, Tokens, Tokens]];
    const shared = (x: Tokens, y: Tokens) => tokens(x).filter((id) => tokens(y).includes(id)).length;
    assert.ok(shared(query, close) > shared(query, far) + 3, `${shared(query, close)} vs ${shared(query, far)}`);
  });

  it('executes several requests in one call, each answered with its own texts', async () => {
    const backend = await load();
    const [first, second] = await tokenize(backend, ['one', 'two'], ['three']);
    const [[alone]] = (await tokenize(backend, ['three'])) as [[Tokens]];
    assert.equal(first!.length, 2);
    assert.deepEqual(second![0], alone);
  });

  it('refuses a vocab_size that is not an integer of at least 2 at load', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-local-embed-tokenizer-'));
    dirs.push(dir);
    cpSync(MODEL_DIR, dir, { recursive: true });
    const file = join(dir, 'config.pbtxt');
    writeFileSync(file, readFileSync(file, 'utf8').replace('string_value: "8192"', 'string_value: "1"'));
    await assert.rejects(load(dir), /parameter 'vocab_size' must be an integer of at least 2, got '1'/);
  });
});
