// Herd beside a peer gateway (issue 17): Portkey's open-source gateway, installed under bench/peers/portkey only,
// against the same mock upstream in the same run as the mock itself, the bare relay and Herd, in interleaved windows.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { cpuSeconds, type BenchProcess as Proc, startBenchProcess as start } from '../lib/bench-process.ts';
import { type LoadResult, runInterleaved, runLoad, summariseLoad } from '../lib/closed-loop-load.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { createSequentialClient, runSequential } from '../lib/sequential-keepalive-load.ts';
import { createBenchGatewayYaml } from './bench-gateway-yaml.ts';
import { BENCH_MASTER_KEY, createBenchChatBody } from './bench-chat-request.ts';

const PORTKEY_BIN = resolve('bench/peers/portkey/node_modules/@portkey-ai/gateway/build/start-server.js');
if (!existsSync(PORTKEY_BIN)) {
  process.stderr.write(`Portkey's gateway is not installed (no ${PORTKEY_BIN}). Run \`npm --prefix bench/peers/portkey ci\` first.\n`);
  process.exit(1);
}
const portkeyVersion = (JSON.parse(readFileSync(resolve(PORTKEY_BIN, '../../package.json'), 'utf8')) as { version: string }).version;

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1] || 3);
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const MASTER = BENCH_MASTER_KEY;

const request = createBenchChatBody;

/** A port the OS says is free now: Portkey's start-server takes `--port=N` and has no "port 0" mode that reports back. */
const freePort = () =>
  new Promise<number>((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? ok(a.port) : fail(new Error('no port'))));
    });
  });

ensureBuilt();
const mock = await start([resolve('bench/gateway/mock-upstream.mjs'), '0'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
const bare = await start([resolve('bench/gateway/bare-relay.mjs'), '0', mock.url], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
const portkeyPort = await freePort();
// --headless: no web console; the route is chosen per request by x-portkey-provider and x-portkey-custom-host
// (127.0.0.1 is in its default TRUSTED_CUSTOM_HOSTS), the Authorization header is passed on to the upstream.
const portkey = await start([PORTKEY_BIN, `--port=${portkeyPort}`, '--headless'], /Ready for connections/, () => `http://127.0.0.1:${portkeyPort}`);
const herdDir = mkdtempSync(join(tmpdir(), 'herd-portkey-bench-'));
const herdDb = join(herdDir, 'herd.db');
writeFileSync(
  join(herdDir, 'herd.yaml'),
  createBenchGatewayYaml({ baseUrl: `${mock.url}/v1`, ledger: `sqlite:${herdDb}`, authDb: herdDb, upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }),
);
const herd: Proc = await start(
  [resolve('dist/cli/herd.js'), 'serve', '--config', join(herdDir, 'herd.yaml'), '--grpc-port', '0'],
  /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/,
  (m) => m[1] as string,
  { ...process.env, HERD_BENCH_MASTER: MASTER, BENCH_UPSTREAM_KEY: 'sk-bench' },
);

const base = { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` };
const targets = [
  { name: 'mock upstream, direct', url: mock.url, pid: mock.child.pid!, headers: base },
  { name: 'bare relay (node:http + undici)', url: bare.url, pid: bare.child.pid!, headers: base },
  {
    name: `Portkey gateway ${portkeyVersion} (headless, custom host)`,
    url: portkey.url,
    pid: portkey.child.pid!,
    headers: { ...base, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mock.url}/v1` },
  },
  { name: 'Herd (auth, routing, limits, cache lookup, ledger)', url: herd.url, pid: herd.child.pid!, headers: base },
];
type Target = (typeof targets)[number];

/** Closed loop of streaming requests, as a LoadResult whose latencies are the times to the first body byte. */
async function runStreamLoad(t: Target, concurrency: number, durationMs: number): Promise<LoadResult> {
  const pool = new Pool(t.url, { connections: concurrency, keepAliveTimeout: 60_000 });
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
          const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', body, headers: t.headers });
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
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return summariseLoad({ ok: ttfb, refused: [], seconds: elapsed, statuses, errors });
}
const jsonLoad = (t: Target, concurrency: number, durationMs: number) =>
  runLoad({ origin: t.url, path: '/v1/chat/completions', body: request(false), headers: t.headers, concurrency, durationMs });

/** One cell: the four targets in alternating 1 s windows (runInterleaved); CPU per answer is each server's own. */
async function measureCell(load: (t: Target, concurrency: number, ms: number) => Promise<LoadResult>, concurrency: number) {
  const cpu = new Map<Target, number>();
  const runs = await runInterleaved(
    Object.fromEntries(
      targets.map((t) => [
        t.name,
        async (ms: number) => {
          const before = cpuSeconds(t.pid);
          const r = await load(t, concurrency, ms);
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

const date = new Date().toISOString().slice(0, 10);
say(`# Herd beside Portkey's gateway — ${date}\n`);
say(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load generator, mock upstream, bare relay, Portkey and Herd all on the same cores. ${seconds} s per cell, in 1 s windows alternating between the four targets. Command: \`npx tsx bench/gateway/run-portkey-peer-bench.ts --seconds ${seconds}\`. CPU per request is the server process's own (user+system) over the requests it answered.\n`,
);

// Warm-up of the same kind as the measurement, streams included (they take paths the JSON load never ran).
for (const t of targets) {
  await jsonLoad(t, 16, 2000);
  await runStreamLoad(t, 16, 2000);
}
const json16 = await measureCell(jsonLoad, 16);
const stream1 = await measureCell(runStreamLoad, 1);
const sequential = [];
for (const t of targets) {
  const client = createSequentialClient(t.url);
  const options = { origin: t.url, path: '/v1/chat/completions', body: request(true), headers: t.headers };
  await runSequential({ ...options, requests: 200 }, client.agent);
  sequential.push(await runSequential({ ...options, requests: Math.max(200, seconds * 200) }, client.agent));
  client.agent.destroy();
}

say('| target | non-streaming c=16 requests/s | p50 µs | p99 µs | server CPU µs/request | streaming TTFB p50 µs (c=1) | sequential keep-alive streaming headers p50 µs |');
say('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (let i = 0; i < targets.length; i++) {
  const j = json16[i]!,
    s = stream1[i]!,
    q = sequential[i]!;
  say(`| ${j.target.name} | ${fmt(j.perSecond)} | ${fmt(j.p50)} | ${fmt(j.p99)} | ${fmt(j.cpuUs, 1)} | ${fmt(s.p50)} | ${fmt(q.headersP50us)} |`);
}
const [, , pk, h] = [0, 1, 2, 3];
say('\n## Herd against Portkey\n');
say(`- Throughput at concurrency 16, Herd ÷ Portkey: **${fmt(json16[h]!.perSecond / json16[pk]!.perSecond, 2)}×**.`);
say(`- Server CPU per request at concurrency 16, Portkey ÷ Herd: ${fmt(json16[pk]!.cpuUs / json16[h]!.cpuUs, 2)}×.`);
say(`- Streaming TTFB p50 at concurrency 1: Herd ${fmt(stream1[h]!.p50)} µs, Portkey ${fmt(stream1[pk]!.p50)} µs (mock direct ${fmt(stream1[0]!.p50)} µs).`);
say(
  `- Sequential keep-alive streaming, headers p50: Herd ${fmt(sequential[h]!.headersP50us)} µs, Portkey ${fmt(sequential[pk]!.headersP50us)} µs (mock direct ${fmt(sequential[0]!.headersP50us)} µs).`,
);
for (const p of [herd, portkey, bare, mock]) await p.stop();
mkdirSync('bench/results', { recursive: true });
const out = `bench/results/portkey-peer-${date}.md`;
writeFileSync(out, `${lines.join('\n')}\n`);
process.stdout.write(`\nwritten to ${out}\n`);
