// `dynamic_batching` on a model with max_batch_size 0: Triton accepts it and runs its dynamic batcher
// with batches of one (core dynamic_batch_scheduler.cc: max_batch_size_ = max(1, max_batch_size)), so
// queue policies still apply. Herd does the same, and warns at load that the model cannot batch.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { postJson, startTestServer } from './start-test-server.ts';

let server: HerdServer;
let repository: string;
const lines: string[] = [];

// Holds execute() until the test releases it (then never again), and answers how many requests the batch held.
const MODEL = `let held = [];
let holding = true;
globalThis.__herdReleaseUnbatched = () => { holding = false; for (const r of held.splice(0)) r(); };
export async function execute(requests) {
  if (holding) await new Promise((resolve) => { held.push(resolve); });
  return requests.map(() => ({ outputs: [{ name: 'BATCH', datatype: 'INT32', shape: [1], data: new Int32Array([requests.length]) }] }));
}
`;

before(async () => {
  repository = mkdtempSync(join(tmpdir(), 'herd-unbatched-'));
  mkdirSync(join(repository, 'unbatched', '1'), { recursive: true });
  writeFileSync(
    join(repository, 'unbatched', 'config.pbtxt'),
    [
      'name: "unbatched"',
      'backend: "js"',
      'max_batch_size: 0',
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]',
      'output [ { name: "BATCH" data_type: TYPE_INT32 dims: [ 1 ] } ]',
      'dynamic_batching { max_queue_delay_microseconds: 100000 default_queue_policy { max_queue_size: 2 } }',
    ].join('\n'),
  );
  writeFileSync(join(repository, 'unbatched', '1', 'model.mjs'), MODEL);
  server = await startTestServer({ repositories: [repository], log: (line) => lines.push(line) });
});
after(async () => {
  (globalThis as { __herdReleaseUnbatched?: () => void }).__herdReleaseUnbatched?.();
  await server?.close();
  rmSync(repository, { recursive: true, force: true });
});

test('the model loads, with a warning that it cannot batch', () => {
  assert.deepEqual(
    server.repository.summary().map((m) => [m.name, m.state]),
    [['unbatched', 'READY']],
  );
  assert.ok(
    lines.some((l) => /^warning: model 'unbatched': dynamic_batching with max_batch_size 0 cannot batch/.test(l)),
    lines.join('\n'),
  );
});

test('requests run one at a time, and the queue policy still refuses beyond max_queue_size', async () => {
  const infer = () => postJson(`${server.httpUrl}/v2/models/unbatched/infer`, { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }] });
  // One executes (held), two wait in the queue, the fourth finds it full.
  const running = [infer(), infer(), infer()];
  await new Promise((resolve) => setTimeout(resolve, 200));
  const refused = await infer();
  assert.equal(refused.status, 503, refused.body.toString());
  assert.match((refused.json() as { error: string }).error, /^Exceeds maximum queue size/);
  (globalThis as { __herdReleaseUnbatched?: () => void }).__herdReleaseUnbatched?.();
  const answers = await Promise.all(running);
  for (const answer of answers) {
    assert.equal(answer.status, 200, answer.body.toString());
    assert.deepEqual((answer.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [1]);
  }
});
