// bench/python: the Python backend's cost per request against a JS model doing the same add/sub, both
// served by `herd serve` (dist/) over keep-alive HTTP with binary tensors, loaded by wrk (C) at c=1 and
// c=16 in interleaved windows; CPU per request of Herd and of the stub from /proc; the bare pipe round
// trip as the floor; and large tensors through the pipe against the shared-memory segment.
// Usage: npx tsx bench/python/run-python-bench.ts [--seconds 12] [--poll-us 0,300] [--python /usr/bin/python3] [--out FILE]
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createBinaryInferBody, type LoadResult, runInterleaved, runLoad } from '../lib/closed-loop-load.ts';
import { startHerd, type RunningProcess } from '../lib/herd-process.ts';
import { isWrkInstalled, runWrkLoad } from '../lib/wrk-load.ts';
import { measurePipeFloor, type PipeFloor } from './pipe-floor.ts';
import { measureTensorTransfer, type TransferRow } from './tensor-transfer.ts';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '12' }, 'poll-us': { type: 'string', default: '0,300' }, python: { type: 'string' }, out: { type: 'string' } },
});
const seconds = Number(values.seconds);
const polls = (values['poll-us'] ?? '0').split(',').map(Number);
const python = values.python ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const wrk = isWrkInstalled();
const load = wrk ? runWrkLoad : runLoad;

const { body, headers } = createBinaryInferBody(
  ['INPUT0', 'INPUT1'].map((name, k) => ({ name, datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => (k === 0 ? i : 3)) })),
);

/** CPU ns a process spent on a CPU, all threads (schedstat: ns, unlike stat's 10 ms ticks). */
function cpuNs(pid: number): number {
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return sum;
}

const stubPid = (herd: RunningProcess, model: string) =>
  Number(
    spawnSync('pgrep', ['-P', String(herd.child.pid), '-f', `${model}/1/model.py`])
      .stdout.toString()
      .trim()
      .split('\n')[0],
  );

interface Cell {
  label: string;
  result: LoadResult;
  herdCpuUs: number;
  stubCpuUs: number;
}

/** One target: a model on one Herd, its CPU per request measured over the windows it ran. */
function target(herd: RunningProcess, model: string, concurrency: number, cpu: { herd: number; stub: number; requests: number }) {
  return async (windowMs: number) => {
    const stub = model.endsWith('_py') ? stubPid(herd, model) : 0;
    const h0 = cpuNs(herd.child.pid as number);
    const s0 = stub ? cpuNs(stub) : 0;
    const result = await load({ origin: herd.url, path: `/v2/models/${model}/infer`, body, headers, concurrency, durationMs: windowMs });
    cpu.herd += cpuNs(herd.child.pid as number) - h0;
    cpu.stub += stub ? cpuNs(stub) - s0 : 0;
    cpu.requests += result.requests;
    return result;
  };
}

async function measure(herds: { poll: number; herd: RunningProcess }[], concurrency: number): Promise<Cell[]> {
  const cpu: Record<string, { herd: number; stub: number; requests: number }> = {};
  const targets: Record<string, (ms: number) => Promise<LoadResult>> = {};
  const add = (label: string, herd: RunningProcess, model: string) => {
    cpu[label] = { herd: 0, stub: 0, requests: 0 };
    targets[label] = target(herd, model, concurrency, cpu[label]);
  };
  add('js', herds[0]?.herd as RunningProcess, 'add_sub_js');
  for (const { poll, herd } of herds) add(`python, poll ${poll} µs`, herd, 'add_sub_py');
  const results = await runInterleaved(targets, seconds * 1000 * Object.keys(targets).length, 1000 * Object.keys(targets).length);
  return Object.entries(results).map(([label, result]) => {
    const c = cpu[label] as { herd: number; stub: number; requests: number };
    return { label, result, herdCpuUs: c.herd / 1000 / Math.max(1, c.requests), stubCpuUs: c.stub / 1000 / Math.max(1, c.requests) };
  });
}

const load0 = loadavg()[0] ?? 0;
const herds: { poll: number; herd: RunningProcess }[] = [];
for (const poll of polls) {
  const repository = resolve('bench/python/model_repository');
  herds.push({ poll, herd: await startHerd(repository, [`--backend-config=python,python-executable=${python}`, `--backend-config=python,stub-poll-microseconds=${poll}`]) });
}
// Warm-up: every target, a second each.
for (const { herd } of herds)
  for (const model of ['add_sub_py', 'add_sub_js']) await load({ origin: herd.url, path: `/v2/models/${model}/infer`, body, headers, concurrency: 4, durationMs: 1000 });
const c1 = await measure(herds, 1);
const c16 = await measure(herds, 16);
for (const { herd } of herds) await herd.stop();

const floors: { label: string; floor: PipeFloor }[] = [];
for (const idle of [false, true]) {
  for (const poll of polls)
    floors.push({ label: `${idle ? 'idle 1 ms between' : 'back to back'}, poll ${poll} µs`, floor: await measurePipeFloor(python, { messages: 3000, idle, pollUs: poll }) });
}
const transfer: TransferRow[] = await measureTensorTransfer(python);
const load1 = loadavg()[0] ?? 0;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const js = c1[0] as Cell;
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const pyVersion = execSync(`${python} -c "import sys, numpy; print(sys.version.split()[0], 'numpy', numpy.__version__)"`).toString().trim();
const lines = [
  `# Python backend benchmark — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Code: ${commit}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}, Python ${pyVersion} (${python}). Load average ${fmt(load0, 1)} at the start, ${fmt(load1, 1)} at the end.`,
  `\`herd serve\` (dist/) per stub-poll-microseconds value, ${wrk ? 'wrk (one thread)' : 'the undici generator (wrk not installed)'} as the client, keep-alive HTTP, binary tensors 2 × INT32[1,16] in and out; ${seconds} s per cell in 1 s windows interleaved across the cells.`,
  `Command: \`npx tsx bench/python/run-python-bench.ts --seconds ${seconds} --poll-us ${polls.join(',')}\`.`,
  '',
  '## c=1: what a Python model costs over a JS model doing the same maths',
  '',
  '| model | p50 µs | p90 µs | p99 µs | p50 over JS µs (target ≤ 150) | Herd CPU µs/req | stub CPU µs/req |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...c1.map(
    (c) =>
      `| ${c.label} | ${fmt(c.result.p50us)} | ${fmt(c.result.p90us)} | ${fmt(c.result.p99us)} | ${c === js ? '—' : fmt(c.result.p50us - js.result.p50us)} | ${fmt(c.herdCpuUs)} | ${c === js ? '—' : fmt(c.stubCpuUs)} |`,
  ),
  '',
  '## c=16',
  '',
  '| model | req/s | p50 µs | Herd CPU µs/req | stub CPU µs/req |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...c16.map((c) => `| ${c.label} | ${fmt(c.result.perSecond)} | ${fmt(c.result.p50us)} | ${fmt(c.herdCpuUs)} | ${c.label === 'js' ? '—' : fmt(c.stubCpuUs)} |`),
  '',
  '## Floor: a bare pipe round trip Node → Python → Node (300 bytes, no Herd code)',
  '',
  '| how | p50 µs | p90 µs | Node CPU µs per round trip |',
  '| --- | ---: | ---: | ---: |',
  ...floors.map((f) => `| ${f.label} | ${fmt(f.floor.p50us, 1)} | ${fmt(f.floor.p90us, 1)} | ${fmt(f.floor.nodeCpuUs, 1)} |`),
  '',
  '## Large tensors: FP32 identity, one `PythonModelInstance.execute` in process',
  '',
  '| tensor | pipe p50 µs | shm p50 µs | pipe CPU µs/call (Herd + stub) | shm CPU µs/call (Herd + stub) |',
  '| ---: | ---: | ---: | ---: | ---: |',
  ...transfer.map(
    (t) => `| ${t.label} | ${fmt(t.pipe.p50us)} | ${fmt(t.shm.p50us)} | ${fmt(t.pipe.herdCpuUs)} + ${fmt(t.pipe.stubCpuUs)} | ${fmt(t.shm.herdCpuUs)} + ${fmt(t.shm.stubCpuUs)} |`,
  ),
  '',
];
const out = values.out ?? `bench/results/python-${new Date().toISOString().slice(0, 10)}.md`;
writeFileSync(out, `${lines.join('\n')}\n`);
process.stdout.write(`${lines.join('\n')}\nwritten to ${out}\n`);
