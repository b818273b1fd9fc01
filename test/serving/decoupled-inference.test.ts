// Decoupled models through the serving side's one entry point: many responses per request, in order,
// a bare final flag, errors as events, cancellation reaching the backend, and the ordinary path unchanged.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createBackends } from '../../src/app.ts';
import type { HerdError } from '../../src/core/errors.ts';
import type { InferAnswer } from '../../src/serving/infer-call.ts';
import { InferenceService } from '../../src/serving/inference-service.ts';
import { isDecoupledModel } from '../../src/serving/repository/loaded-model.ts';
import type { InferStreamEvent } from '../../src/serving/response-stream.ts';
import { ModelRepositoryManager } from '../../src/serving/repository/model-repository-manager.ts';

let repository: ModelRepositoryManager;
let inference: InferenceService;

before(async () => {
  repository = new ModelRepositoryManager({
    repositories: [resolve('test/fixtures/decoupled_repository'), resolve('test/fixtures/batching_repository')],
    controlMode: 'none',
    backends: createBackends(),
  });
  await repository.start([]);
  inference = new InferenceService(repository);
});
after(() => repository.close());

const int32 = (values: number[]) => ({ name: 'IN', datatype: 'INT32' as const, shape: [values.length], data: Int32Array.from(values) });

async function collect(modelName: string, values: number[], signal?: AbortSignal): Promise<InferStreamEvent<InferAnswer>[]> {
  const events: InferStreamEvent<InferAnswer>[] = [];
  for await (const event of inference.streamInfer({ modelName, id: 'r1', parameters: {}, inputs: [int32(values)], outputs: [] }, signal)) events.push(event);
  return events;
}

const outValue = (event: InferStreamEvent<InferAnswer>) => (event.answer?.outputs.find((t) => t.name === 'OUT')?.data as Int32Array | undefined)?.[0];

describe('decoupled models', () => {
  it('answer each element as a response, in order, then the final flag alone', async () => {
    const events = await collect('repeat_int32', [4, 5, 6]);
    assert.deepEqual(events.map(outValue), [4, 5, 6, undefined]);
    assert.deepEqual(
      events.map((e) => e.final),
      [false, false, false, true],
    );
    assert.equal(events[0]?.answer?.id, 'r1');
    assert.equal(events[0]?.answer?.modelName, 'repeat_int32');
    assert.equal(events[3]?.answer, undefined);
  });

  it('may complete with no response at all', async () => {
    assert.deepEqual(await collect('repeat_int32', []), [{ final: true }]);
  });

  it('send an error response in the stream and keep going', async () => {
    const events = await collect('repeat_int32', [1, -1, 3]);
    assert.equal(events.length, 4);
    assert.equal((events[1]?.error as HerdError | undefined)?.code, 'INVALID_ARG');
    assert.match((events[1]?.error as HerdError | undefined)?.message ?? '', /element 1 is -1/);
    assert.equal(outValue(events[2] as InferStreamEvent<InferAnswer>), 3);
  });

  it('fail the request with one final error when execute() throws', async () => {
    const events = await collect('repeat_int32', [1, -2]);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.final, true);
    assert.match(events[0]?.error?.message ?? '', /asked to throw/);
  });

  it('see the request cancelled when the reader stops early', async () => {
    const before = (globalThis as { __herdRepeatCancelled?: number }).__herdRepeatCancelled ?? 0;
    for await (const event of inference.streamInfer({ modelName: 'repeat_int32', id: '', parameters: {}, inputs: [int32([1, 2, 3, 4, 5, 6, 7, 8])], outputs: [] })) {
      assert.equal(outValue(event), 1);
      break;
    }
    await new Promise((r) => setTimeout(r, 30));
    assert.equal((globalThis as { __herdRepeatCancelled?: number }).__herdRepeatCancelled, before + 1);
  });

  it('see the request cancelled when the caller aborts its signal', async () => {
    const before = (globalThis as { __herdRepeatCancelled?: number }).__herdRepeatCancelled ?? 0;
    const controller = new AbortController();
    const events: InferStreamEvent<InferAnswer>[] = [];
    for await (const event of inference.streamInfer(
      { modelName: 'repeat_int32', id: '', parameters: {}, inputs: [int32([1, 2, 3, 4, 5, 6, 7, 8])], outputs: [] },
      controller.signal,
    )) {
      events.push(event);
      if (events.length === 2) controller.abort();
    }
    assert.ok(events.length < 9, `stopped early (${events.length} events)`);
    assert.equal(events.at(-1)?.final, true);
    assert.equal((globalThis as { __herdRepeatCancelled?: number }).__herdRepeatCancelled, before + 1);
  });

  it('refuse the one-answer infer() with UNSUPPORTED', async () => {
    await assert.rejects(
      inference.infer({ modelName: 'repeat_int32', id: '', parameters: {}, inputs: [int32([1])], outputs: [] }),
      (err: HerdError) => err.code === 'UNSUPPORTED' && /decoupled/.test(err.message),
    );
    assert.equal(isDecoupledModel(inference.resolve('repeat_int32')), true);
    assert.equal(isDecoupledModel(inference.resolve('batch_echo')), false);
  });

  it('that answer the ordinary way from execute() send that answer as the final response', async () => {
    const events = await collect('ordinary_decoupled', [21]);
    assert.deepEqual(
      events.map((e) => [outValue(e), e.final]),
      [[42, true]],
    );
  });

  it('report validation errors as one final error event', async () => {
    const events: InferStreamEvent<InferAnswer>[] = [];
    for await (const event of inference.streamInfer({ modelName: 'repeat_int32', id: '', parameters: {}, inputs: [], outputs: [] })) events.push(event);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.error?.code, 'INVALID_ARG');
  });
});

describe('streamInfer on an ordinary model', () => {
  it('yields its one answer as the final event', async () => {
    const events: InferStreamEvent<InferAnswer>[] = [];
    const call = { modelName: 'batch_echo', id: 'x', parameters: {}, inputs: [{ name: 'IN', datatype: 'INT32' as const, shape: [1, 1], data: Int32Array.from([7]) }], outputs: [] };
    for await (const event of inference.streamInfer(call)) events.push(event);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.final, true);
    assert.equal(outValue(events[0] as InferStreamEvent<InferAnswer>), 7);
  });

  it('reports an unknown model as one final error event', async () => {
    const events: InferStreamEvent<InferAnswer>[] = [];
    for await (const event of inference.streamInfer({ modelName: 'nope', id: '', parameters: {}, inputs: [], outputs: [] })) events.push(event);
    assert.equal(events.length, 1);
    assert.match(events[0]?.error?.message ?? '', /unknown model: 'nope'/);
  });
});
