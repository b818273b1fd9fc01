// Issue #33's batch benchmark: a chat batch (default 100,000 lines) through one `herd serve` to a local upstream with a
// fixed delay. Submission parse+validate throughput, the server's peak RSS above idle, wall time against the upstream-
// bound floor (lines × delay ÷ concurrency), and realtime p50/p99 at a fixed rate without and while the batch runs.
// Usage: npm run bench:batch -- [--lines 100000] [--delay-ms 5] [--concurrency 16] [--rate 20] [--seconds 20] [--no-build] [--out FILE] [--cpu-prof DIR]
import { openAsBlob, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuSeconds } from '../lib/bench-process.ts';
import { buildHerd, describeMachine, startBatchBenchStack, writeBatchFile } from './batch-bench-setup.ts';
import { type RateResult, runFixedRate } from './fixed-rate-load.ts';
import { readStatusKiB, RssSampler } from './rss-sampler.ts';

const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '100000' },
    'delay-ms': { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '20' },
    'no-build': { type: 'boolean', default: false },
    out: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const lines = Number(values.lines);
const delayMs = Number(values['delay-ms']);
const concurrency = Number(values.concurrency);
const rate = Number(values.rate);
const seconds = Number(values.seconds);

const report: string[] = [];
const say = (line = '') => {
  report.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const mib = (kib: number) => fmt(kib / 1024, 1);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');

interface BatchView {
  id: string;
  status: string;
  output_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
  errors?: { data?: { line?: number; message: string }[] } | null;
}

if (!values['no-build']) buildHerd();
const machine = describeMachine();
const stack = await startBatchBenchStack({ delayMs, concurrency, maxLines: Math.max(lines, 50_000), cpuProfDir: values['cpu-prof'] });
const pid = stack.herd.child.pid as number;
const auth = { authorization: `Bearer ${stack.key}` };
const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
  const res = await fetch(`${stack.herd.url}${path}`, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
};
const chat = (body: unknown) => api('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

try {
  const date = new Date().toISOString();
  say(`# Batch benchmark: ${fmt(lines)} chat lines, ${date.slice(0, 10)}`);
  say();
  say(
    `Machine: ${machine.cores} cores (${machine.cpu}), Node ${process.version}; commit ${machine.commit.slice(0, 12)}${machine.dirty ? ' (with uncommitted changes in src/ or bench/)' : ''}; ${date}. ` +
      `Load average at start ${load()}. Herd (\`herd serve\`, dist/), the upstream and this script share the machine.`,
  );
  say(
    `Command: \`npm run bench:batch -- --lines ${lines} --delay-ms ${delayMs} --concurrency ${concurrency} --rate ${rate} --seconds ${seconds}\`. ` +
      `Upstream: every chat answer after ${delayMs} ms; \`batch.realtime.concurrency: ${concurrency}\`, \`batch.upstream.providers: []\` (lines run realtime at BATCH priority), SQLite ledger and batch store.`,
  );
  say();

  const file = join(stack.dir, 'batch.jsonl');
  const bytes = await writeBatchFile(file, lines);
  await chat({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'warm' }], max_tokens: 1 });
  await new Promise((r) => setTimeout(r, 1000));
  const idle = readStatusKiB(pid, 'VmRSS');
  const idleAnon = readStatusKiB(pid, 'RssAnon');
  const sampler = new RssSampler(pid);

  const before = await runFixedRate(stack.herd.url, stack.key, rate, seconds);
  const afterFloorLoad = sampler.takePeak();

  const t0 = performance.now();
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', await openAsBlob(file), 'batch.jsonl');
  const uploaded = await api<{ id: string; bytes: number }>('/v1/files', { method: 'POST', body: form });
  const uploadMs = performance.now() - t0;
  const uploadPeak = sampler.takePeak();

  const cpu0 = cpuSeconds(pid);
  const t1 = performance.now();
  const created = await api<BatchView>('/v1/batches', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  const createMs = performance.now() - t1;
  const createCpu = cpuSeconds(pid) - cpu0;
  const createPeak = sampler.takePeak();
  if (created.status === 'failed') throw new Error(`the batch was refused: ${JSON.stringify(created.errors).slice(0, 500)}`);

  const t2 = performance.now();
  const cpu1 = cpuSeconds(pid);
  const during = runFixedRate(stack.herd.url, stack.key, rate, seconds).then(async (result) => ({ result, batch: await api<BatchView>(`/v1/batches/${created.id}`) }));
  let ended: BatchView;
  // RSS against lines done, every 10 s: memory that grows with the lines run shows as a slope, a warm-up as a plateau.
  const timeline: string[] = [];
  for (let polls = 0; ; polls++) {
    ended = await api<BatchView>(`/v1/batches/${created.id}`);
    if (polls % 10 === 0) timeline.push(`${fmt((performance.now() - t2) / 1000)} s: ${fmt(ended.request_counts.completed)} lines, ${mib(readStatusKiB(pid, 'VmRSS') - idle)} MiB`);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(ended.status)) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const runMs = performance.now() - t2;
  const runCpu = cpuSeconds(pid) - cpu1;
  const { result: whileRunning, batch: atLoadEnd } = await during;
  const { rss: runPeak, anon: runPeakAnon } = sampler.takePeakWithAnon();

  const outputLines =
    ended.output_file_id === null
      ? 0
      : (await (await fetch(`${stack.herd.url}/v1/files/${ended.output_file_id}/content`, { headers: auth })).text()).split('\n').filter(Boolean).length;
  const after = await runFixedRate(stack.herd.url, stack.key, rate, seconds);
  sampler.stop();
  const upstreamCalls = ((await (await fetch(`${stack.upstream.url}/stats`)).json()) as { answered: number }).answered;

  const floorMs = (lines * delayMs) / concurrency;
  say('| measure | value |');
  say('| --- | --- |');
  say(`| input file | ${fmt(lines)} lines, ${fmt(bytes / 1e6, 1)} MB |`);
  say(`| upload (POST /v1/files) | ${fmt(uploadMs)} ms (${fmt(bytes / 1e6 / (uploadMs / 1000), 1)} MB/s) |`);
  say(
    `| create (POST /v1/batches: parse + validate + store lines) | ${fmt(createMs)} ms: **${fmt(lines / (createMs / 1000))} lines/s** wall, ${fmt(lines / createCpu)} lines per CPU-second of Herd |`,
  );
  say(
    `| run (create answered → \`${ended.status}\`) | ${fmt(runMs / 1000, 1)} s, ${fmt(lines / (runMs / 1000))} lines/s; Herd CPU ${fmt(runCpu, 1)} s (${fmt((runCpu * 1e6) / lines)} µs a line, realtime load included) |`,
  );
  say(`| upstream-bound floor (lines × ${delayMs} ms ÷ ${concurrency}) | ${fmt(floorMs / 1000, 1)} s: **wall ÷ floor ${fmt(runMs / floorMs, 2)}×** |`);
  say(`| end to end (upload start → ${ended.status}) | ${fmt((t2 + runMs - t0) / 1000, 1)} s |`);
  say(
    `| result | ${fmt(ended.request_counts.completed)} completed, ${fmt(ended.request_counts.failed)} failed of ${fmt(ended.request_counts.total)}; ${fmt(outputLines)} output lines; upstream calls in all ${fmt(upstreamCalls)} |`,
  );
  say(`| RSS idle (after start and one request) | ${mib(idle)} MiB (RssAnon ${mib(idleAnon)}) |`);
  say(
    `| peak RSS above idle: realtime floor load / upload / create / run | ${mib(afterFloorLoad - idle)} / ${mib(uploadPeak - idle)} / **${mib(createPeak - idle)}** / **${mib(runPeak - idle)} MiB** (RssAnon at the run peak: +${mib(runPeakAnon - idleAnon)} MiB) |`,
  );
  say(`| VmHWM (life's peak, start-up included) | ${mib(readStatusKiB(pid, 'VmHWM'))} MiB |`);
  say(`| RSS above idle while running (time since create: lines done) | ${timeline.join('; ')} |`);
  say();
  const row = (name: string, r: RateResult) =>
    say(
      `| ${name} | ${r.ok}/${r.sent} | ${fmt(r.p50, 1)} | ${fmt(r.p90, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.max, 1)} | ${Object.keys(r.failed).length === 0 ? '—' : JSON.stringify(r.failed)} |`,
    );
  say(`Realtime chat at ${rate} req/s for ${seconds} s (open loop, latency from each request's due time, ms):`);
  say();
  say('| when | ok | p50 | p90 | p99 | max | failed |');
  say('| --- | --- | --- | --- | --- | --- | --- |');
  row('before the batch (floor)', before);
  row('while the batch runs', whileRunning);
  row('after the batch', after);
  say();
  const worst = (r: RateResult) => r.worst.map((w) => `${fmt(w.ms)} ms at ${fmt(w.dueMs / 1000, 1)} s`).join(', ');
  say(`Slowest realtime requests (latency at time into the window): before ${worst(before)}; while running ${worst(whileRunning)}; after ${worst(after)}.`);
  say();
  const floorP99 = Math.max(before.p99, after.p99);
  say(
    `p99 while running ÷ floor: **${fmt(whileRunning.p99 / before.p99, 2)}×** against the run before, ${fmt(whileRunning.p99 / after.p99, 2)}× against the run after (${fmt(whileRunning.p99 / floorP99, 2)}× against the worse); p50 ${fmt(whileRunning.p50 / before.p50, 2)}×. ` +
      `When the load ended the batch was \`${atLoadEnd.status}\` with ${fmt(atLoadEnd.request_counts.completed)} of ${fmt(lines)} lines done${atLoadEnd.status === 'in_progress' ? ' (it ran for the whole load)' : ' (it ended during the load: the window is partly without a batch)'}.`,
  );
  say(`Load average at the end ${load()}.`);
  const out = values.out ?? `bench/results/batch-${date.slice(0, 10)}-${lines >= 1000 ? `${lines / 1000}k` : lines}.md`;
  writeFileSync(out, `${report.join('\n')}\n`);
  process.stdout.write(`\nwritten to ${out}\n`);
} finally {
  await stack.stop();
}
