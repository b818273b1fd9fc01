// bench/python: the same add/sub model as a Python-backend model, a JS model and ONNX (examples' add_sub),
// served by one in-process Herd over HTTP with binary tensors: c=1 p50 and c=16 req/s each, and Herd's
// per-request overhead for Python (c=1 request time minus the Python execute() time the stub measured).
// Usage: npx tsx bench/python/run-python-bench.ts [--seconds 5] [--python /usr/bin/python3] [--out FILE]
import { execSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startHerd } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { runLoad, type LoadResult } from '../lib/closed-loop-load.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, python: { type: 'string' }, out: { type: 'string' } } });
const seconds = Number(values.seconds);
const python = values.python ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const MODELS = ['add_sub_py', 'add_sub_js', 'add_sub'] as const;

execSync('npm run --silent models', { stdio: 'inherit' });
const server = await startHerd(
  herdConfigSchema.parse({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0 },
    serving: {
      model_repository: [resolve('bench/python/model_repository'), resolve('examples/model_repository')],
      model_control_mode: 'explicit',
      load_model: [...MODELS],
      backend_config: { python: { 'python-executable': python } },
    },
  }),
  { log: (line) => process.stderr.write(`${line}\n`) },
);

const json = Buffer.from(
  JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
    ],
    outputs: [
      { name: 'OUTPUT0', parameters: { binary_data: true } },
      { name: 'OUTPUT1', parameters: { binary_data: true } },
    ],
  }),
);
const body = Buffer.concat([json, Buffer.from(Int32Array.from({ length: 16 }, (_, i) => i).buffer), Buffer.from(new Int32Array(16).fill(3).buffer)]);
const headers = { 'inference-header-content-length': String(json.length), 'content-type': 'application/octet-stream' };

interface Durations {
  count: number;
  ns: number;
}
async function computeInfer(model: string): Promise<Durations> {
  const res = await fetch(`${server.httpUrl}/v2/models/${model}/stats`);
  const stats = (await res.json()) as { model_stats: { inference_stats: { compute_infer: Durations; success: Durations } }[] };
  return stats.model_stats[0]?.inference_stats.compute_infer ?? { count: 0, ns: 0 };
}

const load = (model: string, concurrency: number, ms: number) => runLoad({ origin: server.httpUrl, path: `/v2/models/${model}/infer`, body, headers, concurrency, durationMs: ms });

const rows: { model: string; c1: LoadResult; c16: LoadResult; meanUs: number; inferUs: number }[] = [];
for (const model of MODELS) {
  await load(model, 4, 1000);
  const before = await computeInfer(model);
  const c1 = await load(model, 1, seconds * 1000);
  const after = await computeInfer(model);
  const inferUs = (after.ns - before.ns) / Math.max(1, after.count - before.count) / 1000;
  const meanUs = c1.okUs.reduce((a, b) => a + b, 0) / Math.max(1, c1.okUs.length);
  const c16 = await load(model, 16, seconds * 1000);
  rows.push({ model, c1, c16, meanUs, inferUs });
  process.stderr.write(`${model}: c=1 p50 ${c1.p50us.toFixed(0)} µs, c=16 ${c16.perSecond.toFixed(0)} req/s\n`);
}
await server.close();

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const py = rows[0] as (typeof rows)[number];
const js = rows[1] as (typeof rows)[number];
const onnx = rows[2] as (typeof rows)[number];
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const pyVersion = execSync(`${python} -c "import sys, numpy; print(sys.version.split()[0], 'numpy', numpy.__version__)"`).toString().trim();
const lines = [
  `# Python backend benchmark — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Code: ${commit}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}, Python ${pyVersion} (${python}).`,
  `Load generator (bench/serving/closed-loop-load.ts, undici) in the same process as Herd; binary tensors, 2 × INT32[1,16] in and out; ${seconds} s per cell, after a 1 s warm-up.`,
  `Command: \`npx tsx bench/python/run-python-bench.ts${values.seconds !== '5' ? ` --seconds ${seconds}` : ''}\`.`,
  '',
  'The host is shared with other builds and test runs: cells that wait on a second process (the Python stub, ONNX worker threads) suffer most from the run-queue waits, so read the Python rows as an upper bound.',
  '',
  '| model | backend | c=1 p50 µs | c=1 p99 µs | c=16 req/s | c=16 p50 µs |',
  '| --- | --- | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.model} | ${r.model === 'add_sub' ? 'onnxruntime' : r.model.endsWith('_py') ? 'python' : 'js'} | ${fmt(r.c1.p50us)} | ${fmt(r.c1.p99us)} | ${fmt(r.c16.perSecond)} | ${fmt(r.c16.p50us)} |`,
  ),
  '',
  '## Per-request overhead of the Python backend (c=1)',
  '',
  `- **p50 request time minus the mean Python execute() time: ${fmt(py.c1.p50us - py.inferUs)} µs** (target ≤ 150 µs); the JS model's, the floor every backend pays for HTTP and scheduling: ${fmt(js.c1.p50us - js.inferUs)} µs.`,
  `- mean request time (client side): ${fmt(py.meanUs)} µs; Python execute() as the stub measured it (compute_infer): ${fmt(py.inferUs, 1)} µs.`,
  `- by means (tails included): Herd's overhead for a Python request ${fmt(py.meanUs - py.inferUs)} µs, of which the HTTP exchange and scheduling that every backend pays is about the JS model's ${fmt(js.meanUs - js.inferUs)} µs; the process hop to the stub and back adds ${fmt(py.meanUs - py.inferUs - (js.meanUs - js.inferUs))} µs.`,
  `- Ratios to the floor measured in the same run (JS model): c=1 p50 ${fmt(py.c1.p50us / js.c1.p50us, 2)}×, c=16 req/s ${fmt(py.c16.perSecond / js.c16.perSecond, 2)}×; ONNX: c=1 p50 ${fmt(onnx.c1.p50us / js.c1.p50us, 2)}×, c=16 req/s ${fmt(onnx.c16.perSecond / js.c16.perSecond, 2)}×.`,
  '',
];
const out = values.out ?? `bench/results/python-${new Date().toISOString().slice(0, 10)}.md`;
writeFileSync(out, `${lines.join('\n')}\n`);
process.stdout.write(`${lines.join('\n')}\nwritten to ${out}\n`);
