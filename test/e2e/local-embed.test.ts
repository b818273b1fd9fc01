// The example embedding model local-embed (an ensemble: a js tokenizer, then an ONNX encoder) served over
// KServe by the real server: BYTES text in, unit FP32 vectors out, the same text always the same vector,
// similar texts closer than unrelated ones, and concurrent single-text requests batched by both steps.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { EXAMPLE_REPOSITORY, postJson, request, startTestServer } from './start-test-server.ts';

const LOCAL_EMBED_MODELS = ['local-embed', 'local-embed-tokenizer', 'local-embed-encoder'];

let server: HerdServer;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'herd-local-embed-e2e-'));
  for (const name of LOCAL_EMBED_MODELS) cpSync(join(EXAMPLE_REPOSITORY, name), join(dir, name), { recursive: true });
  server = await startTestServer({ repositories: [dir] });
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const embed = async (texts: string[]): Promise<number[]> => {
  const res = await postJson(`${server.httpUrl}/v2/models/local-embed/infer`, { inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [texts.length, 1], data: texts }] });
  assert.equal(res.status, 200, res.body.toString());
  const out = (res.json() as { outputs: { name: string; datatype: string; shape: number[]; data: number[] }[] }).outputs[0]!;
  assert.equal(out.name, 'embedding');
  assert.equal(out.datatype, 'FP32');
  assert.deepEqual(out.shape, [texts.length, 256]);
  return out.data;
};

const dot = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

/** The same vector up to float rounding: onnxruntime's GEMM may round a row differently in another batch. */
function assertSameVector(actual: readonly number[], expected: readonly number[], message: string): void {
  assert.equal(actual.length, expected.length, message);
  const worst = Math.max(...actual.map((v, i) => Math.abs(v - expected[i]!)));
  assert.ok(worst < 1e-5, `${message}: differs by ${worst}`);
}

const stats = async (model: string) =>
  ((await request(`${server.httpUrl}/v2/models/${model}/stats`)).json() as { model_stats: { inference_count: number; execution_count: number }[] }).model_stats[0]!;

test('local-embed answers deterministic unit vectors; a paraphrase is closer than an unrelated text', async () => {
  const [a, again, b, far, empty] = await Promise.all(
    ['the cat sat on the mat', 'the cat sat on the mat', 'The cat was sitting on a MAT', 'quarterly revenue grew by four percent', ''].map((t) => embed([t])),
  );
  for (const v of [a!, b!, far!]) assert.ok(Math.abs(dot(v, v) - 1) < 1e-4, `unit length: ${dot(v, v)}`);
  assertSameVector(again!, a!, 'deterministic');
  assert.ok(dot(a!, b!) > dot(a!, far!) + 0.1, `${dot(a!, b!)} vs ${dot(a!, far!)}`);
  assert.ok(empty!.every(Number.isFinite), 'an empty text still gets a finite vector');
});

test('concurrent requests are batched by both steps, each answered with its own vector', async () => {
  const before = { tokenizer: await stats('local-embed-tokenizer'), encoder: await stats('local-embed-encoder') };
  const texts = Array.from({ length: 32 }, (_, i) => `request number ${i} about embeddings`);
  const alone = await Promise.all(texts.slice(0, 2).map((t) => embed([t])));
  const together = await Promise.all(texts.map((t) => embed([t])));
  for (const i of [0, 1]) assertSameVector(together[i]!, alone[i]!, 'a batched request gets the vector it would get alone');
  assert.ok(dot(together[2]!, together[3]!) < 0.999, 'different texts, different vectors');
  const pair = await embed(texts.slice(0, 2));
  assertSameVector(pair, [...alone[0]!, ...alone[1]!], 'a request of two texts');

  const ensemble = await stats('local-embed');
  assert.ok(ensemble.inference_count >= 2 + 32 + 2);
  const encoder = await stats('local-embed-encoder');
  const inferences = encoder.inference_count - before.encoder.inference_count;
  const executions = encoder.execution_count - before.encoder.execution_count;
  assert.equal(inferences, 2 + 32 + 2);
  assert.ok(executions < 32, `32 concurrent requests share executions: ${executions} for ${inferences} inferences`);
  const tokenizer = await stats('local-embed-tokenizer');
  assert.equal(tokenizer.inference_count - before.tokenizer.inference_count, inferences);
});
