// The python backend's shared-memory segment: large tensors cross it (the model sees a view of the
// mapping), a tensor bigger than the segment falls back to the pipe, an input the model keeps is never
// overwritten, and the segment is gone from /dev/shm and from Herd's descriptors after unload and a SIGKILL.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Tensor } from '../../../../src/core/tensor.ts';
import type { InferenceRequest } from '../../../../src/serving/backends/backend.ts';
import { decodeStubTensors, encodeStubBatch } from '../../../../src/serving/backends/python/convert-stub-tensors.ts';
import { startPythonInstance, type PythonModelInstance } from '../../../../src/serving/backends/python/python-model-instance.ts';
import { SHM_DIR, StubSharedMemory, sweepStaleSegments } from '../../../../src/serving/backends/python/stub-shared-memory.ts';
import { TEST_PYTHON } from '../../../python-interpreter.ts';

// OUT = IN * 2; IN_SHM says whether the input array views the mapping; KEPT is the sum of the first input
// the model ever saw, which it keeps a reference to (so its slot must never be reused under it).
const MODEL = `
import mmap
import numpy as np
import triton_python_backend_utils as pb_utils


def in_mapping(array):
    base = array
    while not isinstance(base, memoryview) and getattr(base, "base", None) is not None:
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


class TritonPythonModel:
    def initialize(self, args):
        self.kept = None

    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()
            if self.kept is None:
                self.kept = a
            responses.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("OUT", a * 2),
                pb_utils.Tensor("IN_SHM", np.array([int(in_mapping(a))], dtype=np.int32)),
                pb_utils.Tensor("KEPT", np.array([float(self.kept.sum())], dtype=np.float64)),
            ]))
        return responses
`;

const dir = mkdtempSync(join(tmpdir(), 'herd-shm-test-'));
mkdirSync(join(dir, 'big', '1'), { recursive: true });
writeFileSync(join(dir, 'big', '1', 'model.py'), MODEL);

const instances: PythonModelInstance[] = [];
after(async () => {
  for (const instance of instances) await instance.unload();
});

async function start(sharedMemoryBytes: number): Promise<PythonModelInstance> {
  const instance = await startPythonInstance({
    executable: TEST_PYTHON,
    modelFile: join(dir, 'big', '1', 'model.py'),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    label: 'big/1/big_0',
    args: { model_name: 'big', model_instance_name: 'big_0' },
    decoupled: false,
    outputNames: ['OUT', 'IN_SHM', 'KEPT'],
    timeoutMs: 20_000,
    log: () => undefined,
    inference: undefined,
    sharedMemoryBytes,
  });
  instances.push(instance);
  return instance;
}

const request = (values: Float32Array): InferenceRequest => ({
  id: '',
  modelName: 'big',
  modelVersion: 1,
  inputs: [{ name: 'IN', datatype: 'FP32', shape: [values.length], data: values }],
  requestedOutputs: [],
  parameters: {},
});

async function run(instance: PythonModelInstance, values: Float32Array): Promise<{ out: Float32Array; inShm: boolean; kept: number }> {
  const [result] = await instance.execute([request(values)]);
  assert.ok(result?.ok, result && !result.ok ? result.error.message : 'no result');
  const output = (name: string) => result.outputs.find((t: Tensor) => t.name === name)?.data;
  return { out: output('OUT') as Float32Array, inShm: (output('IN_SHM') as Int32Array)[0] === 1, kept: Number((output('KEPT') as Float64Array)[0]) };
}

/** Herd's own descriptors that point at a python segment. */
function segmentFds(): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(`${SHM_DIR}/herd-py-`));
}

const mapsSegment = (pid: number | undefined) => readFileSync(`/proc/${pid}/maps`, 'utf8').includes(`${SHM_DIR}/herd-py-`);
const ourFiles = () => readdirSync(SHM_DIR).filter((name) => name.startsWith(`herd-py-${process.pid}-`));
const ramp = (n: number, k: number) => Float32Array.from({ length: n }, (_, i) => (i % 1000) * k);

describe('python backend shared memory', { skip: process.platform !== 'linux' }, () => {
  it('carries a large tensor both ways through the segment, and never overwrites an input the model kept', async () => {
    const instance = await start(8 << 20);
    assert.ok(mapsSegment(instance.pid), 'the stub maps the segment');
    assert.deepEqual(ourFiles(), [], 'the file is unlinked once the stub holds it');
    const first = ramp(256 * 1024, 1);
    const a = await run(instance, first);
    assert.equal(a.inShm, true);
    assert.deepEqual(
      a.out,
      first.map((x) => x * 2),
    );
    const firstSum = first.reduce((s, x) => s + x, 0);
    assert.equal(a.kept, firstSum);
    for (let k = 2; k < 6; k++) {
      const values = ramp(256 * 1024, k);
      const b = await run(instance, values);
      assert.equal(b.inShm, true);
      assert.deepEqual(
        b.out,
        values.map((x) => x * 2),
      );
      assert.equal(b.kept, firstSum, 'the kept input still holds the first request');
    }
    // A small tensor stays on the pipe.
    assert.equal((await run(instance, ramp(16, 1))).inShm, false);
  });

  it('sends a tensor bigger than the segment through the pipe', async () => {
    const instance = await start(256 * 1024);
    const values = ramp(512 * 1024, 3);
    const result = await run(instance, values);
    assert.equal(result.inShm, false);
    assert.deepEqual(
      result.out,
      values.map((x) => x * 2),
    );
  });

  it('lets the segment go on unload and after the stub is killed', async () => {
    const before = segmentFds().length;
    const instance = await start(1 << 20);
    assert.equal(segmentFds().length, before + 1);
    const killed = instance.pid as number;
    process.kill(killed, 'SIGKILL');
    // The instance restarts its stub with a new segment; the old one's descriptor is closed.
    while (instance.pid === killed || instance.pid === undefined) await new Promise((r) => setTimeout(r, 20));
    await run(instance, ramp(64 * 1024, 1));
    assert.equal(segmentFds().length, before + 1);
    await instance.unload();
    assert.equal(segmentFds().length, before);
    assert.deepEqual(ourFiles(), []);
  });
});

describe('shared memory pieces', { skip: process.platform !== 'linux' }, () => {
  it('reserves batch slots first-fit and falls back when the input half is full', () => {
    const shm = StubSharedMemory.create(2 << 20, () => undefined) as StubSharedMemory;
    try {
      const big: Tensor = { name: 'X', datatype: 'FP32', shape: [100_000], data: new Float32Array(100_000) };
      const first = encodeStubBatch([[big]], shm);
      assert.ok(first.slot && first.parts.length === 0 && first.inputs[0]?.[0]?.shm === 1);
      const second = encodeStubBatch([[big]], shm);
      assert.ok(second.slot && second.slot[1] >= 400_000);
      const third = encodeStubBatch([[big]], shm);
      assert.equal(third.slot, undefined, 'the 1 MiB input half holds two');
      assert.equal(third.parts.length, 1);
      shm.release([first.slot[0]]);
      assert.equal(encodeStubBatch([[big]], shm).slot?.[1], 0, 'a released slot is reused');
      assert.throws(() => decodeStubTensors([{ name: 'Y', datatype: 'FP32', shape: [1], offset: 0, size: 4, shm: 1 }], Buffer.alloc(0), 'stub'), /malformed/);
      // An output the stub wrote into the second half.
      writeSync(shm.handle as number, Buffer.from(Float32Array.from([1.5, -2]).buffer), 0, 8, shm.inputBytes + 128);
      const [out] = decodeStubTensors([{ name: 'Y', datatype: 'FP32', shape: [2], offset: 128, size: 8, shm: 1 }], Buffer.alloc(0), 'stub', shm);
      assert.deepEqual([...((out?.data as Float32Array | undefined) ?? [])], [1.5, -2]);
    } finally {
      shm.close();
    }
  });

  it('sweeps segments of a Herd that is gone, and keeps a live one', () => {
    const dead = join(SHM_DIR, 'herd-py-999999999-abcdef');
    const live = join(SHM_DIR, `herd-py-${process.pid}-abcdef`);
    writeFileSync(dead, '');
    writeFileSync(live, '');
    try {
      const removed = sweepStaleSegments((pid) => pid === process.pid);
      assert.ok(removed.includes('herd-py-999999999-abcdef'));
      assert.ok(readdirSync(SHM_DIR).includes(`herd-py-${process.pid}-abcdef`));
    } finally {
      rmSync(live, { force: true });
      rmSync(dead, { force: true });
    }
  });
});
