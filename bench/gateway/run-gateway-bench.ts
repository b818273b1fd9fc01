import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { runInterleaved, runLoad, summariseLoad, type LoadResult } from '../lib/closed-loop-load.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { runRawOpenLoop } from '../lib/raw-http-load.ts';
import { createSequentialClient, runSequential } from '../lib/sequential-keepalive-load.ts';
import { createBenchGatewayYaml } from './bench-gateway-yaml.ts';
import { type BenchProcess as Proc, cpuSeconds, rssMiB, startBenchProcess as start } from '../lib/bench-process.ts';
import { BENCH_MASTER_KEY, createBenchChatBody } from './bench-chat-request.ts';

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1] || 5);
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const MASTER = BENCH_MASTER_KEY;

const request = createBenchChatBody;
const headers = { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` };

/** Closed loop of streaming requests, as a LoadResult whose latencies are the times to the first body byte. */
async function runStreamLoad(origin: string, concurrency: number, durationMs: number): Promise<LoadResult> {
  const pool = new Pool(origin, { connections: concurrency, keepAliveTimeout: 60_000 });
  const ttfb: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  const end = performance.now() + durationMs;
  const started = performance.now();
  const body = request(true);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', body, headers });
          let first = true;
          for await (const _part of res.body) {
            if (first) {
              ttfb.push((performance.now() - t0) * 1000);
              first = false;
            }
          }
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return summariseLoad({ ok: ttfb, refused: [], seconds, statuses, errors });
}

// Herd runs as `npm start` runs it: compiled to dist/ (no tsx loader in the process).
ensureBuilt();
const mock = await start([resolve('bench/gateway/mock-upstream.mjs'), '0'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
const bare = await start([resolve('bench/gateway/bare-relay.mjs'), '0', mock.url], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
async function startHerdGateway(ledger: string): Promise<Proc> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-gw-bench-'));
  writeFileSync(join(dir, 'herd.yaml'), createBenchGatewayYaml({ baseUrl: `${mock.url}/v1`, ledger, authDb: './herd.db', upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }));
  return start([resolve('dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')], /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/, (m) => m[1] as string, {
    ...process.env,
    HERD_BENCH_MASTER: MASTER,
    BENCH_UPSTREAM_KEY: 'sk-bench',
  });
}
const herd = await startHerdGateway('sqlite:./herd.db');
const idleRss = rssMiB(herd.child.pid!);
const herdNoLedger = await startHerdGateway('off');

const targets = [
  { name: 'mock upstream, direct', url: mock.url, pid: mock.child.pid! },
  { name: 'bare relay (node:http + undici)', url: bare.url, pid: bare.child.pid! },
  { name: 'Herd (auth, routing, limits, cache lookup, ledger)', url: herd.url, pid: herd.child.pid! },
];
const date = new Date().toISOString().slice(0, 10);
say(`# Gateway benchmarks — ${date}\n`);
say(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load generator (undici Pool; raw keep-alive sockets for the equal-load cell), mock upstream, relay and Herd all on the same 2 cores. ${seconds} s per cell, in 1 s windows alternating between the three targets. Command: \`npx tsx bench/gateway/run-gateway-bench.ts --seconds ${seconds}\`. CPU per request is the server process's own (user+system) over the requests it answered; for the relays it excludes the mock's CPU.\n`,
);

type Target = (typeof targets)[number];
/**
 * One cell: the three targets in alternating 1 s windows (see runInterleaved), so drift in the shared
 * machine's background load falls on all of them alike; CPU per answer is each server's own, over its windows.
 */
async function measureCell(load: (origin: string, concurrency: number, ms: number) => Promise<LoadResult>, concurrency: number) {
  const cpu = new Map<Target, number>();
  const runs = await runInterleaved(
    Object.fromEntries(
      targets.map((t) => [
        t.name,
        async (ms: number) => {
          const before = cpuSeconds(t.pid);
          const r = await load(t.url, concurrency, ms);
          cpu.set(t, (cpu.get(t) ?? 0) + cpuSeconds(t.pid) - before);
          return r;
        },
      ]),
    ),
    seconds * 1000,
    1000,
  );
  return targets.map((t) => {
    const r = runs[t.name]!;
    const answered = r.statuses[200] ?? 0;
    if (answered !== r.requests) throw new Error(`${t.name}: statuses ${JSON.stringify(r.statuses)} errors ${r.errors}`);
    return { target: t, perSecond: answered / r.seconds, p50: r.p50us, p99: r.p99us, cpuUs: ((cpu.get(t) ?? 0) * 1e6) / Math.max(1, answered) };
  });
}
const jsonLoad = (origin: string, concurrency: number, durationMs: number) =>
  runLoad({ origin, path: '/v1/chat/completions', body: request(false), headers, concurrency, durationMs });

// Warm-up of the same kind as the measurement: until V8 has optimised a path, its cost is the compiler's.
// Streams take code paths the non-streaming load never ran (SSE parsing, the relay): they are warmed too.
for (const t of targets) {
  await jsonLoad(t.url, 16, 2000);
  await runStreamLoad(t.url, 16, 2000);
}
const cells: Record<'json' | 'stream', Record<number, Awaited<ReturnType<typeof measureCell>>>> = { json: {}, stream: {} };
for (const c of [1, 16, 64]) cells.json[c] = await measureCell(jsonLoad, c);
for (const c of [1, 16, 64]) cells.stream[c] = await measureCell(runStreamLoad, c);
// The closed-loop cells compare each server at its own saturation, where a slower server also pays more kernel time
// per request (fewer requests per wakeup). This one offers all three the same open-loop rate, half of what Herd
// served at c=16, so neither saturates: the cost of a request at equal load.
const equalRate = Math.round(cells.json[16]![2]!.perSecond / 2);
const equalLoad = await measureCell(
  (origin, _concurrency, durationMs) =>
    runRawOpenLoop({
      origin,
      path: '/v1/chat/completions',
      body: request(false),
      headers,
      concurrency: 32,
      durationMs,
      ratePerSecond: equalRate,
    }),
  32,
);

say('## Non-streaming\n');
say('| target | concurrency | requests/s | p50 µs | p99 µs | server CPU µs/request |');
say('| --- | ---: | ---: | ---: | ---: | ---: |');
for (let i = 0; i < targets.length; i++)
  for (const c of [1, 16, 64]) {
    const r = cells.json[c]![i]!;
    say(`| ${r.target.name} | ${c} | ${fmt(r.perSecond)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.cpuUs, 1)} |`);
  }
say('\n## Streaming (time to first byte)\n');
say('| target | concurrency | streams/s | TTFB p50 µs | TTFB p99 µs | server CPU µs/stream |');
say('| --- | ---: | ---: | ---: | ---: | ---: |');
for (let i = 0; i < targets.length; i++)
  for (const c of [1, 16, 64]) {
    const r = cells.stream[c]![i]!;
    say(`| ${r.target.name} | ${c} | ${fmt(r.perSecond)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.cpuUs, 1)} |`);
  }
say(`\n## Equal offered load (open loop, ${fmt(equalRate)} requests/s to each: half of Herd's throughput at concurrency 16)\n`);
say('| target | requests/s | p50 µs | p99 µs | server CPU µs/request |');
say('| --- | ---: | ---: | ---: | ---: |');
for (const r of equalLoad) say(`| ${r.target.name} | ${fmt(r.perSecond)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.cpuUs, 1)} |`);
const rss = rssMiB(herd.child.pid!);

// The second method (issue 17): sequential streaming requests on one keep-alive node:http socket, time to the
// response headers. bench/gateway/run-sequential-bench.ts runs it alone, non-streaming too, with a 23-event stream.
say('\n## Sequential streaming requests on one keep-alive socket (node:http client)\n');
say('| target | headers p50 µs | headers p99 µs | last byte p50 µs |');
say('| --- | ---: | ---: | ---: |');
const sequential = [];
for (const t of targets) {
  const client = createSequentialClient(t.url);
  const options = { origin: t.url, path: '/v1/chat/completions', body: request(true), headers };
  await runSequential({ ...options, requests: 200 }, client.agent);
  const r = await runSequential({ ...options, requests: Math.max(200, seconds * 200) }, client.agent);
  client.agent.destroy();
  sequential.push(r);
  say(`| ${t.name} | ${fmt(r.headersP50us)} | ${fmt(r.headersP99us)} | ${fmt(r.totalP50us)} |`);
}

say('\n## Ledger cost and cache hits\n');
await jsonLoad(herdNoLedger.url, 16, 2000); // warmed as the measured targets were
const ledgerRuns = await runInterleaved(
  {
    off: (ms) => jsonLoad(herdNoLedger.url, 16, ms),
    on: (ms) => jsonLoad(herd.url, 16, ms),
  },
  seconds * 1000,
  1000,
);
const noLedger = ledgerRuns.off,
  withLedger = ledgerRuns.on;
say(`| Herd at concurrency 16 | requests/s |`);
say('| --- | ---: |');
say(`| billing.ledger: off | ${fmt(noLedger.perSecond)} |`);
say(`| ledger on (SQLite; a key without a budget: its rows and charge written in batches) | ${fmt(withLedger.perSecond)} |`);
say(`\nThe two ran in alternating 1 s windows. Throughput with the ledger ÷ without: **${fmt((withLedger.perSecond / noLedger.perSecond) * 100, 1)}%** (target ≥ 90%).`);
const cacheable = Buffer.from(JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'Say hello in French.' }], max_tokens: 64, temperature: 0 }));
await runLoad({ origin: herd.url, path: '/v1/chat/completions', body: cacheable, headers, concurrency: 1, durationMs: 1000 });
const hits = await runLoad({ origin: herd.url, path: '/v1/chat/completions', body: cacheable, headers, concurrency: 1, durationMs: seconds * 1000 });
say(
  `\nCache hit (temperature 0, memory tier), concurrency 1: p50 **${fmt(hits.p50us)} µs**, p99 ${fmt(hits.p99us)} µs, ${fmt(hits.perSecond)} requests/s (target p50 ≤ 300 µs end to end).`,
);
say('\n## Against the targets\n');
const [m, b, h] = [0, 1, 2].map((i) => Object.fromEntries([1, 16, 64].map((c) => [c, cells.json[c]![i]!]))) as Record<number, { p50: number; cpuUs: number }>[];
const [sm, sb, sh] = [0, 1, 2].map((i) => Object.fromEntries([1, 16, 64].map((c) => [c, cells.stream[c]![i]!]))) as Record<number, { p50: number; cpuUs: number }>[];
say(`- Herd CPU per request ÷ bare relay's: ${fmt(h![16]!.cpuUs / b![16]!.cpuUs, 2)}× at concurrency 16, ${fmt(h![64]!.cpuUs / b![64]!.cpuUs, 2)}× at 64 (target ≤ 1.3×).`);
say(
  `- Added p50 at concurrency 1 over the mock: bare relay +${fmt((b![1]!.p50 - m![1]!.p50) / 1000, 3)} ms, Herd +${fmt((h![1]!.p50 - m![1]!.p50) / 1000, 3)} ms; Herd − relay = ${fmt((h![1]!.p50 - b![1]!.p50) / 1000, 3)} ms (target ≤ 0.1 ms).`,
);
say(
  `- Added streaming TTFB p50 at concurrency 1: bare relay +${fmt((sb![1]!.p50 - sm![1]!.p50) / 1000, 3)} ms, Herd +${fmt((sh![1]!.p50 - sm![1]!.p50) / 1000, 3)} ms; Herd − relay = ${fmt((sh![1]!.p50 - sb![1]!.p50) / 1000, 3)} ms (target ≤ 0.2 ms).`,
);
say(
  `- Sequential keep-alive streaming, added headers p50: bare relay +${fmt((sequential[1]!.headersP50us - sequential[0]!.headersP50us) / 1000, 3)} ms, Herd +${fmt((sequential[2]!.headersP50us - sequential[0]!.headersP50us) / 1000, 3)} ms; Herd − relay = ${fmt((sequential[2]!.headersP50us - sequential[1]!.headersP50us) / 1000, 3)} ms (target ≤ 0.2 ms).`,
);
say(`- At equal offered load (${fmt(equalRate)} requests/s, open loop), Herd CPU per request ÷ bare relay's: ${fmt(equalLoad[2]!.cpuUs / equalLoad[1]!.cpuUs, 2)}×.`);
say(`- Streaming, Herd CPU per stream ÷ bare relay's: ${fmt(sh![16]!.cpuUs / sb![16]!.cpuUs, 2)}× at concurrency 16, ${fmt(sh![64]!.cpuUs / sb![64]!.cpuUs, 2)}× at 64.`);
say(`- Herd RSS after the load: ${fmt(rss, 1)} MiB (target ≤ 150 MiB); at start, before any request: ${fmt(idleRss, 1)} MiB.`);
for (const p of [herd, herdNoLedger, bare, mock]) await p.stop();
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/gateway-${date}.md`, `${lines.join('\n')}\n`);
process.stdout.write(`\nwritten to bench/results/gateway-${date}.md\n`);
