// Large tensors to the stub and back: bench/python's identity_py run through one PythonModelInstance in
// process (no HTTP), once with every tensor on the pipe (no segment) and once with the shared-memory segment.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { InferenceRequest } from '../../src/serving/backends/backend.ts';
import { startPythonInstance, type PythonModelInstance } from '../../src/serving/backends/python/python-model-instance.ts';

export interface TransferRow {
  label: string;
  bytes: number;
  pipe: Sample;
  shm: Sample;
}

/** p50 latency of one execute, and CPU per execute of Herd's process and of the stub (µs). */
export interface Sample {
  p50us: number;
  herdCpuUs: number;
  stubCpuUs: number;
}

const stubCpuNs = (pid: number | undefined) => (pid ? Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) : 0);

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

async function sample(instance: PythonModelInstance, bytes: number): Promise<Sample> {
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
  let cpu0 = process.cpuUsage();
  let stub0 = 0;
  for (let i = 0; i < runs + 5; i++) {
    if (i === 5) {
      cpu0 = process.cpuUsage();
      stub0 = stubCpuNs(instance.pid);
    }
    const t0 = process.hrtime.bigint();
    const [result] = await instance.execute([request]);
    if (!result?.ok) throw new Error(result ? result.error.message : 'no result');
    if (i >= 5) times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  const stubUs = (stubCpuNs(instance.pid) - stub0) / 1000;
  times.sort((a, b) => a - b);
  return { p50us: times[Math.floor(times.length / 2)] ?? 0, herdCpuUs: (cpu.user + cpu.system) / runs, stubCpuUs: stubUs / runs };
}

/** Pipe and segment alternate per size, so both see the same background load. */
export async function measureTensorTransfer(python: string): Promise<TransferRow[]> {
  const pipe = await start(python, 0);
  const shm = await start(python, 64 << 20);
  const rows: TransferRow[] = [];
  try {
    for (const { label, bytes } of SIZES) {
      rows.push({ label, bytes, pipe: await sample(pipe, bytes), shm: await sample(shm, bytes) });
    }
  } finally {
    await pipe.unload();
    await shm.unload();
  }
  return rows;
}
