// What open web consoles cost a busy Herd: the gateway bench's load (its mock upstream and chat request) on one
// Herd, in alternating windows without and with 5 consoles (each: one live request tail and the overview polled
// every 5 s, as the Requests and Overview pages do, over 127.0.0.1); Herd's CPU per gateway request compared. Target: ≤ 2 % rise.
// Usage: npx tsx bench/console/run-console-cost.ts [--seconds 10] [--rounds 6] [--consoles 5] [--rate N]
import { execSync } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { runLoad } from '../lib/closed-loop-load.ts';
import { cpuSeconds, startBenchProcess } from '../lib/bench-process.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { runRawOpenLoop } from '../lib/raw-http-load.ts';
import { BENCH_MASTER_KEY, createBenchChatBody } from '../gateway/bench-chat-request.ts';
import { createBenchGatewayYaml } from '../gateway/bench-gateway-yaml.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const seconds = option('--seconds', 10);
const rounds = option('--rounds', 6);
const consoleCount = option('--consoles', 5);
const POLL_MS = 5_000;
const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_MASTER_KEY}` };
const body = createBenchChatBody(false);

/** One console: a tail kept open and read, and the two polled pages, staggered by `offsetMs`. */
function openConsole(origin: string, offsetMs: number): { close(): void; stats: { events: number; polls: number; failures: number } } {
  const stats = { events: 0, polls: 0, failures: 0 };
  const tail = http.get(`${origin}/admin/v1/requests/tail`, { headers: { authorization: headers.authorization, accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) stats.failures += 1;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      stats.events += chunk.split('event: request').length - 1;
    });
  });
  tail.on('error', () => undefined);
  // What the console's pages do: Overview polls every 5 s; Requests loads its page once and then only
  // listens (ui/src/pages/requests.tsx loads nothing while the live tail is on).
  let opened = false;
  const poll = async () => {
    const paths = opened ? ['/admin/v1/overview'] : ['/admin/v1/overview', '/admin/v1/requests?limit=50'];
    opened = true;
    for (const path of paths) {
      const res = await fetch(`${origin}${path}`, { headers: { authorization: headers.authorization } }).catch(() => undefined);
      if (res?.status !== 200) stats.failures += 1;
      await res?.arrayBuffer();
      stats.polls += 1;
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    void poll();
    timer = setInterval(() => void poll(), POLL_MS);
  }, offsetMs);
  return {
    stats,
    close() {
      clearTimeout(first);
      if (timer) clearInterval(timer);
      tail.destroy();
    },
  };
}

ensureBuilt();
const mock = await startBenchProcess([resolve('bench/gateway/mock-upstream.mjs'), '0'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
const dir = mkdtempSync(join(tmpdir(), 'herd-console-bench-'));
writeFileSync(
  join(dir, 'herd.yaml'),
  createBenchGatewayYaml({ baseUrl: `${mock.url}/v1`, ledger: 'sqlite:./herd.db', authDb: './keys.db', upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }),
);
const herd = await startBenchProcess(
  [resolve('dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')],
  /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/,
  (m) => m[1] as string,
  {
    ...process.env,
    HERD_BENCH_MASTER: BENCH_MASTER_KEY,
    BENCH_UPSTREAM_KEY: 'sk-bench',
  },
);
const pid = herd.child.pid as number;

// Warm-up, and the closed-loop throughput the open-loop rate is taken from (half of it: a busy server, not a saturated one).
const warm = await runLoad({ origin: herd.url, path: '/v1/chat/completions', body, headers, concurrency: 16, durationMs: 5_000 });
const warmConsole = openConsole(herd.url, 0);
await new Promise((r) => setTimeout(r, 1_000));
warmConsole.close();
const rate = option('--rate', Math.round(warm.perSecond / 2));

interface Window {
  consoles: number;
  requests: number;
  lost: number;
  cpu: number;
  events: number;
  polls: number;
  failures: number;
}
async function measure(withConsoles: boolean): Promise<Window> {
  const open = withConsoles ? Array.from({ length: consoleCount }, (_, i) => openConsole(herd.url, (i * POLL_MS) / consoleCount)) : [];
  // The consoles' first requests (sign-in-like: tail open, both pages) are part of their cost: measured from here.
  const before = cpuSeconds(pid);
  const result = await runRawOpenLoop({ origin: herd.url, path: '/v1/chat/completions', body, headers, concurrency: 32, durationMs: seconds * 1000, ratePerSecond: rate });
  const cpu = cpuSeconds(pid) - before;
  for (const c of open) c.close();
  const answered = result.statuses[200] ?? 0;
  // A busy shared host can lose a few connections of the open loop: counted, and CPU is per answered request.
  const lost = result.requests - answered + result.errors;
  const sum = (f: (s: { events: number; polls: number; failures: number }) => number) => open.reduce((n, c) => n + f(c.stats), 0);
  return { consoles: open.length, requests: answered, lost, cpu, events: sum((s) => s.events), polls: sum((s) => s.polls), failures: sum((s) => s.failures) };
}

const windows: Window[] = [];
for (let round = 0; round < rounds; round++) {
  // ABBA order: a drift in the machine's background load falls on both alike.
  const order = round % 2 === 0 ? [false, true] : [true, false];
  for (const withConsoles of order) {
    const w = await measure(withConsoles);
    windows.push(w);
    process.stdout.write(`round ${round + 1} ${withConsoles ? 'with' : 'without'}: ${w.requests} requests, ${((w.cpu * 1e6) / w.requests).toFixed(1)} µs CPU/request\n`);
  }
}
await herd.stop();
await mock.stop();

const total = (list: Window[]) => {
  const requests = list.reduce((n, w) => n + w.requests, 0);
  const cpu = list.reduce((n, w) => n + w.cpu, 0);
  return { requests, cpu, usPerRequest: (cpu * 1e6) / requests, perRound: list.map((w) => (w.cpu * 1e6) / w.requests) };
};
const without = total(windows.filter((w) => w.consoles === 0));
const withC = total(windows.filter((w) => w.consoles > 0));
const rise = (withC.usPerRequest / without.usPerRequest - 1) * 100;
// Each round's pair ran back to back: the median of the paired rises is the least swayed by the host's drift.
const paired = without.perRound.map((w, i) => ((withC.perRound[i] as number) / w - 1) * 100).sort((a, b) => a - b);
const median = ((paired[Math.floor((paired.length - 1) / 2)] as number) + (paired[Math.ceil((paired.length - 1) / 2)] as number)) / 2;
const consoleWindows = windows.filter((w) => w.consoles > 0);
const date = new Date().toISOString().slice(0, 10);
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const fmt = (n: number) => n.toFixed(1);
const report = [
  `# Console cost — ${date}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; commit ${commit}. Load generator, mock upstream and Herd on the same cores.`,
  `Command: \`npm run bench:console -- --seconds ${seconds} --rounds ${rounds} --consoles ${consoleCount}\`.`,
  '',
  `One Herd (\`herd serve\`, compiled, SQLite ledger, the gateway bench's config and mock upstream) under the gateway bench's non-streaming chat request at an open-loop ${rate} requests/s (half its closed-loop c=16 throughput of ${Math.round(warm.perSecond)}/s in the warm-up), ${rounds} rounds of two ${seconds} s windows in ABBA order: without consoles, and with ${consoleCount} consoles (each: a live tail of every request and the overview polled every 5 s, staggered, after one 50-row requests page, as the console's Requests and Overview pages do). CPU is Herd's process user+system time over the window, per gateway request answered.`,
  '',
  '| | requests | Herd CPU µs/request | per window |',
  '| --- | ---: | ---: | --- |',
  `| without consoles | ${without.requests} | ${fmt(without.usPerRequest)} | ${without.perRound.map(fmt).join(', ')} |`,
  `| with ${consoleCount} consoles | ${withC.requests} | ${fmt(withC.usPerRequest)} | ${withC.perRound.map(fmt).join(', ')} |`,
  '',
  `Rise: **${rise.toFixed(2)} %** over all windows, median of the rounds' paired rises **${median.toFixed(2)} %** (paired: ${paired.map((p) => p.toFixed(1)).join(', ')}; target ≤ 2 %).`,
  ` Load requests not answered 200 (connection errors on the shared host): ${windows.reduce((n, w) => n + w.lost, 0)}. The consoles received ${consoleWindows.reduce((n, w) => n + w.events, 0)} tail events and made ${consoleWindows.reduce((n, w) => n + w.polls, 0)} page requests (${consoleWindows.reduce((n, w) => n + w.failures, 0)} failed).`,
  '',
];
mkdirSync('bench/results', { recursive: true });
const file = `bench/results/console-cost-${date}.md`;
writeFileSync(file, report.join('\n'));
process.stdout.write(`${report.join('\n')}\nwritten to ${file}\n`);
