// The ledger's cost on the gateway's throughput at concurrency 16, with rows committed before each answer's
// last byte (group commit per event-loop turn): Herd with billing.ledger off, on (a key without a budget),
// and on with a budgeted key (a reservation and a settlement per request too), in alternating 1 s windows
// against one local mock upstream; JSON and streaming. With --baseline DIR, also a ledger-on Herd built in DIR
// (another commit's checkout with its dist/), in the same windows, and the rows each wrote per request.
// Usage: npx tsx bench/gateway/run-ledger-bench.ts [--seconds 6] [--tag NAME] [--baseline DIR [--baseline-first]]
// Writes bench/results/ledger-<date>-<tag>.md. Never part of `npm test`.
import { execSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';
import { runInterleaved, runLoad, summariseLoad, type LoadResult } from '../lib/closed-loop-load.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { createBenchGatewayYaml } from './bench-gateway-yaml.ts';
import { type BenchProcess as Proc, cpuSeconds, startBenchProcess as start } from '../lib/bench-process.ts';
import { BENCH_MASTER_KEY, createBenchChatBody } from './bench-chat-request.ts';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const seconds = Number(option('--seconds') ?? 6);
const tag = option('--tag') ?? 'run';
const baselineDir = option('--baseline');
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const MASTER = BENCH_MASTER_KEY;

const body = createBenchChatBody;
const headersFor = (secret: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${secret}` });

/** Closed loop of streaming requests read to the end; latencies are whole-stream times. */
async function runStreamLoad(origin: string, secret: string, concurrency: number, durationMs: number): Promise<LoadResult> {
  const pool = new Pool(origin, { connections: concurrency, keepAliveTimeout: 60_000 });
  const ok: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  const end = performance.now() + durationMs;
  const started = performance.now();
  const payload = body(true);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', body: payload, headers: headersFor(secret) });
          for await (const _part of res.body) {
            /* read to the end */
          }
          ok.push((performance.now() - t0) * 1000);
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return summariseLoad({ ok, refused: [], seconds: elapsed, statuses, errors });
}

ensureBuilt();
const mock = await start([resolve('bench/gateway/mock-upstream.mjs'), '0'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
let budgetSecret = '';
const dbs = new Map<string, string>();
async function startHerd(ledger: string, build = '.'): Promise<Proc> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-ledger-bench-'));
  dbs.set(build, join(dir, 'herd.db'));
  writeFileSync(join(dir, 'herd.yaml'), createBenchGatewayYaml({ baseUrl: `${mock.url}/v1`, ledger, authDb: './herd.db', upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }));
  if (ledger !== 'off') {
    const store = await openKeyStore(`sqlite:${join(dir, 'herd.db')}`);
    const actor = { actor: { id: 'cli@bench', name: 'bench', role: 'admin' as const } };
    const secret = (await store.createKey({ name: 'bench budget', allowedModels: '*', budgets: [{ period: 'day', amountMicros: 10 ** 15 }] }, actor)).secret;
    await store.close();
    if (build === '.') budgetSecret = secret;
  }
  return start([resolve(build, 'dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')], /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/, (m) => m[1] as string, {
    ...process.env,
    HERD_BENCH_MASTER: MASTER,
    BENCH_UPSTREAM_KEY: 'sk-bench',
  });
}
const off = await startHerd('off');
// --baseline-first starts the baseline before this build's ledger-on server (the order may matter on a busy host).
const baselineFirst = args.includes('--baseline-first');
let base = baselineDir !== undefined && baselineFirst ? await startHerd('sqlite:./herd.db', baselineDir) : undefined;
const on = await startHerd('sqlite:./herd.db');
if (baselineDir !== undefined && !baselineFirst) base = await startHerd('sqlite:./herd.db', baselineDir);

/** The server's own CPU (user + system) per answered request, summed over a target's windows: less sensitive than throughput to other load on the host. */
const cpu = new Map<string, { seconds: number; requests: number }>();
const measured = (name: string, pid: number, load: (ms: number) => Promise<LoadResult>) => async (ms: number) => {
  const before = cpuSeconds(pid);
  const result = await load(ms);
  const entry = cpu.get(name) ?? { seconds: 0, requests: 0 };
  entry.seconds += cpuSeconds(pid) - before;
  entry.requests += result.requests;
  cpu.set(name, entry);
  return result;
};
const cpuUs = (name: string) => {
  const e = cpu.get(name);
  return e && e.requests > 0 ? (e.seconds / e.requests) * 1e6 : NaN;
};
const json = (url: string, secret: string) => (ms: number) =>
  runLoad({ origin: url, path: '/v1/chat/completions', body: body(false), headers: headersFor(secret), concurrency: 16, durationMs: ms });
const stream = (url: string, secret: string) => (ms: number) => runStreamLoad(url, secret, 16, ms);
for (const warm of [json(off.url, MASTER), json(on.url, MASTER), json(on.url, budgetSecret), ...(base ? [json(base.url, MASTER)] : [])]) await warm(1500);

const offPid = off.child.pid!,
  onPid = on.child.pid!;
type Runs = Record<'off' | 'on' | 'budget', LoadResult> & { base?: LoadResult };
/** The three targets, and the baseline build's ledger-on server in the same windows when there is one. */
const interleave = async (kind: 'json' | 'stream', load: typeof json): Promise<Runs> => {
  const targets = {
    off: measured(`${kind} off`, offPid, load(off.url, MASTER)),
    on: measured(`${kind} on`, onPid, load(on.url, MASTER)),
    budget: measured(`${kind} budget`, onPid, load(on.url, budgetSecret)),
  };
  if (!base) return runInterleaved(targets, seconds * 1000, 1000);
  return runInterleaved({ ...targets, base: measured(`${kind} base`, base.child.pid as number, load(base.url, MASTER)) }, seconds * 1000, 1000);
};
const jsonRuns = await interleave('json', json);
const streamRuns = await interleave('stream', stream);

let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
} catch {
  /* not a checkout */
}
const now = new Date();
const date = now.toISOString().slice(0, 10);
say(`# Ledger cost on gateway throughput — ${date}\n`);
say(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}; commit ${commit}; ${now.toISOString()}. Load average at the end: ${loadavg()
    .map((l) => fmt(l, 2))
    .join(' ')}.`,
);
say(
  `**The host was shared with other concurrent builds and test runs** (several helpers on the same 2 cores): absolute numbers are low and noisy; the ratios, measured in alternating 1 s windows over the same ${seconds} s, are what this file reports.`,
);
say(
  `Load generator (undici Pool), mock upstream and both Herd processes on the same cores. Command: \`npx tsx bench/gateway/run-ledger-bench.ts --seconds ${seconds} --tag ${tag}${baselineDir === undefined ? '' : ` --baseline ${baselineDir}${baselineFirst ? ' --baseline-first' : ''}`}\`.\n`,
);
say(
  "Ledger on: SQLite (WAL, synchronous=NORMAL) with the spool: each request's rows are appended to herd.db.spool/ before its answer's last byte (one write per event-loop turn), and reach SQLite in batches every flush_interval_ms.\n",
);
const row = (name: string, r: LoadResult, floor: LoadResult, cpuName: string, cpuFloor: string) =>
  say(
    `| ${name} | ${fmt(r.perSecond)} | ${fmt(r.p50us)} | ${fmt(r.p99us)} | ${fmt((r.perSecond / floor.perSecond) * 100, 1)}% | ${fmt(cpuUs(cpuName))} | ${fmt((cpuUs(cpuFloor) / cpuUs(cpuName)) * 100, 1)}% | ${Object.entries(
      r.statuses,
    )
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ')}${r.errors ? `, errors: ${r.errors}` : ''} |`,
  );
for (const [title, runs, kind] of [
  ['JSON (non-streaming)', jsonRuns, 'json'],
  ['Streaming (whole stream read)', streamRuns, 'stream'],
] as const) {
  say(`## ${title}, concurrency 16\n`);
  say('| Herd | requests/s | p50 µs | p99 µs | throughput ÷ ledger off | server CPU µs/request | CPU-bound throughput ÷ ledger off | statuses |');
  say('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  row('billing.ledger: off', runs.off, runs.off, `${kind} off`, `${kind} off`);
  row('ledger on, key without a budget (rows only)', runs.on, runs.off, `${kind} on`, `${kind} off`);
  row('ledger on, key with a day budget (reserve + rows + settle)', runs.budget, runs.off, `${kind} budget`, `${kind} off`);
  const baseline = runs.base;
  if (baseline) row(`ledger on, key without a budget, **baseline build** (${baselineDir})`, baseline, runs.off, `${kind} base`, `${kind} off`);
  say('');
}
say(
  '"CPU-bound throughput ÷ ledger off" is the off server\'s CPU per request over this one\'s: the throughput ratio a host with nothing else running would give when Herd is the bottleneck.\n',
);
say(
  `Target: ledger on ≥ 85% of ledger off at concurrency 16 (key without a budget). Measured throughput ratio: JSON **${fmt((jsonRuns.on.perSecond / jsonRuns.off.perSecond) * 100, 1)}%**, streaming **${fmt((streamRuns.on.perSecond / streamRuns.off.perSecond) * 100, 1)}%**; by CPU per request: JSON **${fmt((cpuUs('json off') / cpuUs('json on')) * 100, 1)}%**, streaming **${fmt((cpuUs('stream off') / cpuUs('stream on')) * 100, 1)}%**.`,
);

await Promise.all([off.stop(), on.stop(), mock.stop(), ...(base ? [base.stop()] : [])]);
// Every request here had one upstream attempt: rows per request is what the schema writes for the common case.
for (const [build, file] of dbs) {
  const db = new Database(file, { readonly: true });
  const n = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  const requests = n('ledger_requests');
  const attempts = n('ledger_attempts');
  db.close();
  say(
    `Rows written by ${build === '.' ? 'this build' : `the baseline build (${build})`}: ${fmt(requests)} request rows + ${fmt(attempts)} attempt rows = **${fmt((requests + attempts) / requests, 2)} rows per request**.`,
  );
}
writeFileSync(resolve(`bench/results/ledger-${date}-${tag}.md`), `${lines.join('\n')}\n`);
