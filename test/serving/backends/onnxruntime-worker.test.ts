// The onnxruntime backend's worker threads: instances run in parallel without blocking the event loop,
// marks come back on the main clock, inputs cross threads safely, and a crashed worker is restarted with backoff.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../src/core/clock.ts';
import { HerdError } from '../../../src/core/errors.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import type { Backend, ExecutionMarks, InferenceResult } from '../../../src/serving/backends/backend.ts';
import { convertTensorToWire, convertWireToTensor } from '../../../src/serving/backends/onnxruntime/convert-wire-tensor.ts';
import { loadOnnxInstance } from '../../../src/serving/backends/onnxruntime/onnxruntime-backend.ts';
import { generateExampleModels } from '../../../scripts/generate-example-models.ts';
import { TRITON_REPO, configInput, configOutput, createLoadContext, createRequest, createTestConfig, tritonTestConfigs } from './onnxruntime-fixtures.ts';

const CRASHING_WORKER = new URL('./onnxruntime-crashing-worker.mjs', import.meta.url);

function outputOf(result: InferenceResult | undefined): Tensor {
  assert.ok(result, 'missing result');
  if (!result.ok) assert.fail(`request failed: ${result.error.code} ${result.error.message}`);
  return result.outputs[0];
}

function herdError(code: string, message: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof HerdError, `expected a HerdError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  };
}

describe('convert-wire-tensor', () => {
  it('copies a view on a larger buffer into an exactly sized buffer and leaves the original alone', () => {
    const backing = new Float32Array(10).map((_, i) => i);
    const view = backing.subarray(2, 6);
    const transfer = new Set<ArrayBuffer>();
    const wire = convertTensorToWire({ name: 'x', datatype: 'FP32', shape: [4], data: view }, 'copy', transfer);
    assert.equal(wire.kind, 'numeric');
    if (wire.kind !== 'numeric') return;
    assert.notEqual(wire.data.buffer, backing.buffer);
    assert.equal(wire.data.buffer.byteLength, 16);
    assert.deepEqual([...transfer], [wire.data.buffer]);
    assert.deepEqual([...(convertWireToTensor(wire).data as Float32Array)], [2, 3, 4, 5]);
  });

  it('moves a buffer the sender owns whole, once even when two outputs share it', () => {
    const data = Int32Array.from([1, 2, 3]);
    const transfer = new Set<ArrayBuffer>();
    const a = convertTensorToWire({ name: 'a', datatype: 'INT32', shape: [3], data }, 'move', transfer);
    const b = convertTensorToWire({ name: 'b', datatype: 'INT32', shape: [3], data }, 'move', transfer);
    assert.ok(a.kind === 'numeric' && b.kind === 'numeric');
    assert.equal(a.data, data);
    assert.equal(transfer.size, 1);
  });

  it('packs BYTES into one buffer and unpacks them as views, empty strings included', () => {
    const utf8 = new TextEncoder();
    const body = utf8.encode('xxhello||日本xx');
    const items = [body.subarray(2, 7), new Uint8Array(0), body.subarray(9, 15)];
    const transfer = new Set<ArrayBuffer>();
    const wire = convertTensorToWire({ name: 's', datatype: 'BYTES', shape: [3], data: items }, 'copy', transfer);
    assert.equal(wire.kind, 'bytes');
    if (wire.kind !== 'bytes') return;
    assert.equal(wire.bytes.byteLength, 11);
    assert.equal(transfer.size, 2);
    const back = convertWireToTensor(wire).data as Uint8Array[];
    assert.deepEqual(
      back.map((b) => new TextDecoder().decode(b)),
      ['hello', '', '日本'],
    );
  });
});

describe('onnxruntime worker instances on my_model', () => {
  let repo = '';
  const instances: Backend[] = [];
  const myModel = () =>
    createTestConfig({
      name: 'my_model',
      max_batch_size: 128,
      input: [configInput('INPUT__0', 'TYPE_FP32', [768])],
      output: [configOutput('OUTPUT__0', 'TYPE_FP32', [512])],
      parameters: { intra_op_thread_count: { string_value: '1' } },
    });
  const request = (data: Float32Array, batch: number) => createRequest('my_model', [{ name: 'INPUT__0', datatype: 'FP32', shape: [batch, 768], data }]);

  before(async () => {
    repo = await mkdtemp(join(tmpdir(), 'herd-ort-worker-'));
    await generateExampleModels({ outDir: repo, only: ['my_model'] });
    for (const i of [0, 1]) {
      instances.push(await loadOnnxInstance({ ...createLoadContext(myModel(), join(repo, 'my_model')), instanceName: `my_model_0_${i}` }));
    }
  });
  after(async () => {
    await Promise.all(instances.map((b) => b.unload()));
    await rm(repo, { recursive: true, force: true });
  });

  it('runs two instances at once while the event loop keeps turning', async () => {
    // Neither property can hold when sessions run on the main thread, whatever the timing: runs there go
    // one at a time in FIFO order, so one run's [inputEnd, inferEnd] window never nests inside another's,
    // and the loop turns at most once between a mark and the setImmediate that runs the session (checked
    // against the main-thread runner: 0 of 300 rounds; workers: both seen in round 0). No speed threshold,
    // each only has to be seen once in up to 300 rounds.
    const input = Float32Array.from({ length: 128 * 768 }, (_, i) => Math.cos(i));
    let turns: bigint[] = [];
    let spinning = true;
    const spin = () => {
      turns.push(process.hrtime.bigint());
      if (spinning) setImmediate(spin);
    };
    spin();
    let nested = false;
    let responsive = false;
    try {
      for (let round = 0; round < 300 && !(nested && responsive); round++) {
        turns = [];
        const marks: [ExecutionMarks, ExecutionMarks] = [{}, {}];
        const results = await Promise.all(instances.map((b, i) => b.execute([request(input, 128)], marks[i])));
        results.forEach((r) => {
          outputOf(r[0]);
        });
        const [a, b] = marks.map((m) => ({ from: m.inputEnd!, to: m.inferEnd! }));
        nested ||= (a.from < b.from && b.to < a.to) || (b.from < a.from && a.to < b.to);
        responsive ||= [a, b].some((w) => turns.filter((t) => w.from < t && t < w.to).length >= 10);
      }
    } finally {
      spinning = false;
    }
    assert.ok(nested, 'the two instances never ran at the same time');
    assert.ok(responsive, 'the event loop did not turn while a session was running');
  });

  it('reports marks in order on the main thread clock', async () => {
    const marks: ExecutionMarks = {};
    const start = process.hrtime.bigint();
    const [result] = await instances[0].execute([request(new Float32Array(768), 1)], marks);
    const end = process.hrtime.bigint();
    outputOf(result);
    assert.ok(marks.inputEnd !== undefined && marks.inferEnd !== undefined);
    assert.ok(start <= marks.inputEnd && marks.inputEnd <= marks.inferEnd && marks.inferEnd <= end);
  });

  it('leaves the caller arrays usable and reads a view at an offset correctly', async () => {
    const exact = Float32Array.from({ length: 2 * 768 }, (_, i) => Math.sin(i));
    const backing = new Float32Array(5 * 768);
    backing.set(exact, 768);
    const view = backing.subarray(768, 3 * 768);
    const [fromExact, fromView] = await instances[0].execute([request(exact, 2), request(view, 2)]);
    assert.equal(exact.length, 2 * 768, 'input array was detached');
    assert.equal(backing.length, 5 * 768);
    assert.deepEqual(outputOf(fromView).data, outputOf(fromExact).data);
  });
});

describe('onnxruntime worker crashes', () => {
  const simple = tritonTestConfigs().simple;
  const path = join(TRITON_REPO, 'simple');
  const load = (name: string, clock = new ManualClock(), parameters = {}) =>
    // execution_thread worker: add_sub-sized models would otherwise be hosted on the main thread (auto).
    loadOnnxInstance(
      { ...createLoadContext({ ...simple, name, parameters: { execution_thread: { string_value: 'worker' }, ...parameters } }, path), instanceName: `${name}_0_0` },
      { workerUrl: CRASHING_WORKER, clock },
    );
  const filled = (name: string, value: number) => ({ name, datatype: 'INT32' as const, shape: [1, 16], data: new Int32Array(16).fill(value) });
  const request = createRequest('simple', [filled('INPUT0', 1), filled('INPUT1', 1)]);
  const poisoned = createRequest('simple', [filled('INPUT0', -999), filled('INPUT1', 1)]);
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'herd-ort-crash-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const fault of ['crash_on_run', 'exit_on_run']) {
    it(`${fault}: fails the batch in flight with INTERNAL, restarts at once, then backs off`, async () => {
      const clock = new ManualClock();
      const backend = await load(fault, clock);
      const crashed = herdError('INTERNAL', new RegExp(`^model instance ${fault}_0_0 crashed: `));
      try {
        await assert.rejects(backend.execute([request]), crashed);
        // First crash: the next call restarts the worker straight away (and this one crashes again).
        await assert.rejects(backend.execute([request]), crashed);
        assert.equal(backend.restartCount, 1);
        // Two crashes in a row: no new thread until the backoff has passed; calls fail fast meanwhile.
        await assert.rejects(backend.execute([request]), herdError('UNAVAILABLE', /^model instance \w+ is unavailable: it crashed \(.+\); next restart attempt in 100 ms$/));
        assert.equal(backend.restartCount, 1);
        clock.advance(100);
        await assert.rejects(backend.execute([request]), crashed);
        assert.equal(backend.restartCount, 2);
        await assert.rejects(backend.execute([request]), herdError('UNAVAILABLE', /next restart attempt in 200 ms$/));
      } finally {
        await backend.unload();
      }
    });
  }

  it('fails every batch in flight at the crash, then serves again from a restarted worker', async () => {
    const backend = await load('crash_on_poison');
    try {
      const [first, second] = await Promise.allSettled([backend.execute([poisoned]), backend.execute([request])]);
      for (const settled of [first, second]) {
        assert.equal(settled.status, 'rejected');
        if (settled.status === 'rejected') herdError('INTERNAL', /^model instance crash_on_poison_0_0 crashed: simulated crash on a poisoned input/)(settled.reason);
      }
      const [result] = await backend.execute([request]);
      assert.deepEqual([...(outputOf(result).data as Int32Array)], new Array(16).fill(2));
      assert.equal(backend.restartCount, 1);
      assert.equal(backend.failedRestartCount, 0);
    } finally {
      await backend.unload();
    }
  });

  it('backs off while a restarted model keeps crashing on load, and recovers when it loads again', async () => {
    const faultFile = join(dir, 'fault');
    await writeFile(faultFile, 'crash_on_poison');
    const clock = new ManualClock();
    const backend = await load('simple', clock, { fault_file: { string_value: faultFile } });
    try {
      await assert.rejects(backend.execute([poisoned]), herdError('INTERNAL', /crashed: simulated crash on a poisoned input/));
      await writeFile(faultFile, 'crash_on_load');
      await assert.rejects(backend.execute([request]), herdError('UNAVAILABLE', /^model instance simple_0_0 crashed and could not be restarted: .*simulated crash while loading/));
      assert.equal(backend.failedRestartCount, 1);
      await assert.rejects(backend.execute([request]), herdError('UNAVAILABLE', /next restart attempt in 100 ms$/));
      clock.advance(100);
      await assert.rejects(backend.execute([request]), herdError('UNAVAILABLE', /could not be restarted/));
      await assert.rejects(backend.execute([request]), herdError('UNAVAILABLE', /next restart attempt in 200 ms$/));
      assert.equal(backend.failedRestartCount, 2);
      await writeFile(faultFile, 'crash_on_poison');
      clock.advance(200);
      const [result] = await backend.execute([request]);
      assert.deepEqual([...(outputOf(result).data as Int32Array)], new Array(16).fill(2));
      assert.deepEqual([backend.restartCount, backend.failedRestartCount], [1, 2]);
      // A completed run resets the backoff: the next crash is again followed by an immediate restart.
      await assert.rejects(backend.execute([poisoned]), herdError('INTERNAL', /crashed/));
      assert.ok(outputOf((await backend.execute([request]))[0]));
      assert.equal(backend.restartCount, 2);
    } finally {
      await backend.unload();
    }
  });

  it('rejects load when the worker dies while loading', async () => {
    await assert.rejects(load('crash_on_load'), herdError('INTERNAL', /^model instance crash_on_load_0_0 crashed: simulated crash while loading/));
  });

  it('keeps load errors from the worker as they were', async () => {
    const config = { ...simple, input: [configInput('INPUT0', 'TYPE_INT32', [8]), simple.input[1]] };
    await assert.rejects(
      loadOnnxInstance(createLoadContext(config, path)),
      herdError('INVALID_ARG', /^unable to load model 'simple': input 'INPUT0': model shape \[16\] \(batch dim excluded\) doesn't match configuration shape \[8\]$/),
    );
  });
});
