// The serving benchmarks of the batching issue, each as a ratio measured in one run on this machine.
// Usage: npx tsx bench/serving/run-serving-bench.ts [--seconds 8] [--only a,b,c,d,e]
// Writes bench/results/serving-<date>.md. Never part of `npm test`.
import { cpus, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';
import { createBinaryInferBody, runLoad, type LoadResult } from './closed-loop-load.ts';
import { createVariantRepository, startBareServer, startHerd, type RunningProcess } from './herd-process.ts';

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1] || 8);
const only = args.includes('--only') ? (args[args.indexOf('--only') + 1] ?? '').split(',') : ['a', 'b', 'c', 'd', 'e'];
const durationMs = seconds * 1000;
const lines: string[] = [];
const say = (line: string) => { lines.push(line); process.stdout.write(`${line}\n`); };

interface StatsDelta { count: number; requestUs: number; queueUs: number; computeUs: number; executions: number; inferences: number }

async function readStats(server: RunningProcess, model: string) {
  const res = await fetch(`${server.url}/v2/models/${model}/stats`);
  const body = await res.json() as { model_stats: { execution_count: number; inference_count: number; inference_stats: Record<string, { count: number; ns: number }> }[] };
  return body.model_stats[0]!;
}

async function withStats(server: RunningProcess, model: string, run: () => Promise<LoadResult>): Promise<{ load: LoadResult; server: StatsDelta }> {
  const before = await readStats(server, model);
  const load = await run();
  const after = await readStats(server, model);
  const d = (k: string) => (after.inference_stats[k]!.ns - before.inference_stats[k]!.ns) / 1000;
  const count = after.inference_stats['success']!.count - before.inference_stats['success']!.count;
  return {
    load,
    server: {
      count,
      requestUs: d('success') / count,
      queueUs: d('queue') / count,
      computeUs: (d('compute_input') + d('compute_infer') + d('compute_output')) / count,
      executions: after.execution_count - before.execution_count,
      inferences: after.inference_count - before.inference_count,
    },
  };
}

const fp32 = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i));
const warm = (url: string, path: string, body: { body: Buffer; headers: Record<string, string> }, concurrency: number) =>
  runLoad({ origin: url, path, ...body, concurrency, durationMs: 1000 });
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function benchA(): Promise<void> {
  say('\n## A. mlp_2048, one sample per request, concurrency 64: dynamic batching vs none\n');
  const body = createBinaryInferBody([{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: fp32(768) }]);
  const results: Record<string, { load: LoadResult; server: StatsDelta }> = {};
  for (const [name, edit] of [
    ['with dynamic batching', (c: string) => c],
    ['without dynamic batching', (c: string) => c.replace(/dynamic_batching \{[^}]*\}\n/s, '')],
  ] as const) {
    const server = await startHerd(createVariantRepository('mlp_2048', edit));
    await warm(server.url, '/v2/models/mlp_2048/infer', body, 64);
    results[name] = await withStats(server, 'mlp_2048', () => runLoad({ origin: server.url, path: '/v2/models/mlp_2048/infer', ...body, concurrency: 64, durationMs }));
    await server.stop();
  }
  say('| variant | infer/s | p50 ms | p99 ms | avg batch (inferences/executions) |');
  say('| --- | ---: | ---: | ---: | ---: |');
  for (const [name, r] of Object.entries(results)) {
    say(`| ${name} | ${fmt(r.load.perSecond)} | ${fmt(r.load.p50us / 1000, 2)} | ${fmt(r.load.p99us / 1000, 2)} | ${fmt(r.server.inferences / r.server.executions, 1)} |`);
  }
  const ratio = results['with dynamic batching']!.load.perSecond / results['without dynamic batching']!.load.perSecond;
  say(`\nRatio: **${fmt(ratio, 2)}×** (target ≥ 5×).`);
}

function inProcessSamplesPerSecond(modelPath: string, batch: number, ms: number): Promise<number> {
  return (async () => {
    const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, extra: { session: { intra_op: { allow_spinning: '0' } } } });
    const input = new ort.Tensor('float32', fp32(batch * 768), [batch, 768]);
    for (let i = 0; i < 5; i++) await session.run({ INPUT__0: input });
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < ms) { await session.run({ INPUT__0: input }); n += 1; }
    const rate = (n * batch) / ((performance.now() - start) / 1000);
    await session.release();
    return rate;
  })();
}

async function benchB(): Promise<void> {
  say('\n## B. mlp_2048, 64 samples per request, binary: served samples/s vs in-process onnxruntime-node at batch 64\n');
  const inProcess = await inProcessSamplesPerSecond('examples/model_repository/mlp_2048/1/model.onnx', 64, durationMs);
  const body = createBinaryInferBody([{ name: 'INPUT__0', datatype: 'FP32', shape: [64, 768], data: fp32(64 * 768) }]);
  const server = await startHerd(createVariantRepository('mlp_2048', (c) => c));
  await warm(server.url, '/v2/models/mlp_2048/infer', body, 4);
  const r = await withStats(server, 'mlp_2048', () => runLoad({ origin: server.url, path: '/v2/models/mlp_2048/infer', ...body, concurrency: 4, durationMs }));
  await server.stop();
  const served = r.load.perSecond * 64;
  say('| | samples/s |');
  say('| --- | ---: |');
  say(`| in-process onnxruntime-node, one session, batch 64 | ${fmt(inProcess)} |`);
  say(`| Herd over HTTP, requests of 64 samples, concurrency 4, 2 instances | ${fmt(served)} |`);
  say(`\nRatio: **${fmt((served / inProcess) * 100, 1)}%** (target ≥ 80%). Server: ${fmt(r.server.computeUs)} µs compute, ${fmt(r.server.queueUs)} µs queue per request.`);
}

async function benchC(): Promise<void> {
  say('\n## C. my_model, one sample per request, binary, concurrency 64: requests/s vs a bare node:http server\n');
  const body = createBinaryInferBody([{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: fp32(768) }]);
  const server = await startHerd(createVariantRepository('my_model', (c) => c));
  const probe = await fetch(`${server.url}/v2/models/my_model/infer`, { method: 'POST', body: body.body, headers: body.headers });
  const responseBytes = (await probe.arrayBuffer()).byteLength;
  await warm(server.url, '/v2/models/my_model/infer', body, 64);
  const herd = await withStats(server, 'my_model', () => runLoad({ origin: server.url, path: '/v2/models/my_model/infer', ...body, concurrency: 64, durationMs }));
  await server.stop();
  const bare = await startBareServer(responseBytes);
  await warm(bare.url, '/', body, 64);
  const floor = await runLoad({ origin: bare.url, path: '/', ...body, concurrency: 64, durationMs });
  await bare.stop();
  say(`| server | requests/s | p50 ms | p99 ms |`);
  say('| --- | ---: | ---: | ---: |');
  say(`| bare node:http (reads ${body.body.length} B, answers ${responseBytes} B) | ${fmt(floor.perSecond)} | ${fmt(floor.p50us / 1000, 2)} | ${fmt(floor.p99us / 1000, 2)} |`);
  say(`| Herd, my_model | ${fmt(herd.load.perSecond)} | ${fmt(herd.load.p50us / 1000, 2)} | ${fmt(herd.load.p99us / 1000, 2)} |`);
  say(`\nRatio: **${fmt((herd.load.perSecond / floor.perSecond) * 100, 1)}%** (target ≥ 60%). Average batch ${fmt(herd.server.inferences / herd.server.executions, 1)}.`);
}

async function benchD(): Promise<void> {
  say('\n## D. add_sub, concurrency 1, binary: latency and server overhead\n');
  const body = createBinaryInferBody([
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, () => 1) },
  ]);
  const rows: string[] = [];
  for (const [name, edit] of [
    ['instances in worker threads (default)', (c: string) => c],
    ['execution_thread: main', (c: string) => `${c}\nparameters { key: "execution_thread" value { string_value: "main" } }\n`],
  ] as const) {
    const server = await startHerd(createVariantRepository('add_sub', edit));
    await warm(server.url, '/v2/models/add_sub/infer', body, 1);
    const r = await withStats(server, 'add_sub', () => runLoad({ origin: server.url, path: '/v2/models/add_sub/infer', ...body, concurrency: 1, durationMs }));
    await server.stop();
    const overhead = r.server.requestUs - r.server.computeUs;
    rows.push(`| ${name} | ${fmt(r.load.perSecond)} | ${fmt(r.load.p50us)} | ${fmt(r.load.p99us)} | ${fmt(r.server.computeUs)} | ${fmt(overhead)} |`);
  }
  say('| variant | infer/s | client p50 µs | client p99 µs | server compute µs (mean) | server overhead µs (mean: request − compute) |');
  say('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) say(row);
  say('\nTargets: client p50 ≤ 250 µs, server overhead ≤ 50 µs. Reference, measured by NVIDIA on its own machine and not comparable: Triton\'s `simple` model, 1,408 infer/s, p50 690 µs.');
}

async function benchE(): Promise<void> {
  say('\n## E. Overload: mlp_2048 (batches of at most 4) with max_queue_size 16, 4× the sustainable load\n');
  say('Batches are capped at 4 so that 4× the model\'s sustainable rate stays below what the HTTP front end can parse on this machine: the test is about the model queue, not the socket backlog.\n');
  const body = createBinaryInferBody([{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: fp32(768) }]);
  const repo = createVariantRepository('mlp_2048', (c) => c
    .replace('max_batch_size: 64', 'max_batch_size: 4')
    .replace('preferred_batch_size: [ 16, 32, 64 ]', 'preferred_batch_size: [ 4 ]')
    .replace('max_queue_delay_microseconds: 100', 'max_queue_delay_microseconds: 100\n  default_queue_policy { max_queue_size: 16 }'));
  const server = await startHerd(repo);
  await warm(server.url, '/v2/models/mlp_2048/infer', body, 32);
  const sustainable = await runLoad({ origin: server.url, path: '/v2/models/mlp_2048/infer', ...body, concurrency: 32, durationMs });
  const unloaded = await runLoad({ origin: server.url, path: '/v2/models/mlp_2048/infer', ...body, concurrency: 64, durationMs, ratePerSecond: sustainable.perSecond * 0.8 });
  const overload = await runLoad({ origin: server.url, path: '/v2/models/mlp_2048/infer', ...body, concurrency: 256, durationMs, ratePerSecond: sustainable.perSecond * 4 });
  await server.stop();
  const answered = Object.values(overload.statuses).reduce((a, b) => a + b, 0);
  say('| load | sent | 200 | 503 | other/errors | accepted p50 ms | accepted p99 ms | 503 p99 ms |');
  say('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, r] of [['0.8× sustainable (open loop)', unloaded], ['4× sustainable (open loop)', overload]] as const) {
    const other = r.requests - (r.statuses[200] ?? 0) - (r.statuses[503] ?? 0);
    say(`| ${name} | ${r.requests} | ${r.statuses[200] ?? 0} | ${r.statuses[503] ?? 0} | ${other} | ${fmt(r.p50us / 1000, 2)} | ${fmt(r.p99us / 1000, 2)} | ${fmt(r.refusedP99us / 1000, 2)} |`);
  }
  say(`\nSustainable (closed loop, 32 connections): ${fmt(sustainable.perSecond)} infer/s. Accepted p99 under 4× load / unloaded p99: **${fmt(overload.p99us / unloaded.p99us, 2)}×** (target ≤ 2×). Answers ${answered} + errors ${overload.errors} = requests ${overload.requests}.`);
}

const runners: Record<string, () => Promise<void>> = { a: benchA, b: benchB, c: benchC, d: benchD, e: benchE };
const date = new Date().toISOString().slice(0, 10);
say(`# Serving benchmarks — ${date}`);
say(`\nMachine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}. Load generator: bench/serving/closed-loop-load.ts (undici Pool) on the same machine. ${seconds} s per measurement. Command: \`npx tsx bench/serving/run-serving-bench.ts --seconds ${seconds}\`.`);
for (const key of only) await runners[key]?.();
mkdirSync('bench/results', { recursive: true });
const file = `bench/results/serving-${date}.md`;
writeFileSync(file, `${lines.join('\n')}\n`);
process.stdout.write(`\nwritten to ${file}\n`);
