// The cost of serving spans (issue 31): KServe HTTP infer of add_sub through the fast path, closed loop, with
// Triton's tracing off and in OpenTelemetry mode at rate 1 exporting to a local OTLP receiver, in one interleaved run;
// with --baseline DIR (a built checkout of main) also main's server, to show tracing off costs nothing new.
// Usage: npx tsx bench/serving/serving-tracing-bench.ts [--seconds 20] [--concurrency 8] [--baseline /tmp/herd-main]
// (a baseline: `git archive main | tar -x -C DIR`, node_modules linked, `npm run build` there, the commit in DIR/COMMIT)
// Writes bench/results/serving-tracing-<date>.md. Never part of `npm test`.
import { execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createSampleInferBody, runInterleaved, runLoad, type LoadResult, type LoadSpec } from '../lib/closed-loop-load.ts';
import { copyRepository, ensureBuilt, type RunningProcess } from '../lib/herd-process.ts';
import { diffThreadCpu, readThreadCpu } from '../lib/thread-cpu.ts';
import { isWrkInstalled, runWrkLoad } from '../lib/wrk-load.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? (args[args.indexOf(name) + 1] ?? fallback) : fallback);
const seconds = Number(option('--seconds', '20'));
const concurrency = Number(option('--concurrency', '8'));
const baseline = args.includes('--baseline') ? option('--baseline', '') : undefined;
// add_sub (the cheapest inference there is: the worst case for a fixed per-request cost) or mlp_2048 (FP32[768]).
const model = option('--model', 'add_sub');
const useWrk = isWrkInstalled();
const load = (spec: LoadSpec) => (useWrk ? runWrkLoad(spec) : runLoad(spec));

/** A collector that accepts every export: counts requests and bytes (decoding is the test suite's job). */
async function startSink(): Promise<{ url: string; exports: () => { requests: number; bytes: number }; close: () => Promise<void> }> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (d: Buffer) => {
      bytes += d.length;
    });
    req.on('end', () => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
      res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/traces`, exports: () => ({ requests, bytes }), close: () => new Promise((ok) => server.close(() => ok())) };
}

/** `herd serve` from a built tree (this one, or main's for the baseline), its URL read from the start-up line. */
async function startServer(root: string, repository: string, extra: string[]): Promise<RunningProcess> {
  const child = spawn(
    process.execPath,
    [join(root, 'dist/cli/herd.js'), 'serve', '--model-repository', repository, '--host', '127.0.0.1', '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, OTEL_SDK_DISABLED: undefined } },
  );
  const url = await new Promise<string>((ok, fail) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out);
      if (m) ok(m[1] as string);
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) => fail(new Error(`herd exited with ${code}:\n${out}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

ensureBuilt();
const sink = await startSink();
const repository = copyRepository([model]);
const traceOn = ['level=TIMESTAMPS', 'rate=1', 'mode=opentelemetry', `opentelemetry,url=${sink.url}`, 'opentelemetry,bsp_schedule_delay=200'].flatMap((v) => ['--trace-config', v]);
const servers: Record<string, RunningProcess> = {
  off: await startServer(resolve('.'), repository, []),
  on: await startServer(resolve('.'), repository, traceOn),
};
if (baseline) servers['main'] = await startServer(resolve(baseline), repository, []);
const { body, headers } = createSampleInferBody(model);
const spec = (url: string, durationMs: number): LoadSpec => ({ origin: url, path: `/v2/models/${model}/infer`, body, headers, concurrency, durationMs });
// Warm-up: JIT, the ONNX session, connection pools.
for (const s of Object.values(servers)) await load(spec(s.url, 2000));
const before = sink.exports();
// CPU the server's threads spent per answered request: on a shared host it moves far less with the neighbours' load than req/s.
const cpuUs: Record<string, number> = Object.fromEntries(Object.keys(servers).map((k) => [k, 0]));
const measured = async (name: string, server: RunningProcess, ms: number): Promise<LoadResult> => {
  const start = readThreadCpu(server.child.pid as number);
  const result = await load(spec(server.url, ms));
  cpuUs[name] = (cpuUs[name] ?? 0) + diffThreadCpu(start, readThreadCpu(server.child.pid as number)).total;
  return result;
};
const results: Record<string, LoadResult> = await runInterleaved(
  Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, (ms: number) => measured(k, s, ms)])),
  seconds * 1000,
  2000,
  200,
);
await new Promise((r) => setTimeout(r, 500));
const exported = sink.exports();
for (const s of Object.values(servers)) await s.stop();
await sink.close();

const commit = execSync('git rev-parse --short HEAD').toString().trim();
// The baseline tree has no .git: the commit it was archived from is written beside it (COMMIT).
const mainCommit = baseline && existsSync(join(baseline, 'COMMIT')) ? readFileSync(join(baseline, 'COMMIT'), 'utf8').trim() : 'unknown';
const date = new Date().toISOString().slice(0, 10);
const off = results['off'] as LoadResult;
const cpuPerRequest = (name: string) => (cpuUs[name] ?? 0) / Math.max(1, (results[name] as LoadResult).requests);
const refused = (r: LoadResult) => r.errors + Object.entries(r.statuses).reduce((n, [status, count]) => n + (status === '200' ? 0 : count), 0);
const row = (name: string, r: LoadResult) =>
  `| ${name} | ${r.requests} | ${r.perSecond.toFixed(0)} | ${((100 * r.perSecond) / off.perSecond).toFixed(1)}% | ${cpuPerRequest(name).toFixed(1)} | ${((100 * cpuPerRequest('off')) / cpuPerRequest(name)).toFixed(1)}% | ${(r.p50us / 1000).toFixed(2)} | ${(r.p99us / 1000).toFixed(2)} | ${refused(r)} |`;
const lines = [
  `# Serving spans: tracing off vs on (${date})`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}. Commit ${commit}${baseline ? ` (baseline: main at ${mainCommit}, built from \`git archive main\`)` : ''}.`,
  '',
  `\`npx tsx bench/serving/serving-tracing-bench.ts --model ${model} --seconds ${seconds} --concurrency ${concurrency}${baseline ? ' --baseline …' : ''}\`: KServe HTTP binary infer of the ONNX ${model}`,
  `(the fast path), ${useWrk ? 'wrk (one thread)' : 'undici'} closed loop, ${concurrency} connections; the servers run side by side and take 2 s windows in turn`,
  `(${seconds} s each in all), after a 2 s warm-up each. \`on\`: \`--trace-config mode=opentelemetry level=TIMESTAMPS rate=1\` exporting`,
  `every request (InferRequest, ${model}, compute: 3 spans, 11 events) by OTLP/HTTP protobuf to a local receiver in the bench process.`,
  '',
  "`CPU µs/req`: all the server's threads (/proc), per answered request; `capacity vs off`: off's CPU per request over this one's,",
  'the throughput share a CPU-bound server keeps (req/s moves with the neighbours on a shared host, CPU per request much less).',
  '',
  '| server | requests | req/s | req/s vs off | CPU µs/req | capacity vs off | p50 ms | p99 ms | errors |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...Object.entries(results).map(([k, r]) => row(k, r)),
  '',
  `Exported during the measured windows: ${exported.requests - before.requests} OTLP requests, ${((exported.bytes - before.bytes) / 2 ** 20).toFixed(1)} MiB` +
    ` (${((exported.bytes - before.bytes) / Math.max(1, (results['on'] as LoadResult).requests)).toFixed(0)} B per traced request).`,
];
const text = `${lines.join('\n')}\n`;
process.stdout.write(text);
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/serving-tracing-${date}-${model}.md`, text);
