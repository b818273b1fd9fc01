// The example-model generator: deterministic bytes, idempotent rewrites, configs written, and numerics
// checked by loading the files with onnxruntime directly (add_sub exact, my_model and local-embed-encoder
// vs a JS reference).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as ort from 'onnxruntime-node';
import { generateExampleModels } from '../../scripts/generate-example-models.ts';
import {
  computeDenseReference,
  computeLocalEmbedReference,
  createLocalEmbedWeights,
  createMyModelLayers,
  EXAMPLE_MODELS,
  LOCAL_EMBED_TOKENS,
  LOCAL_EMBED_VOCAB,
} from '../../scripts/onnx/example-models.ts';
import { decodeOnnxModel } from '../../scripts/onnx/onnx-model-writer.ts';
import { createSeededRandom } from '../../scripts/onnx/seeded-random.ts';

describe('generate-example-models', () => {
  let outDir = '';
  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'herd-gen-'));
  });
  after(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  it('writes my_model, add_sub and local-embed-encoder (not the opt-in mlp_2048), then skips them when unchanged', async () => {
    const first = await generateExampleModels({ outDir });
    assert.deepEqual(
      first.map((r) => [r.name, r.onnx, r.config]),
      [
        ['my_model', 'written', 'written'],
        ['add_sub', 'written', 'written'],
        ['local-embed-encoder', 'written', 'written'],
      ],
    );
    assert.deepEqual((await readdir(outDir)).sort(), ['add_sub', 'local-embed-encoder', 'my_model']);
    const mtime = (await stat(first[0].onnxPath)).mtimeMs;

    const second = await generateExampleModels({ outDir });
    assert.deepEqual(
      second.map((r) => [r.onnx, r.config]),
      [
        ['unchanged', 'unchanged'],
        ['unchanged', 'unchanged'],
        ['unchanged', 'unchanged'],
      ],
    );
    assert.equal((await stat(first[0].onnxPath)).mtimeMs, mtime, 'an unchanged model is not rewritten');

    await writeFile(first[1].onnxPath, 'corrupt');
    const third = await generateExampleModels({ outDir });
    assert.deepEqual(
      third.map((r) => r.onnx),
      ['unchanged', 'written', 'unchanged'],
      'a changed file is regenerated',
    );
  });

  it('is deterministic: the same bytes on every build', () => {
    for (const model of EXAMPLE_MODELS.filter((m) => !m.optIn)) {
      assert.deepEqual(model.buildOnnx(), model.buildOnnx(), model.name);
    }
    const a = createSeededRandom(42);
    const b = createSeededRandom(42);
    assert.deepEqual([a(), a(), a()], [b(), b(), b()]);
    assert.notEqual(createSeededRandom(43)(), createSeededRandom(42)());
  });

  it('writes the configs the brief asks for', async () => {
    const myModel = await readFile(join(outDir, 'my_model', 'config.pbtxt'), 'utf8');
    for (const line of [
      'name: "my_model"',
      'platform: "onnxruntime_onnx"',
      'max_batch_size: 128',
      'name: "INPUT__0"',
      'dims: [ 768 ]',
      'name: "OUTPUT__0"',
      'dims: [ 512 ]',
      'preferred_batch_size: [ 16, 32, 64 ]',
      'max_queue_delay_microseconds: 100',
      'kind: KIND_CPU',
      'count: 2',
      'key: "intra_op_thread_count"',
      'value: { string_value: "1" }',
    ])
      assert.ok(myModel.includes(line), `my_model config lacks ${line}`);
    const addSub = await readFile(join(outDir, 'add_sub', 'config.pbtxt'), 'utf8');
    for (const line of ['name: "add_sub"', 'max_batch_size: 8', 'data_type: TYPE_INT32', 'dims: [ 16 ]', 'name: "OUTPUT1"']) {
      assert.ok(addSub.includes(line), `add_sub config lacks ${line}`);
    }
    const encoder = await readFile(join(outDir, 'local-embed-encoder', 'config.pbtxt'), 'utf8');
    for (const line of [
      'name: "local-embed-encoder"',
      'max_batch_size: 64',
      'name: "token_ids"',
      'data_type: TYPE_INT64',
      'dims: [ 32 ]',
      'name: "attention_mask"',
      'name: "embedding"',
      'dims: [ 256 ]',
      'dynamic_batching {',
    ])
      assert.ok(encoder.includes(line), `local-embed-encoder config lacks ${line}`);
    // The committed copy in the example repository is the generator's (the ensemble and tokenizer rely on its shapes).
    assert.equal(await readFile(new URL('../../examples/model_repository/local-embed-encoder/config.pbtxt', import.meta.url), 'utf8'), encoder);
  });

  it('gives my_model a symbolic batch dim and an opset import', async () => {
    const model = decodeOnnxModel(await readFile(join(outDir, 'my_model', '1', 'model.onnx'))) as {
      opset_import: { version: number }[];
      graph: { input: { type: { tensor_type: { shape: { dim: Record<string, unknown>[] } } } }[]; node: { op_type: string }[] };
    };
    assert.equal(model.opset_import[0].version, 13);
    assert.deepEqual(model.graph.input[0].type.tensor_type.shape.dim, [{ dim_param: 'batch' }, { dim_value: 768 }]);
    assert.deepEqual(
      model.graph.node.map((n) => n.op_type),
      ['Gemm'],
    );
  });

  it('add_sub computes sum and difference exactly', async () => {
    const session = await ort.InferenceSession.create(join(outDir, 'add_sub', '1', 'model.onnx'), { intraOpNumThreads: 1 });
    try {
      const a = Int32Array.from({ length: 48 }, (_, i) => ((i * 7919) % 2001) - 1000);
      const b = Int32Array.from({ length: 48 }, (_, i) => 2 ** 30 - i * 12345);
      const out = await session.run({ INPUT0: new ort.Tensor('int32', a, [3, 16]), INPUT1: new ort.Tensor('int32', b, [3, 16]) });
      assert.deepEqual(
        [...(out.OUTPUT0.data as Int32Array)],
        [...a].map((x, i) => (x + b[i]) | 0),
      );
      assert.deepEqual(
        [...(out.OUTPUT1.data as Int32Array)],
        [...a].map((x, i) => (x - b[i]) | 0),
      );
    } finally {
      await session.release();
    }
  });

  it('my_model matches the JS reference from the same seeded weights within 1e-4', async () => {
    const session = await ort.InferenceSession.create(join(outDir, 'my_model', '1', 'model.onnx'), { intraOpNumThreads: 1 });
    try {
      const batch = 4;
      const random = createSeededRandom(7);
      const x = Float32Array.from({ length: batch * 768 }, () => random() * 4 - 2);
      const out = await session.run({ INPUT__0: new ort.Tensor('float32', x, [batch, 768]) });
      assert.deepEqual(out.OUTPUT__0.dims, [batch, 512]);
      const ref = computeDenseReference(createMyModelLayers(), x, batch);
      const y = out.OUTPUT__0.data as Float32Array;
      let maxDiff = 0;
      for (let i = 0; i < y.length; i++) maxDiff = Math.max(maxDiff, Math.abs(y[i] - ref[i]));
      assert.ok(maxDiff < 1e-4, `max abs diff ${maxDiff}`);
      assert.ok(
        ref.some((v) => Math.abs(v) > 0.5),
        'reference is not trivially near zero',
      );
    } finally {
      await session.release();
    }
  });

  it('local-embed-encoder matches the JS reference: masked mean, projection, unit length', async () => {
    const session = await ort.InferenceSession.create(join(outDir, 'local-embed-encoder', '1', 'model.onnx'), { intraOpNumThreads: 1 });
    try {
      const L = LOCAL_EMBED_TOKENS;
      const random = createSeededRandom(11);
      // Three texts: 5 tokens, a full row, and none at all (all padding).
      const lengths = [5, L, 0];
      const ids = lengths.flatMap((n) => Array.from({ length: L }, (_, t) => (t < n ? 1 + Math.floor(random() * (LOCAL_EMBED_VOCAB - 1)) : 0)));
      const mask = lengths.flatMap((n) => Array.from({ length: L }, (_, t) => (t < n ? 1 : 0)));
      const out = await session.run({
        token_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [lengths.length, L]),
        attention_mask: new ort.Tensor('float32', Float32Array.from(mask), [lengths.length, L]),
      });
      assert.deepEqual(out.embedding.dims, [lengths.length, 256]);
      const y = out.embedding.data as Float32Array;
      const weights = createLocalEmbedWeights();
      lengths.forEach((_, row) => {
        const ref = computeLocalEmbedReference(weights, ids.slice(row * L, (row + 1) * L), mask.slice(row * L, (row + 1) * L));
        const got = y.subarray(row * 256, (row + 1) * 256);
        const maxDiff = Math.max(...Array.from(got, (v, i) => Math.abs(v - ref[i]!)));
        assert.ok(maxDiff < 1e-5, `row ${row}: max abs diff ${maxDiff}`);
        assert.ok(Math.abs(Math.hypot(...got) - 1) < 1e-5, `row ${row} has unit length`);
      });
    } finally {
      await session.release();
    }
  });

  it('refuses an unknown model name', async () => {
    await assert.rejects(generateExampleModels({ outDir, only: ['nope'] }), /unknown example model\(s\): nope/);
  });
});
