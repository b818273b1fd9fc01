// The example embedding model local-embed served over KServe by the real server: BYTES text in, FP32
// vectors out, concurrent single-text requests through the dynamic batcher answered each with its own vector.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { EXAMPLE_REPOSITORY, postJson, request, startTestServer } from './start-test-server.ts';

let server: HerdServer;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'herd-local-embed-e2e-'));
  cpSync(join(EXAMPLE_REPOSITORY, 'local-embed'), join(dir, 'local-embed'), { recursive: true });
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

test('local-embed answers unit vectors over KServe; concurrent requests each get their own', async () => {
  const texts = Array.from({ length: 16 }, (_, i) => `request number ${i} about embeddings`);
  const alone = await Promise.all(texts.slice(0, 2).map((t) => embed([t])));
  const norm = alone[0]!.reduce((s, v) => s + v * v, 0);
  assert.ok(Math.abs(norm - 1) < 1e-5);
  const together = await Promise.all(texts.map((t) => embed([t])));
  assert.deepEqual(together.slice(0, 2), alone, 'a batched request gets the vector it would get alone');
  const pair = await embed(texts.slice(0, 2));
  assert.deepEqual(pair, [...alone[0]!, ...alone[1]!]);

  const stats = (await request(`${server.httpUrl}/v2/models/local-embed/stats`)).json() as { model_stats: { inference_count: number; execution_count: number }[] };
  const s = stats.model_stats[0]!;
  assert.equal(s.inference_count, 2 + 16 + 2);
  assert.ok(s.execution_count <= 2 + 16 + 1, `the batcher may join requests: ${s.execution_count} executions`);
});
