// gRPC against KServe binary HTTP on one `herd serve`, with C load tools on both sides (h2load sending framed
// ModelInferRequests, wrk the same request as binary HTTP), beside the floor (bare node:http2 and node:http
// answering Herd's own answer bytes), at c = 1, 16, 64, for Triton's `simple` and a 1 MB tensor model.
// Usage: npm run --silent bench:grpc -- [--herd CHECKOUT] [--seconds 2] [--tensor-seconds 5] [--windows 3] [--concurrency 1,16,64] [--streams 1]
//        > bench/results/grpc-h2load-DATE.md        (method: docs/decisions/grpc-bench-method.md)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, hostname, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchProcess } from '../lib/bench-process.ts';
import { createBinaryInferBody } from '../lib/closed-loop-load.ts';
import { runWrkLoad } from '../lib/wrk-load.ts';
import { type BenchModel, createBenchRepository } from './bench-models.ts';
import { encodeModelInferFrame, MODEL_INFER_PATH } from './grpc-frame.ts';
import { type CellKey, type MeasuredCell, renderCells, renderRatios } from './grpc-h2load-report.ts';
import { runH2loadLoad, type ToolWindow } from './h2load-load.ts';
import { describeCheckout, ensureCheckoutBuilt, type HerdUnderTest, startHerdServe } from './herd-checkout.ts';
import { runInterleavedCell, type Target } from './interleaved-cells.ts';
import { GRPC_HEADERS, verifyGrpcAnswer, verifyHttpAnswer } from './verify-answers.ts';

const { values } = parseArgs({
  options: {
    herd: { type: 'string', default: '.' },
    seconds: { type: 'string', default: '2' },
    // The 1 MB model completes tens of requests per second: longer windows, so fewer are cut at a window's end.
    'tensor-seconds': { type: 'string', default: '5' },
    windows: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,16,64' },
    // gRPC clients that share one channel (tritonclient's cached channel, perf_analyzer) multiplex: --streams 16.
    streams: { type: 'string', default: '1' },
  },
});
const checkout = resolve(values.herd);
const seconds = Number(values.seconds);
const windowSeconds = (model: BenchModel) => (model.name === 'tensor_1mb' ? Number(values['tensor-seconds']) : seconds);
const windows = Number(values.windows);
const levels = values.concurrency.split(',').map(Number);
const streams = Number(values.streams);
const log = (line: string) => process.stderr.write(`${line}\n`);

ensureCheckoutBuilt(checkout);
const { repository, models } = createBenchRepository(checkout);
const scratch = mkdtempSync(join(tmpdir(), 'herd-grpc-h2load-'));
const herd = await startHerdServe(checkout, repository);
const started = new Date();
const loadBefore = loadavg();

interface Counts {
  success: number;
  fail: number;
}
async function readCounts(server: HerdUnderTest, model: string): Promise<Counts> {
  const res = await fetch(`${server.httpOrigin}/v2/models/${model}/stats`);
  const stats = ((await res.json()) as { model_stats: { inference_stats: Record<string, { count: number }> }[] }).model_stats[0];
  return { success: stats?.inference_stats['success']?.count ?? Number.NaN, fail: stats?.inference_stats['fail']?.count ?? Number.NaN };
}

const asWindow = async (run: Promise<Awaited<ReturnType<typeof runWrkLoad>>>): Promise<ToolWindow> => {
  const r = await run;
  const meanLatencyUs = r.okUs.reduce((sum, us) => sum + us, 0) / Math.max(1, r.okUs.length);
  return { requests: r.requests, seconds: r.seconds, failed: r.errors + (r.statuses[599] ?? 0), meanLatencyUs };
};

interface Prepared {
  frameFile: string;
  http: { body: Buffer; headers: Record<string, string> };
  grpcAnswer: Buffer;
  floorHttp: string;
  floorGrpc: string;
  floorPid: number;
}

/** One cell per concurrency level: Herd and the floor, each protocol, in alternating windows. */
async function measureCells(model: BenchModel, prepared: Prepared, cells: MeasuredCell[]): Promise<void> {
  const { frameFile, http, grpcAnswer, floorHttp, floorGrpc, floorPid } = prepared;
  for (const concurrency of levels) {
    log(`${model.name} c=${concurrency} (herd pid ${herd.pid}, floor pid ${floorPid})`);
    const wrk = (origin: string, s: number) =>
      asWindow(runWrkLoad({ origin, path: `/v2/models/${model.name}/infer`, body: http.body, headers: http.headers, concurrency, durationMs: s * 1000 }));
    const h2load = (origin: string, s: number) =>
      runH2loadLoad({
        origin,
        path: MODEL_INFER_PATH,
        bodyFile: frameFile,
        headers: GRPC_HEADERS,
        concurrency,
        streamsPerConnection: streams,
        seconds: s,
        answerBytes: grpcAnswer.length,
      });
    const targets: Record<CellKey, Target> = {
      herdHttp: { pid: herd.pid, run: (s) => wrk(herd.httpOrigin, s) },
      herdGrpc: { pid: herd.pid, run: (s) => h2load(herd.grpcOrigin, s) },
      floorHttp: { pid: floorPid, run: (s) => wrk(floorHttp, s) },
      floorGrpc: { pid: floorPid, run: (s) => h2load(floorGrpc, s) },
    };
    cells.push({ model: model.name, concurrency, results: await runInterleavedCell(targets, windows, windowSeconds(model)) });
  }
}

/** Every cell of one model: its request prepared once, both answers checked, the floor started on them. */
async function measureModel(model: BenchModel): Promise<{ cells: MeasuredCell[]; checks: string }> {
  const frame = encodeModelInferFrame(model.name, model.inputs);
  const frameFile = join(scratch, `${model.name}.grpc`);
  writeFileSync(frameFile, frame);
  const http = createBinaryInferBody(model.inputs);
  const grpcAnswer = await verifyGrpcAnswer(herd.grpcOrigin, frame, model);
  const httpAnswer = await verifyHttpAnswer(herd.httpOrigin, http.body, http.headers, model);
  writeFileSync(join(scratch, `${model.name}.grpc-answer`), grpcAnswer);
  writeFileSync(join(scratch, `${model.name}.http-answer`), httpAnswer.body);
  const floorArgs = [join(scratch, `${model.name}.http-answer`), String(httpAnswer.headerLength), join(scratch, `${model.name}.grpc-answer`)];
  const floor = await startBenchProcess([resolve(import.meta.dirname, 'bare-floor-servers.mjs'), ...floorArgs], /listening http (\d+) grpc (\d+)/, (m) => `${m[1]} ${m[2]}`);
  const [httpPort, grpcPort] = floor.url.split(' ');
  const floorHttp = `http://127.0.0.1:${httpPort}`;
  const floorGrpc = `http://127.0.0.1:${grpcPort}`;
  const cells: MeasuredCell[] = [];
  let before: Counts;
  try {
    await verifyGrpcAnswer(floorGrpc, frame, model);
    await verifyHttpAnswer(floorHttp, http.body, http.headers, model);
    before = await readCounts(herd, model.name);
    await measureCells(model, { frameFile, http, grpcAnswer, floorHttp, floorGrpc, floorPid: floor.child.pid as number }, cells);
  } finally {
    await floor.stop();
  }
  const after = await readCounts(herd, model.name);
  const checks = `${model.name}: answers checked (gRPC grpc-status 0 and outputs; HTTP 200 and outputs), Herd counted ${after.success - before.success} successes and ${after.fail - before.fail} failures during the load; gRPC answer ${grpcAnswer.length} B, HTTP answer ${httpAnswer.body.length} B.`;
  return { cells, checks };
}

const cells: MeasuredCell[] = [];
const checks: string[] = [];
try {
  for (const model of models) {
    const measured = await measureModel(model);
    cells.push(...measured.cells);
    checks.push(measured.checks);
  }
} finally {
  await herd.stop();
  rmSync(repository, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}

const version = (cmd: string, args: string[]) => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .split('\n')[0]
      ?.trim();
  } catch (err) {
    return (
      String((err as { stdout?: string }).stdout ?? '')
        .split('\n')[0]
        ?.trim() || 'unknown'
    );
  }
};
const minutes = ((Date.now() - started.getTime()) / 60_000).toFixed(1);
process.stdout.write(
  [
    `# gRPC vs HTTP with C load tools, ${started.toISOString().slice(0, 10)}`,
    '',
    `Machine: ${hostname()}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; ${version('h2load', ['--version'])}; ${version('wrk', ['--version'])}.`,
    `Herd: ${checkout}, commit ${describeCheckout(checkout)}. Started ${started.toISOString()}, ${minutes} min; load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} after.`,
    `Method: bench/grpc/run-grpc-h2load.ts (docs/decisions/grpc-bench-method.md): per model and concurrency c, four targets in ${windows} interleaved windows of ${seconds} s (the 1 MB model: ${values['tensor-seconds']} s) after a 1 s warm-up each;`,
    `gRPC from \`h2load -t1 ${streams === 1 ? '-cC -m1` (C connections, one stream each)' : `-c⌈C/${streams}⌉ -m${streams}\` (up to ${streams} streams per connection)`} sending the framed ModelInferRequest (raw_input_contents), HTTP from \`wrk -t1 -cC\` sending the same tensors as KServe binary;`,
    "server CPU is the serving process's utime+stime over its own windows ÷ the requests the tool completed; the floor is one process with a bare node:http and a bare node:http2 server answering Herd's answer bytes.",
    '',
    ...renderRatios(cells),
    '',
    ...renderCells(cells),
    '',
    ...checks.map((c) => `- ${c}`),
    '',
  ].join('\n'),
);
