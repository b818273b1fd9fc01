// Issue 17's second latency method: sequential requests on one keep-alive socket (node:http client,
// Authorization: Bearer, the gpt-4.1 body with a system and a user message, a 23-event mock stream),
// against the mock directly, the bare relay and Herd, in alternating rounds. Results go to bench/results/.
// Usage: npx tsx bench/gateway/run-sequential-bench.ts [--requests 200] [--rounds 5] [--out NAME]
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { execSync } from 'node:child_process';
import { ensureBuilt } from '../lib/herd-process.ts';
import { startBenchProcess as start, type BenchProcess } from '../lib/bench-process.ts';
import { createSequentialClient, runSequential, type SequentialResult } from '../lib/sequential-keepalive-load.ts';
import { createBenchGatewayYaml } from './bench-gateway-yaml.ts';
import { BENCH_MASTER_KEY, createBenchChatBody } from './bench-chat-request.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => (args.includes(name) ? (args[args.indexOf(name) + 1] ?? fallback) : fallback);
const perRound = Number(arg('--requests', '200'));
const rounds = Number(arg('--rounds', '5'));
const gapMs = Number(arg('--gap-ms', '0'));
const out = arg('--out', `sequential-${new Date().toISOString().slice(0, 10)}`);
const MASTER = BENCH_MASTER_KEY;
const headers = { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` };
const body = createBenchChatBody;

ensureBuilt();
const procs: BenchProcess[] = [];
const mock = await start([resolve('bench/gateway/mock-upstream.mjs'), '0', '20'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
procs.push(mock);
const bare = await start([resolve('bench/gateway/bare-relay.mjs'), '0', mock.url], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
procs.push(bare);
const dir = mkdtempSync(join(tmpdir(), 'herd-seq-bench-'));
writeFileSync(
  join(dir, 'herd.yaml'),
  createBenchGatewayYaml({ baseUrl: `${mock.url}/v1`, ledger: 'sqlite:./herd.db', authDb: './herd.db', upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }),
);
const herd = await start([resolve('dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')], /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/, (m) => m[1] as string, {
  ...process.env,
  HERD_BENCH_MASTER: MASTER,
  BENCH_UPSTREAM_KEY: 'sk-bench',
});
procs.push(herd);
const dirOff = mkdtempSync(join(tmpdir(), 'herd-seq-bench-'));
writeFileSync(
  join(dirOff, 'herd.yaml'),
  createBenchGatewayYaml({ baseUrl: `${mock.url}/v1`, ledger: 'off', authDb: './herd.db', upstreamKeyEnv: 'BENCH_UPSTREAM_KEY', server: true }),
);
const herdOff = await start(
  [resolve('dist/cli/herd.js'), 'serve', '--config', join(dirOff, 'herd.yaml')],
  /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/,
  (m) => m[1] as string,
  {
    ...process.env,
    HERD_BENCH_MASTER: MASTER,
    BENCH_UPSTREAM_KEY: 'sk-bench',
  },
);
procs.push(herdOff);

const targets = [
  { name: 'mock upstream, direct', url: mock.url },
  { name: 'bare relay', url: bare.url },
  { name: 'Herd (ledger on)', url: herd.url },
  { name: 'Herd (billing.ledger: off)', url: herdOff.url },
];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const results: Record<string, Record<'json' | 'stream', SequentialResult[]>> = {};
for (const t of targets) results[t.name] = { json: [], stream: [] };
for (const stream of [false, true]) {
  const kind = stream ? 'stream' : 'json';
  const clients = targets.map((t) => createSequentialClient(t.url));
  // Warm-up on the same socket, then rounds alternating between the targets so background load falls on all alike.
  for (let i = 0; i < targets.length; i++)
    await runSequential({ origin: targets[i]!.url, path: '/v1/chat/completions', body: body(stream), headers, requests: 300 }, clients[i]!.agent);
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < targets.length; i++)
      results[targets[i]!.name]![kind].push(
        await runSequential({ origin: targets[i]!.url, path: '/v1/chat/completions', body: body(stream), headers, requests: perRound, gapMs }, clients[i]!.agent),
      );
  for (const c of clients) c.agent.destroy();
}
for (const p of procs.reverse()) await p.stop();

const ms = (us: number | undefined) => (us === undefined ? '—' : (us / 1000).toFixed(3));
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const lines = [
  `# Gateway: sequential requests on one keep-alive socket — ${new Date().toISOString().slice(0, 16)}Z`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; commit ${commit}.`,
  'The machine was loaded by parallel work (other sessions building and testing) while this ran: absolute numbers are noisy; compare the rows of one run.',
  `Method: node:http client, keep-alive Agent with one socket, one request at a time; ${rounds} rounds × ${perRound} requests per target, rounds alternating between targets, after 300 warm-up requests each. Mock upstream streams 23 events (role, 20 content, stop, usage) + [DONE]. Medians of the rounds' p50s.${gapMs ? ` A ${gapMs} ms pause between requests (diagnostic).` : ''}`,
  `Command: \`npx tsx bench/gateway/run-sequential-bench.ts --requests ${perRound} --rounds ${rounds}\``,
  '',
  '| target | kind | headers p50 ms | headers p99 ms | last byte p50 ms | x-herd-overhead-ms p50 |',
  '| --- | --- | ---: | ---: | ---: | ---: |',
];
for (const t of targets)
  for (const kind of ['json', 'stream'] as const) {
    const rs = results[t.name]![kind];
    const overheads = rs.map((r) => r.overheadP50us).filter((x): x is number => x !== undefined);
    lines.push(
      `| ${t.name} | ${kind} | ${ms(median(rs.map((r) => r.headersP50us)))} | ${ms(median(rs.map((r) => r.headersP99us)))} | ${ms(median(rs.map((r) => r.totalP50us)))} | ${overheads.length ? ms(median(overheads)) : '—'} |`,
    );
  }
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/${out}.md`, `${lines.join('\n')}\n`);
process.stdout.write(`${lines.join('\n')}\n\nwritten to bench/results/${out}.md\n`);
