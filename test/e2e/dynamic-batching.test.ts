// The dynamic batcher seen from HTTP: requests that queue behind a busy instance leave as one batch,
// a full queue answers 503 at once, a level's timeout answers 503, and statistics count it all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { postJson, request, startTestServer } from './start-test-server.ts';

let server: HerdServer;
before(async () => {
  server = await startTestServer({ repositories: [resolve('test/fixtures/batching_repository')] });
});
after(() => server.close());

const infer = (value: number, parameters: Record<string, unknown> = {}) =>
  postJson(`${server.httpUrl}/v2/models/batch_echo/infer`, {
    parameters,
    inputs: [{ name: 'IN', datatype: 'INT32', shape: [1, 1], data: [value] }],
  });
const outputs = (body: unknown) => Object.fromEntries((body as { outputs: { name: string; data: number[] }[] }).outputs.map((o) => [o.name, o.data[0]]));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('queued requests leave as one batch; a full queue is refused at once; every request gets one answer', async () => {
  let busyAnswered = false;
  const busy = infer(0).then((r) => {
    busyAnswered = true;
    return r;
  });
  await pause(30);
  const queued = [1, 2, 3, 4].map((v) => infer(v));
  await pause(30);
  const refused = await infer(5);
  assert.equal(busyAnswered, false, 'refused at once, while the instance is still busy');
  assert.equal(refused.status, 503);
  assert.match((refused.json() as { error: string }).error, /^Exceeds maximum queue size/);
  const first = await busy;
  assert.deepEqual(outputs(first.json()), { OUT: 0, BATCH: 1 });
  const rest = await Promise.all(queued);
  assert.deepEqual(
    rest.map((r) => outputs(r.json())),
    [1, 2, 3, 4].map((v) => ({ OUT: v, BATCH: 4 })),
  );

  const stats = (await request(`${server.httpUrl}/v2/models/batch_echo/stats`)).json() as {
    model_stats: { inference_count: number; execution_count: number; inference_stats: Record<string, { count: number }>; batch_stats: { batch_size: number }[] }[];
  };
  const s = stats.model_stats[0];
  assert.equal(s?.execution_count, 2);
  assert.equal(s?.inference_count, 5);
  assert.equal(s?.inference_stats['success']?.count, 5);
  assert.equal(s?.inference_stats['fail']?.count, 1);
  assert.deepEqual(
    s?.batch_stats.map((b) => b.batch_size),
    [1, 4],
  );
});

test("a level's queue timeout answers 503 'Request timeout expired'; priority 1 waits as long as it takes", async () => {
  const busy = infer(10);
  await pause(20);
  const low = infer(11, { priority: 2 });
  const high = infer(12, { priority: 1 });
  const expired = await low;
  assert.equal(expired.status, 503);
  assert.deepEqual(expired.json(), { error: 'Request timeout expired' });
  assert.equal((await high).status, 200);
  await busy;
  const bad = await infer(13, { priority: 3 });
  assert.equal(bad.status, 400);
  assert.match((bad.json() as { error: string }).error, /priority 3 is not valid for model 'batch_echo'/);
});
