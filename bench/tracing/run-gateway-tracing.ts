// The gateway's cost of tracing: the same Herd (compiled, `herd serve`) twice in one run, tracing off and on at
// sampling 1.0 exporting OTLP/HTTP protobuf to a collector in another process (it reads each body, answers 200),
// in front of the gateway bench's mock upstream; closed-loop JSON and streaming loads in interleaved 1 s windows.
// Target: throughput with tracing on ≥ 90% of off. Command: npx tsx bench/tracing/run-gateway-tracing.ts [--seconds 10]
import { execSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { runInterleaved, runLoad, summariseLoad, type LoadResult } from '../lib/closed-loop-load.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { type BenchProcess, cpuSeconds, startBenchProcess as start } from '../lib/bench-process.ts';
import { createBenchGatewayYaml } from '../gateway/bench-gateway-yaml.ts';
import { BENCH_MASTER_KEY, createBenchChatBody } from '../gateway/bench-chat-request.ts';

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1] || 10);
const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_MASTER_KEY}` };
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const SINK = `
const http = require('node:http');
let spans = 0, bytes = 0;
const server = http.createServer((req, res) => { req.on('data', (d) => { bytes += d.length; }); req.on('end', () => { spans++; res.writeHead(200, {'content-type': 'application/x-protobuf'}).end(); }); });
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
process.on('SIGTERM', () => { console.error('collector: ' + spans + ' exports, ' + bytes + ' bytes'); process.exit(0); });
`;

async function startCollector(): Promise<BenchProcess> {
  const child = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((ok) => child.stdout.once('data', (d: Buffer) => ok(/listening (\d+)/.exec(d.toString())?.[1] ?? '')));
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    child,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

async function startGateway(mockUrl: string, env: Record<string, string>): Promise<BenchProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-gw-tracing-bench-'));
  writeFileSync(
    join(dir, 'herd.yaml'),
    createBenchGatewayYaml({ baseUrl: `${mockUrl}/v1`, ledger: 'off', authDb: join(dir, 'herd.db'), upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }),
  );
  return start([resolve('dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')], /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/, (m) => m[1] as string, {
    ...process.env,
    HERD_BENCH_MASTER: BENCH_MASTER_KEY,
    BENCH_UPSTREAM_KEY: 'sk-bench',
    ...env,
  });
}

/** Closed loop of streaming requests, read to the end. */
async function runStreamLoad(origin: string, concurrency: number, durationMs: number): Promise<LoadResult> {
  const pool = new Pool(origin, { connections: concurrency, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  const end = performance.now() + durationMs;
  const started = performance.now();
  const body = createBenchChatBody(true);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', body, headers });
          for await (const _part of res.body);
          latencies.push((performance.now() - t0) * 1000);
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return summariseLoad({ ok: latencies, refused: [], seconds: elapsed, statuses, errors });
}

const jsonLoad = (origin: string, concurrency: number, durationMs: number) =>
  runLoad({ origin, path: '/v1/chat/completions', body: createBenchChatBody(false), headers, concurrency, durationMs });

ensureBuilt();
const mock = await start([resolve('bench/gateway/mock-upstream.mjs'), '0'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
const collector = await startCollector();
const off = await startGateway(mock.url, {});
const on = await startGateway(mock.url, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.0' });
const targets = { 'tracing off': off, 'tracing on (1.0, exporting)': on } as const;
type Name = keyof typeof targets;

async function measure(load: (origin: string, c: number, ms: number) => Promise<LoadResult>, concurrency: number) {
  const cpu: Record<string, number> = {};
  const runs = await runInterleaved(
    Object.fromEntries(
      (Object.keys(targets) as Name[]).map((name) => [
        name,
        async (ms: number) => {
          const pid = targets[name].child.pid!;
          const before = cpuSeconds(pid);
          const r = await load(targets[name].url, concurrency, ms);
          cpu[name] = (cpu[name] ?? 0) + cpuSeconds(pid) - before;
          return r;
        },
      ]),
    ) as Record<Name, (ms: number) => Promise<LoadResult>>,
    seconds * 1000,
    1000,
  );
  return (Object.keys(targets) as Name[]).map((name) => {
    const r = runs[name];
    const answered = r.statuses[200] ?? 0;
    if (answered !== r.requests || r.errors > 0) throw new Error(`${name}: statuses ${JSON.stringify(r.statuses)} errors ${r.errors}`);
    return { name, perSecond: answered / r.seconds, p50: r.p50us, p99: r.p99us, cpuUs: ((cpu[name] ?? 0) * 1e6) / Math.max(1, answered) };
  });
}

for (const t of Object.values(targets)) {
  await jsonLoad(t.url, 16, 2000);
  await runStreamLoad(t.url, 16, 2000);
}
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const date = new Date().toISOString().slice(0, 10);
say(`# Gateway with tracing off and on — ${date}\n`);
say(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(
      ' ',
    )} at the start; commit ${commit}. Both Herds (compiled, \`herd serve\`, ledger off), the mock upstream, the collector and the load generator share the machine. ${seconds} s per cell in 1 s windows alternating between the two. Tracing on: sampling 1.0 (\`OTEL_TRACES_SAMPLER_ARG=1.0\`), three spans per request (SERVER, operation, CLIENT) exported as OTLP/HTTP protobuf to a collector process that reads each body and answers 200. Command: \`npx tsx bench/tracing/run-gateway-tracing.ts --seconds ${seconds}\`.\n`,
);
say('| load | concurrency | variant | answers/s | ratio to off | p50 µs | p99 µs | CPU µs/answer |');
say('| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |');
const ratios: number[] = [];
for (const [label, load] of [
  ['JSON', jsonLoad],
  ['stream', runStreamLoad],
] as const) {
  for (const c of [1, 16, 64]) {
    const [a, b] = await measure(load, c);
    const ratio = b!.perSecond / a!.perSecond;
    ratios.push(ratio);
    for (const row of [a!, b!]) {
      say(`| ${label} | ${c} | ${row.name} | ${fmt(row.perSecond)} | ${row === a ? '1.00' : ratio.toFixed(2)} | ${fmt(row.p50)} | ${fmt(row.p99)} | ${fmt(row.cpuUs)} |`);
    }
  }
}
say(`\nLowest ratio on/off: ${Math.min(...ratios).toFixed(2)} (target ≥ 0.90).`);
for (const p of [on, off, mock, collector]) await p.stop();
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/gateway-tracing-${date}.md`, `${lines.join('\n')}\n`);
