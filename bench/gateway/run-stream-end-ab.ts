// Streaming only, two builds of Herd side by side (A/B), each with billing.ledger off and on, beside the bare
// relay, in alternating windows against one mock upstream: CPU per stream ÷ the relay's (issue 17) and ledger
// on ÷ off throughput (issue 18) for both builds in the same run. Build B is dist/; build A is a copy of an
// older dist/ (e.g. `cp -r dist .tmp/dist-old` before the change). Closed loop at concurrency 16, each stream
// read to its end. Usage: npx tsx bench/gateway/run-stream-end-ab.ts --a .tmp/dist-old [--b dist] [--seconds 10]
// [--window-ms 500] [--no-build] [--prof DIR] [--json] (--prof: every Herd process writes a .cpuprofile into DIR on
// exit; --json: one JSON answer per request instead of a stream).
// Prints a markdown table; never part of `npm test`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { type BenchProcess as Proc, cpuSeconds, startBenchProcess as start } from '../lib/bench-process.ts';
import { type LoadResult, runInterleaved, runLoad } from '../lib/closed-loop-load.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { BENCH_MASTER_KEY, createBenchChatBody } from './bench-chat-request.ts';
import { createBenchGatewayYaml } from './bench-gateway-yaml.ts';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const seconds = Number(option('--seconds') ?? 10);
const windowMs = Number(option('--window-ms') ?? 500);
const concurrency = Number(option('--concurrency') ?? 16);
const distA = option('--a');
const distB = option('--b') ?? 'dist';
const prof = option('--prof');
const json = args.includes('--json');
if (distA === undefined) throw new Error('--a DIR (a copy of the old dist/) is required');
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const load = () =>
  loadavg()
    .map((l) => fmt(l, 2))
    .join(' ');

const STREAM_BODY = createBenchChatBody(!json);
const STREAM_HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_MASTER_KEY}` };
const DONE = Buffer.from('data: [DONE]\n\n');

/** Streaming chat at the bench's concurrency; a stream that did not end in [DONE] is an error. */
function runStreamLoad(origin: string, durationMs: number): Promise<LoadResult> {
  return runLoad({
    origin,
    path: '/v1/chat/completions',
    body: STREAM_BODY,
    headers: STREAM_HEADERS,
    concurrency,
    durationMs,
    accept: (body) => (json ? body.at(-1) === 0x7d : body.subarray(-DONE.length).equals(DONE)),
  });
}

if (!args.includes('--no-build')) ensureBuilt();
const loadBefore = load();
const mock = await start([resolve('bench/gateway/mock-upstream.mjs'), '0'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
const relay = await start([resolve('bench/gateway/bare-relay.mjs'), '0', mock.url], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);

async function startHerd(dist: string, ledger: string): Promise<Proc> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-stream-end-'));
  writeFileSync(join(dir, 'herd.yaml'), createBenchGatewayYaml({ baseUrl: `${mock.url}/v1`, ledger, authDb: './herd.db', upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }));
  const node = prof === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(prof)}`];
  return start([...node, resolve(dist, 'cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')], /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/, (m) => m[1] as string, {
    ...process.env,
    HERD_BENCH_MASTER: BENCH_MASTER_KEY,
    BENCH_UPSTREAM_KEY: 'sk-bench',
  });
}

const procs = {
  relay,
  aOff: await startHerd(distA, 'off'),
  aOn: await startHerd(distA, 'sqlite:./herd.db'),
  bOff: await startHerd(distB, 'off'),
  bOn: await startHerd(distB, 'sqlite:./herd.db'),
};
type Target = keyof typeof procs;
const names: Record<Target, string> = {
  relay: 'bare relay (node:http + undici)',
  aOff: `A ${distA}, ledger off`,
  aOn: `A ${distA}, ledger on (SQLite + spool)`,
  bOff: `B ${distB}, ledger off`,
  bOn: `B ${distB}, ledger on (SQLite + spool)`,
};
const cpu = new Map<Target, { seconds: number; requests: number }>();
/** Per window, in order: the targets' windows of one cycle ran next to each other, so their ratios pair up. */
const windows = new Map<Target, { cpuUs: number; perSecond: number }[]>();
const measured = (t: Target) => async (ms: number) => {
  const pid = procs[t].child.pid as number;
  const before = cpuSeconds(pid);
  const result = await runStreamLoad(procs[t].url, ms);
  const used = cpuSeconds(pid) - before;
  const e = cpu.get(t) ?? { seconds: 0, requests: 0 };
  e.seconds += used;
  e.requests += result.requests;
  cpu.set(t, e);
  const list = windows.get(t) ?? [];
  list.push({ cpuUs: result.requests > 0 ? (used / result.requests) * 1e6 : Number.NaN, perSecond: result.perSecond });
  windows.set(t, list);
  return result;
};
const median = (values: number[]) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
};
/** The median over cycles of f(window of a, window of b). */
const paired = (a: Target, b: Target, f: (x: { cpuUs: number; perSecond: number }, y: { cpuUs: number; perSecond: number }) => number) => {
  const xs = windows.get(a) ?? [];
  const ys = windows.get(b) ?? [];
  return median(xs.map((x, i) => (ys[i] === undefined ? Number.NaN : f(x, ys[i]))));
};
const cpuUs = (t: Target) => {
  const e = cpu.get(t);
  return e && e.requests > 0 ? (e.seconds / e.requests) * 1e6 : Number.NaN;
};
const targets = Object.keys(procs) as Target[];
for (const t of targets) await runStreamLoad(procs[t].url, 1000);
const runs = await runInterleaved(Object.fromEntries(targets.map((t) => [t, measured(t)])) as Record<Target, (ms: number) => Promise<LoadResult>>, seconds * 1000, windowMs);
const loadAfter = load();

const out: string[] = [];
out.push(`${new Date().toISOString()} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
out.push(`${json ? 'JSON' : 'streaming'}, c=${concurrency}, ${seconds} s per target in ${windowMs} ms windows; load average before ${loadBefore}, after ${loadAfter}\n`);
out.push('| target | streams/s | p50 µs | p99 µs | server CPU µs/stream | CPU ÷ relay | throughput on ÷ off | CPU-bound on ÷ off | errors |');
out.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const t of targets) {
  const r = runs[t];
  const off = t === 'aOn' ? 'aOff' : t === 'bOn' ? 'bOff' : undefined;
  const onOff = off === undefined ? '' : `${fmt((r.perSecond / runs[off].perSecond) * 100, 1)}%`;
  const cpuOnOff = off === undefined ? '' : `${fmt((cpuUs(off) / cpuUs(t)) * 100, 1)}%`;
  out.push(
    `| ${names[t]} | ${fmt(r.perSecond)} | ${fmt(r.p50us)} | ${fmt(r.p99us)} | ${fmt(cpuUs(t), 1)} | ${fmt(cpuUs(t) / cpuUs('relay'), 2)}× | ${onOff} | ${cpuOnOff} | ${r.errors} |`,
  );
}
out.push('\nMedians over cycles of the ratio of windows run next to each other (less sensitive to the host changing load mid-run):\n');
out.push('| build | CPU ÷ relay, ledger off | CPU ÷ relay, ledger on | throughput on ÷ off | CPU-bound on ÷ off |');
out.push('| --- | ---: | ---: | ---: | ---: |');
for (const [name, off, on] of [
  ['A', 'aOff', 'aOn'],
  ['B', 'bOff', 'bOn'],
] as const) {
  const cpuRatio = (t: Target) =>
    fmt(
      paired(t, 'relay', (x, y) => x.cpuUs / y.cpuUs),
      2,
    );
  const onOff = fmt(
    paired(on, off, (x, y) => (x.perSecond / y.perSecond) * 100),
    1,
  );
  const cpuOnOff = fmt(
    paired(on, off, (x, y) => (y.cpuUs / x.cpuUs) * 100),
    1,
  );
  out.push(`| ${name} | ${cpuRatio(off)}× | ${cpuRatio(on)}× | ${onOff}% | ${cpuOnOff}% |`);
}
process.stdout.write(`${out.join('\n')}\n`);
await Promise.all(Object.values(procs).map((p) => p.stop()));
await mock.stop();
