// HTTP clients that go away before their answer (issue #32): their queued requests leave the queue and never
// run, a running JS model sees request.signal abort, an ensemble runs no later step, and
// herd_inference_cancelled_total counts each. No timing: in-process JS models hold their requests on gates
// the test opens, and the test waits on counters.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { cancelGateConfig, createCancelGateState, writeCancelGateModels } from '../helpers/cancel-gate-models.ts';
import { startTestServer } from './start-test-server.ts';

const state = createCancelGateState('__herdCancelTest');
const jsConfig = cancelGateConfig;

const ENSEMBLE = `name: "ens"
platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
ensemble_scheduling { step [
  { model_name: "ens_first" model_version: -1 input_map { key: "IN" value: "IN" } output_map { key: "OUT" value: "mid" } },
  { model_name: "ens_second" model_version: -1 input_map { key: "IN" value: "mid" } output_map { key: "OUT" value: "OUT" } }
] }
`;

function writeRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-cancel-'));
  writeCancelGateModels(dir, '__herdCancelTest', {
    single: jsConfig('single'),
    batched: jsConfig('batched', 'dynamic_batching { max_queue_delay_microseconds: 0 }\n'),
    ens_first: jsConfig('ens_first'),
    ens_second: jsConfig('ens_second'),
  });
  mkdirSync(join(dir, 'ens', '1'), { recursive: true });
  writeFileSync(join(dir, 'ens', 'config.pbtxt'), ENSEMBLE);
  return dir;
}

let server: HerdServer;

before(async () => {
  server = await startTestServer({ repositories: [writeRepository()] });
});
after(() => server.close());

/** One infer on its own connection: `gone()` drops the connection as a client that gave up does. */
function openInfer(model: string, id: string): { gone: () => void; status: Promise<number> } {
  const req = http.request(`${server.httpUrl}/v2/models/${model}/infer`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
  const status = new Promise<number>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
  req.end(JSON.stringify({ id, inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }] }));
  return { gone: () => req.destroy(), status };
}

/** Polls (bounded by count, not by time) until `ready` holds. */
async function until(what: string, ready: () => boolean): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (ready()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`never happened: ${what}`);
}

const stats = (model: string) => server.repository.get(model).stats;
const ran = (prefix: string) => state.executions.filter((e) => e.startsWith(prefix));

async function metricValue(model: string, stage: string): Promise<number> {
  const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`herd_inference_cancelled_total{model="${model}",stage="${stage}",version="1"}`));
  return line === undefined ? Number.NaN : Number(line.split(' ').at(-1));
}

for (const model of ['single', 'batched']) {
  test(`${model}: five requests queued behind a busy instance whose clients leave never execute`, async () => {
    const busy = openInfer(model, 'block-0');
    await until('the first request runs', () => state.gates.has(`${model}:block-0`));
    const queued = Array.from({ length: 5 }, (_, i) => openInfer(model, `q${i}`));
    await until('five requests queue', () => stats(model).pending === 5);
    for (const q of queued) q.gone();
    await until('the queue empties', () => stats(model).pending === 0 && stats(model).cancelled.queued === 5);
    state.gates.get(`${model}:block-0`)?.();
    assert.equal(await busy.status, 200);
    assert.deepEqual(ran(`${model}:`), [`${model}:block-0`], 'only the request whose client stayed ran');
    assert.equal(stats(model).failureCounts().CANCELED, 5);
    assert.equal(await metricValue(model, 'queued'), 5);
    // The instance is free again and serves the next client.
    const next = openInfer(model, 'after');
    assert.equal(await next.status, 200);
  });
}

test('a running JS model sees request.signal abort when its client leaves; the metric counts it as running', async () => {
  const watched = openInfer('single', 'watch-1');
  await until('the model runs', () => state.executions.includes('single:watch-1'));
  watched.gone();
  await until('the model saw the abort', () => state.sawAbort.includes('single:watch-1'));
  await until('the scheduler counted it', () => stats('single').cancelled.running === 1);
  assert.equal(await metricValue('single', 'running'), 1);
});

test('an ensemble whose client leaves during a step runs none of its later steps', async () => {
  const call = openInfer('ens', 'block-e');
  await until('the first step runs', () => state.gates.has('ens_first:block-e'));
  call.gone();
  await until('the step was told', () => stats('ens_first').cancelled.running === 1);
  state.gates.get('ens_first:block-e')?.();
  await until('the ensemble answered', () => stats('ens').failureCounts().CANCELED === 1);
  assert.deepEqual(ran('ens_second:'), [], 'the second step never ran');
  // The ensemble still serves a client that stays.
  const stays = openInfer('ens', 'fine');
  assert.equal(await stays.status, 200);
  assert.deepEqual(ran('ens_second:'), ['ens_second:fine']);
});
