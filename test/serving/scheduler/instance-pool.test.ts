import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import type { Backend, InferenceRequest, InferenceResult } from '../../../src/serving/backends/backend.ts';
import { InstancePool } from '../../../src/serving/scheduler/instance-pool.ts';
import { ModelStats } from '../../../src/serving/stats.ts';

/** A backend whose executions finish only when the test says so. */
function gatedBackend(log: string[]) {
  const gates: (() => void)[] = [];
  const backend: Backend = {
    async execute(requests: InferenceRequest[]): Promise<InferenceResult[]> {
      log.push(`start ${requests[0]?.id}`);
      await new Promise<void>((r) => gates.push(r));
      if (requests[0]?.id === 'bad') return [{ ok: false, error: new HerdError('INVALID_ARG', 'bad input') }];
      if (requests[0]?.id === 'throw') throw new Error('backend exploded');
      return requests.map(() => ({ ok: true, outputs: [] }));
    },
    async unload() { log.push('unload'); },
  };
  return { backend, release: () => gates.shift()?.() };
}

const request = (id: string): InferenceRequest => ({ id, modelName: 'm', modelVersion: 1, inputs: [], requestedOutputs: [], parameters: {} });
const tick = () => new Promise((r) => setImmediate(r));

test('each instance runs one request at a time, FIFO, and stats follow Triton counting', async () => {
  const log: string[] = [];
  const a = gatedBackend(log);
  const stats = new ModelStats('m', 1);
  const pool = new InstancePool([a.backend], stats, () => 2);
  const results = [pool.submit(request('1')), pool.submit(request('2')), pool.submit(request('bad'))];
  await tick();
  assert.deepEqual(log, ['start 1']);
  assert.equal(stats.pending, 3);
  a.release(); await tick(); await tick();
  assert.deepEqual(log, ['start 1', 'start 2']);
  a.release(); await tick(); await tick();
  a.release();
  const settled = await Promise.all(results);
  assert.deepEqual(settled.map((r) => r.ok), [true, true, false]);
  const s = stats.snapshot();
  assert.equal(s.inference_stats.success.count, 2);
  assert.equal(s.inference_stats.queue.count, 2, 'queue count equals success count');
  assert.equal(s.inference_stats.fail.count, 1);
  assert.equal(s.inference_count, 4, 'inference_count counts batch elements');
  assert.equal(s.execution_count, 2);
  assert.deepEqual(s.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]), [[2, 2]]);
  assert.equal(stats.pending, 0);
});

test('two instances execute concurrently; a thrown error fails only that request', async () => {
  const log: string[] = [];
  const a = gatedBackend(log);
  const b = gatedBackend(log);
  const pool = new InstancePool([a.backend, b.backend], new ModelStats('m', 1), () => 1);
  const r1 = pool.submit(request('throw'));
  const r2 = pool.submit(request('ok'));
  await tick();
  assert.equal(log.length, 2);
  a.release(); b.release();
  const [x, y] = await Promise.all([r1, r2]);
  assert.equal(x.ok === false && x.error.message, 'backend exploded');
  assert.equal(y.ok, true);
});

test('close answers every accepted request, then unloads, then refuses new work', async () => {
  const log: string[] = [];
  const a = gatedBackend(log);
  const pool = new InstancePool([a.backend], new ModelStats('m', 1), () => 1);
  const accepted = [pool.submit(request('1')), pool.submit(request('2'))];
  const closed = pool.close();
  await tick();
  a.release(); await tick(); await tick(); a.release();
  await closed;
  assert.deepEqual((await Promise.all(accepted)).map((r) => r.ok), [true, true]);
  assert.equal(log.at(-1), 'unload');
  const late = await pool.submit(request('late'));
  assert.equal(late.ok, false);
});
