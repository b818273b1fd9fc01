// gRPC against HTTP binary on the same `herd serve` (compiled dist), in interleaved windows so a shared
// host's drift falls on both: add_sub at c=1 (p50), my_model at c=64 (req/s), and mlp_2048 with 64-sample
// requests through system shared memory against HTTP binary (samples/s); server CPU per request of each.
// Usage: npx tsx bench/grpc/run-grpc-bench.ts [SECONDS_PER_CELL] > bench/results/grpc-DATE-HOST.md
// Its load generators (undici, grpc-js) run in this process on the server's cores and cost more than the server:
// gRPC against HTTP is measured with C tools by run-grpc-h2load.ts (docs/decisions/grpc-bench-method.md).
import { spawn, execSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { resolve } from 'node:path';
import { createBinaryInferBody, runInterleaved, runLoad, type LoadResult } from '../lib/closed-loop-load.ts';
import { copyRepository, ensureBuilt } from '../lib/herd-process.ts';
import { diffThreadCpu, readThreadCpu } from '../lib/thread-cpu.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { encodeInferRequest, GrpcLoad } from './grpc-closed-loop.ts';

const seconds = Number(process.argv[2] ?? '8');
ensureBuilt();
const repo = copyRepository(['add_sub', 'my_model', 'mlp_2048']);
const child = spawn(
  process.execPath,
  [resolve('dist/cli/herd.js'), 'serve', '--model-repository', repo, '--host', '127.0.0.1', '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const { httpUrl, grpcAddress } = await new Promise<{ httpUrl: string; grpcAddress: string }>((ok, fail) => {
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const http = out.match(/Started HTTPService at \S+ \((http:\/\/[^)]+)\)/);
    const grpc = out.match(/Started GRPCInferenceService at \S+ \(([^)]+)\)/);
    if (http && grpc) ok({ httpUrl: http[1]!, grpcAddress: grpc[1]! });
  });
  child.on('exit', (code) => fail(new Error(`herd exited with ${code}:\n${out}`)));
});
const pid = child.pid as number;

interface Cell {
  result: LoadResult;
  cpuUsPerRequest: number;
}

/** Interleaved windows of both targets; CPU of the server process summed per target over its own windows. */
async function compare(targets: Record<'http' | 'grpc', (ms: number) => Promise<LoadResult>>): Promise<Record<'http' | 'grpc', Cell>> {
  const cpu = { http: 0, grpc: 0 };
  const wrapped = Object.fromEntries(
    (Object.keys(targets) as ('http' | 'grpc')[]).map((k) => [
      k,
      async (ms: number) => {
        const before = readThreadCpu(pid);
        const r = await targets[k](ms);
        cpu[k] += diffThreadCpu(before, readThreadCpu(pid)).total;
        return r;
      },
    ]),
  ) as Record<'http' | 'grpc', (ms: number) => Promise<LoadResult>>;
  for (const k of ['http', 'grpc'] as const) await targets[k](1000); // warm-up, not counted
  const merged = await runInterleaved(wrapped, seconds * 1000, 1000, 100);
  return { http: { result: merged.http, cpuUsPerRequest: cpu.http / merged.http.requests }, grpc: { result: merged.grpc, cpuUsPerRequest: cpu.grpc / merged.grpc.requests } };
}

const int32 = (n: number) => Int32Array.from({ length: n }, (_, i) => i);
const fp32 = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i));
const grpcRequest = (model: string, inputs: { name: string; datatype: string; shape: number[]; data: ArrayBufferView }[]) =>
  encodeInferRequest({
    model_name: model,
    inputs: inputs.map((i) => ({ name: i.name, datatype: i.datatype, shape: i.shape })),
    raw_input_contents: inputs.map((i) => Buffer.from(i.data.buffer, i.data.byteOffset, i.data.byteLength)),
  });

const rows: string[] = [];
const addSubInputs = ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1, 16], data: int32(16) }));
const myModelInputs = [{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: fp32(768) }];

const one = new GrpcLoad(grpcAddress, 1);
const addSub = await compare({
  http: (ms) => runLoad({ origin: httpUrl, path: '/v2/models/add_sub/infer', ...createBinaryInferBody(addSubInputs), concurrency: 1, durationMs: ms }),
  grpc: (ms) => one.run(grpcRequest('add_sub', addSubInputs), 1, ms),
});
one.close();
const many = new GrpcLoad(grpcAddress, 4);
const myModel = await compare({
  http: (ms) => runLoad({ origin: httpUrl, path: '/v2/models/my_model/infer', ...createBinaryInferBody(myModelInputs), concurrency: 64, durationMs: ms }),
  grpc: (ms) => many.run(grpcRequest('my_model', myModelInputs), 64, ms),
});
many.close();

// mlp_2048, 64 samples per request: HTTP binary against gRPC with input and output in system shared memory.
const key = `/herd_bench_${process.pid}`;
const inBytes = 64 * 768 * 4;
const outBytes = 64 * 512 * 4;
const fd = openSync(`/dev/shm${key}`, 'w+');
const sample = fp32(64 * 768);
writeSync(fd, Buffer.from(sample.buffer), 0, inBytes, 0);
writeSync(fd, Buffer.alloc(outBytes), 0, outBytes, inBytes);
closeSync(fd);
const shmClient = new GrpcLoad(grpcAddress, 2);
const control = new KserveGrpcClient({ url: grpcAddress });
await control.registerSystemSharedMemory('bench', key, inBytes + outBytes, 0);
control.close();
const shm = (name: string, offset: number, size: number) => ({
  shared_memory_region: { string_param: name },
  shared_memory_offset: { int64_param: offset },
  shared_memory_byte_size: { int64_param: size },
});
const shmBody = encodeInferRequest({
  model_name: 'mlp_2048',
  inputs: [{ name: 'INPUT__0', datatype: 'FP32', shape: [64, 768], parameters: shm('bench', 0, inBytes) }],
  outputs: [{ name: 'OUTPUT__0', parameters: shm('bench', inBytes, outBytes) }],
});
const mlpInputs = [{ name: 'INPUT__0', datatype: 'FP32', shape: [64, 768], data: sample }];
const mlp = await compare({
  http: (ms) => runLoad({ origin: httpUrl, path: '/v2/models/mlp_2048/infer', ...createBinaryInferBody(mlpInputs), concurrency: 2, durationMs: ms }),
  grpc: (ms) => shmClient.run(shmBody, 2, ms),
});
shmClient.close();
rmSync(`/dev/shm${key}`, { force: true });

child.kill('SIGTERM');
rmSync(repo, { recursive: true, force: true });

const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)}%`;
const row = (name: string, c: Cell) =>
  `| ${name} | ${Math.round(c.result.perSecond)} | ${Math.round(c.result.p50us)} | ${Math.round(c.result.p99us)} | ${Math.round(c.cpuUsPerRequest)} | ${c.result.errors} |`;
rows.push('| cell | req/s | p50 µs | p99 µs | server CPU µs/request | errors |', '| --- | ---: | ---: | ---: | ---: | ---: |');
rows.push(row('add_sub c=1 HTTP binary', addSub.http), row('add_sub c=1 gRPC', addSub.grpc));
rows.push(row('my_model c=64 HTTP binary', myModel.http), row('my_model c=64 gRPC (4 channels)', myModel.grpc));
rows.push(row('mlp_2048 64 samples c=2 HTTP binary', mlp.http), row('mlp_2048 64 samples c=2 gRPC + system shm', mlp.grpc));
let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD').toString().trim();
} catch {
  /* not a checkout */
}
process.stdout.write(
  [
    `# gRPC vs HTTP binary, ${new Date().toISOString().slice(0, 10)}`,
    '',
    `Machine: ${hostname()}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}. Commit ${commit}.`,
    `Method: bench/grpc/run-grpc-bench.ts, one \`herd serve\` (dist), ${seconds} s per cell in interleaved 1 s windows (HTTP, gRPC, gRPC, HTTP, ...), closed loop;`,
    'HTTP through undici (connections = concurrency), gRPC through grpc-js with the request encoded once; neither decodes answers.',
    '',
    ...rows,
    '',
    `- gRPC throughput / HTTP, my_model c=64: ${pct(myModel.grpc.result.perSecond, myModel.http.result.perSecond)} (target ≥ 90%)`,
    `- gRPC p50 − HTTP p50, add_sub c=1: ${Math.round(addSub.grpc.result.p50us - addSub.http.result.p50us)} µs (target ≤ +50 µs)`,
    `- gRPC + system shm samples/s / HTTP binary, mlp_2048 64 samples: ${pct(mlp.grpc.result.perSecond, mlp.http.result.perSecond)} (target ≥ 110%)`,
    '',
  ].join('\n'),
);
