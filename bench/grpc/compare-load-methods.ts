// The previous method beside the new one, on one `herd serve` and Triton's `simple`: Node load generators in
// this process (undici for HTTP, grpc-js for gRPC, as run-grpc-bench.ts drove them) against C tools in their own
// process (wrk, h2load), interleaved. Books the server's CPU per request and the load generator's own CPU per
// request: on a 2-core machine a generator that needs a core for itself decides what the server gets.
// Usage: npx tsx bench/grpc/compare-load-methods.ts [--herd CHECKOUT] [--seconds 2] [--windows 3] [--concurrency 16,64]
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, hostname, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createBinaryInferBody, type LoadResult, runLoad } from '../lib/closed-loop-load.ts';
import { runWrkLoad } from '../lib/wrk-load.ts';
import { createBenchRepository } from './bench-models.ts';
import { GrpcLoad } from './grpc-closed-loop.ts';
import { encodeModelInferFrame, MODEL_INFER_PATH } from './grpc-frame.ts';
import { runH2loadLoad, type ToolWindow } from './h2load-load.ts';
import { describeCheckout, ensureCheckoutBuilt, startHerdServe } from './herd-checkout.ts';
import { runInterleavedCell, type Target } from './interleaved-cells.ts';
import { GRPC_HEADERS, verifyGrpcAnswer } from './verify-answers.ts';

const { values } = parseArgs({
  options: {
    herd: { type: 'string', default: '.' },
    seconds: { type: 'string', default: '2' },
    windows: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16,64' },
  },
});
const checkout = resolve(values.herd);
const [seconds, windows] = [Number(values.seconds), Number(values.windows)];
ensureCheckoutBuilt(checkout);
const { repository, models } = createBenchRepository(checkout);
const model = models[0]!;
const scratch = mkdtempSync(join(tmpdir(), 'herd-grpc-methods-'));
const herd = await startHerdServe(checkout, repository);
const started = new Date();
const loadBefore = loadavg();

/** CPU µs of this process (the Node generators) and of its exited children (wrk, h2load: waited for, so booked in cutime/cstime). */
function generatorCpuUs(): { self: number; children: number } {
  const f = (readFileSync('/proc/self/stat', 'utf8').split(') ')[1] ?? '').split(' ');
  const usage = process.cpuUsage();
  return { self: usage.user + usage.system, children: (Number(f[13]) + Number(f[14])) * 10_000 };
}

const fromLoad = (r: LoadResult): ToolWindow => ({
  requests: r.requests,
  seconds: r.seconds,
  failed: r.requests - (r.statuses[200] ?? 0),
  meanLatencyUs: r.okUs.reduce((s, x) => s + x, 0) / Math.max(1, r.okUs.length),
});

const frame = encodeModelInferFrame(model.name, model.inputs);
const frameFile = join(scratch, 'simple.grpc');
writeFileSync(frameFile, frame);
const grpcAnswer = await verifyGrpcAnswer(herd.grpcOrigin, frame, model);
const http = createBinaryInferBody(model.inputs);
const path = `/v2/models/${model.name}/infer`;
const rows: string[] = [];
try {
  for (const concurrency of values.concurrency.split(',').map(Number)) {
    const grpcJs = new GrpcLoad(herd.grpcOrigin.replace('http://', ''), 4);
    const clientCpu: Record<string, number> = {};
    const booked = (key: string, inProcess: boolean, run: (s: number) => Promise<ToolWindow>): Target => ({
      pid: herd.pid,
      run: async (s) => {
        const before = generatorCpuUs();
        const r = await run(s);
        const after = generatorCpuUs();
        // Warm-up windows (1 s) are booked too; the ratio per request is what the table shows.
        clientCpu[key] = (clientCpu[key] ?? 0) + (inProcess ? after.self - before.self : after.children - before.children);
        clientCpu[`${key}#requests`] = (clientCpu[`${key}#requests`] ?? 0) + r.requests;
        return r;
      },
    });
    const targets = {
      'HTTP, undici in process (old)': booked('undici', true, async (s) => fromLoad(await runLoad({ origin: herd.httpOrigin, path, ...http, concurrency, durationMs: s * 1000 }))),
      'gRPC, grpc-js in process, 4 channels (old)': booked('grpcjs', true, async (s) => fromLoad(await grpcJs.run(frame.subarray(5), concurrency, s * 1000))),
      'HTTP, wrk (new)': booked('wrk', false, async (s) => fromLoad(await runWrkLoad({ origin: herd.httpOrigin, path, ...http, concurrency, durationMs: s * 1000 }))),
      'gRPC, h2load (new)': booked('h2load', false, (s) =>
        runH2loadLoad({ origin: herd.grpcOrigin, path: MODEL_INFER_PATH, bodyFile: frameFile, headers: GRPC_HEADERS, concurrency, seconds: s, answerBytes: grpcAnswer.length }),
      ),
    };
    const result = await runInterleavedCell(targets, windows, seconds);
    grpcJs.close();
    const keys = ['undici', 'grpcjs', 'wrk', 'h2load'];
    Object.entries(result).forEach(([label, r], i) => {
      const key = keys[i] as string;
      const client = (clientCpu[key] ?? 0) / Math.max(1, clientCpu[`${key}#requests`] ?? 1);
      rows.push(`| ${concurrency} | ${label} | ${Math.round(r.perSecond)} | ${r.cpuUsPerRequest.toFixed(1)} | ${client.toFixed(1)} | ${r.failed} |`);
    });
  }
} finally {
  await herd.stop();
  rmSync(repository, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}
process.stdout.write(
  [
    `# The previous gRPC bench method beside the new one, ${started.toISOString().slice(0, 10)}`,
    '',
    `Machine: ${hostname()}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}. Herd ${checkout}, commit ${describeCheckout(checkout)}; load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} after.`,
    `Method: bench/grpc/compare-load-methods.ts, model \`${model.name}\`, ${windows} interleaved windows of ${seconds} s per target after a 1 s warm-up; server CPU from /proc/<pid>/stat over each target's windows;`,
    "load generator CPU: process.cpuUsage() for the in-process Node generators, the bench process's cutime+cstime (its exited children) for wrk and h2load, warm-up included.",
    '',
    '| c | load generator | req/s | server CPU µs/request | generator CPU µs/request | failed |',
    '| ---: | --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n'),
);
