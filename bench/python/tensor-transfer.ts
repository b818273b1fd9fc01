// Large tensors to the stub and back: bench/python's identity_py run through one PythonModelInstance in
// process (no HTTP), once with every tensor on the pipe (no segment) and once with the shared-memory segment.
import { resolve } from 'node:path';
import type { InferenceRequest } from '../../src/serving/backends/backend.ts';
import { startPythonInstance, type PythonModelInstance } from '../../src/serving/backends/python/python-model-instance.ts';

export interface TransferRow {
  label: string;
  bytes: number;
  pipeUs: number;
  shmUs: number;
}

const SIZES = [
  { label: '64 KiB', bytes: 64 << 10 },
  { label: '1 MiB', bytes: 1 << 20 },
  { label: '16 MiB', bytes: 16 << 20 },
];

function start(python: string, sharedMemoryBytes: number): Promise<PythonModelInstance> {
  return startPythonInstance({
    executable: python,
    modelFile: resolve('bench/python/model_repository/identity_py/1/model.py'),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    label: 'identity_py/1/identity_py_0',
    args: { model_name: 'identity_py', model_instance_name: 'identity_py_0' },
    decoupled: false,
    outputNames: ['OUT'],
    timeoutMs: 30_000,
    log: (line) => process.stderr.write(`${line}\n`),
    inference: undefined,
    sharedMemoryBytes,
  });
}

async function p50(instance: PythonModelInstance, bytes: number): Promise<number> {
  const data = Float32Array.from({ length: bytes / 4 }, (_, i) => i);
  const request: InferenceRequest = {
    id: '',
    modelName: 'identity_py',
    modelVersion: 1,
    inputs: [{ name: 'IN', datatype: 'FP32', shape: [data.length], data }],
    requestedOutputs: [],
    parameters: {},
  };
  const runs = bytes >= 16 << 20 ? 40 : 400;
  const times: number[] = [];
  for (let i = 0; i < runs + 5; i++) {
    const t0 = process.hrtime.bigint();
    const [result] = await instance.execute([request]);
    if (!result?.ok) throw new Error(result ? result.error.message : 'no result');
    if (i >= 5) times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

/** Pipe and segment alternate per size, so both see the same background load. */
export async function measureTensorTransfer(python: string): Promise<TransferRow[]> {
  const pipe = await start(python, 0);
  const shm = await start(python, 64 << 20);
  const rows: TransferRow[] = [];
  try {
    for (const { label, bytes } of SIZES) {
      const pipeUs = await p50(pipe, bytes);
      const shmUs = await p50(shm, bytes);
      rows.push({ label, bytes, pipeUs, shmUs });
    }
  } finally {
    await pipe.unload();
    await shm.unload();
  }
  return rows;
}
