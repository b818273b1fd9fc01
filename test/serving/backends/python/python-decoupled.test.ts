// Decoupled Python models through the serving side's streamInfer: get_response_sender(), responses sent
// from a thread after execute() returned, the final flag alone, is_cancelled(), and BLS exec(decoupled=True).
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createBackends } from '../../../../src/app.ts';
import type { InferAnswer } from '../../../../src/serving/infer-call.ts';
import { InferenceService } from '../../../../src/serving/inference-service.ts';
import { isDecoupledModel } from '../../../../src/serving/repository/loaded-model.ts';
import type { InferStreamEvent } from '../../../../src/serving/response-stream.ts';
import { ModelRepositoryManager } from '../../../../src/serving/repository/model-repository-manager.ts';
import { PYTHON_BACKEND_CONFIG } from '../../../python-interpreter.ts';

let repository: ModelRepositoryManager;
let inference: InferenceService | undefined;

before(async () => {
  repository = new ModelRepositoryManager({
    repositories: [resolve('test/fixtures/python_models')],
    controlMode: 'explicit',
    backends: createBackends({ backendConfig: PYTHON_BACKEND_CONFIG, inference: () => inference }),
  });
  inference = new InferenceService(repository);
  await repository.start(['repeat_py', 'bls_decoupled']);
});
after(() => repository.close());

const call = (values: number[], delayMs: number) => ({
  modelName: 'repeat_py',
  id: 'd1',
  parameters: {},
  outputs: [],
  inputs: [
    { name: 'IN', datatype: 'INT32' as const, shape: [values.length], data: Int32Array.from(values) },
    { name: 'DELAY_MS', datatype: 'INT32' as const, shape: [1], data: Int32Array.from([delayMs]) },
  ],
});

async function collect(values: number[], delayMs = 0, signal?: AbortSignal): Promise<InferStreamEvent<InferAnswer>[]> {
  const events: InferStreamEvent<InferAnswer>[] = [];
  for await (const event of (inference as InferenceService).streamInfer(call(values, delayMs), signal)) events.push(event);
  return events;
}

const value = (event: InferStreamEvent<InferAnswer>, name: string) => (event.answer?.outputs.find((t) => t.name === name)?.data as Int32Array | undefined)?.[0];

describe('decoupled python models', () => {
  it('send one response per element from a thread, in order, then the final flag alone', async () => {
    const events = await collect([7, 8, 9]);
    assert.deepEqual(
      events.map((e) => value(e, 'OUT')),
      [7, 8, 9, undefined],
    );
    assert.deepEqual(
      events.map((e) => value(e, 'IDX')),
      [0, 1, 2, undefined],
    );
    assert.deepEqual(
      events.map((e) => e.final),
      [false, false, false, true],
    );
    assert.equal(events[0]?.answer?.id, 'd1');
    assert.equal(isDecoupledModel((inference as InferenceService).resolve('repeat_py')), true);
  });

  it('an error response with the final flag ends the request with that error and code', async () => {
    const events = await collect([1, -5, 3]);
    assert.equal(events.length, 2);
    assert.equal(value(events[0] as InferStreamEvent<InferAnswer>, 'OUT'), 1);
    assert.equal(events[1]?.error?.code, 'INVALID_ARG');
    assert.equal(events[1]?.error?.message, 'negative value -5');
    assert.equal(events[1]?.final, true);
  });

  it('infer() refuses a decoupled model, as Triton does', async () => {
    await assert.rejects((inference as InferenceService).infer(call([1], 0)), /decoupled/);
  });

  it('cancelling the request makes is_cancelled() true in the model', async () => {
    const controller = new AbortController();
    const events: InferStreamEvent<InferAnswer>[] = [];
    for await (const event of (inference as InferenceService).streamInfer(call([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 100), controller.signal)) {
      events.push(event);
      if (events.length === 2) controller.abort();
    }
    assert.ok(events.length < 11, `stopped early (${events.length} events)`);
    const last = events.at(-1);
    assert.equal(last?.final, true);
  });

  it('concurrent requests each get their own responses', async () => {
    const [a, b] = await Promise.all([collect([1, 2], 20), collect([10, 20, 30], 10)]);
    assert.deepEqual(
      a?.map((e) => value(e, 'OUT')),
      [1, 2, undefined],
    );
    assert.deepEqual(
      b?.map((e) => value(e, 'OUT')),
      [10, 20, 30, undefined],
    );
  });

  it("BLS exec(decoupled=True) iterates a decoupled model's responses", async () => {
    const answer = await (inference as InferenceService).infer({
      modelName: 'bls_decoupled',
      id: '',
      parameters: {},
      outputs: [],
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [4], data: Int32Array.from([1, 2, 3, 4]) }],
    });
    const get = (name: string) => (answer.outputs.find((t) => t.name === name)?.data as Int32Array | undefined)?.[0];
    assert.equal(get('SUM'), 10);
    assert.equal(get('COUNT'), 4);
    await assert.rejects(
      (inference as InferenceService).infer({
        modelName: 'bls_decoupled',
        id: '',
        parameters: {},
        outputs: [],
        inputs: [{ name: 'IN', datatype: 'INT32', shape: [2], data: Int32Array.from([1, -2]) }],
      }),
      /repeat_py: negative value -2/,
    );
  });
});
