// The serving benchmarks of the batching issue, each as a ratio measured in one run on this machine.
// Usage: npx tsx bench/serving/run-serving-bench.ts [--seconds 8] [--only a,b,c,d,e] [--undici]
// Writes bench/results/serving-<date>.md. Never part of `npm test`.
import { cpus, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as ort from 'onnxruntime-node';
import { createBinaryInferBody, runInterleaved, runLoad, type LoadResult, type LoadSpec } from '../lib/closed-loop-load.ts';
import { createVariantRepository, ensureBuilt, startBareServer, startHerd, type RunningProcess } from '../lib/herd-process.ts';
import { runRawOpenLoop } from '../lib/raw-http-load.ts';
import { diffThreadCpu, readThreadCpu } from '../lib/thread-cpu.ts';
import { isWrkInstalled, runWrkLoad } from '../lib/wrk-load.ts';

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1] || 8);
const only = args.includes('--only') ? (args[args.indexOf('--only') + 1] ?? '').split(',') : ['a', 'b', 'c', 'd', 'e'];
const durationMs = seconds * 1000;
ensureBuilt();
// Closed-loop measurements (A-D) use wrk where it is installed: the undici generator's own CPU per request
// exceeded the bare server's on 2 cores, so it, not the servers, set the floor. wrk has no open loop: E's runs on
// raw sockets (raw-http-load.ts), which under its 4× load took overload p99 from ~40 to ~20 ms, measured side by side.
// --undici brings back the undici generator for both.
const useUndici = args.includes('--undici');
const useWrk = isWrkInstalled() && !useUndici;
const closedLoad = (spec: LoadSpec) => (useWrk ? runWrkLoad(spec) : runLoad(spec));
const openLoad = (spec: LoadSpec & { ratePerSecond: number }) => (useUndici ? runLoad(spec) : runRawOpenLoop(spec));
const generators = `${useWrk ? 'wrk (one thread)' : 'bench/lib/closed-loop-load.ts (undici Pool)'} for A-D, ${useUndici ? 'the undici Pool' : 'bench/lib/raw-http-load.ts (raw keep-alive sockets)'} for E's open loop`;
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

interface StatsDelta {
  count: number;
  requestUs: number;
  queueUs: number;
  computeUs: number;
  executions: number;
  inferences: number;
}

async function readStats(server: RunningProcess, model: string) {
  const res = await fetch(`${server.url}/v2/models/${model}/stats`);
  const body = (await res.json()) as { model_stats: { execution_count: number; inference_count: number; inference_stats: Record<string, { count: number; ns: number }> }[] };
  return body.model_stats[0]!;
}

type StatsSnapshot = Awaited<ReturnType<typeof readStats>>;

function diffStats(before: StatsSnapshot, after: StatsSnapshot): StatsDelta {
  const d = (k: string) => (after.inference_stats[k]!.ns - before.inference_stats[k]!.ns) / 1000;
  const count = after.inference_stats['success']!.count - before.inference_stats['success']!.count;
  return {
    count,
    requestUs: d('success') / count,
    queueUs: d('queue') / count,
    computeUs: (d('compute_input') + d('compute_infer') + d('compute_output')) / count,
    executions: after.execution_count - before.execution_count,
    inferences: after.inference_count - before.inference_count,
  };
}

async function withStats(server: RunningProcess, model: string, run: () => Promise<LoadResult>): Promise<{ load: LoadResult; server: StatsDelta }> {
  const before = await readStats(server, model);
  const load = await run();
  return { load, server: diffStats(before, await readStats(server, model)) };
}

/** CPU µs a server's threads spent inside the windows given to `track`, summed over windows. */
function createCpuMeter(server: RunningProcess) {
  const spent = { main: 0, others: 0, total: 0 };
  return {
    spent,
    async track(run: () => Promise<LoadResult>): Promise<LoadResult> {
      const before = readThreadCpu(server.child.pid as number);
      const result = await run();
      const d = diffThreadCpu(before, readThreadCpu(server.child.pid as number));
      spent.main += d.main;
      spent.others += d.others;
      spent.total += d.total;
      return result;
    },
  };
}

const fp32 = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i));
const warm = (url: string, path: string, body: { body: Buffer; headers: Record<string, string> }, concurrency: number) =>
  runLoad({ origin: url, path, ...body, concurrency, durationMs: 1000 });
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * Each window ends by waiting for its last answers; while it drains, fewer requests are in flight and the
 * batcher forms smaller batches. Windows of 2 s keep that ramp a small share of the batching variant's time.
 */
const A_WINDOW_MS = 2000;

async function benchA(): Promise<void> {
  say('\n## A. mlp_2048, one sample per request, concurrency 64: dynamic batching vs none\n');
  const body = createBinaryInferBody([{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: fp32(768) }]);
  const path = '/v2/models/mlp_2048/infer';
  // Both servers run side by side and are measured in alternating windows (see runInterleaved).
  const servers = {
    'with dynamic batching': await startHerd(createVariantRepository('mlp_2048', (c) => c)),
    'without dynamic batching': await startHerd(createVariantRepository('mlp_2048', (c) => c.replace(/dynamic_batching \{[^}]*\}\n/s, ''))),
  };
  for (const server of Object.values(servers)) await warm(server.url, path, body, 64);
  const before = { with: await readStats(servers['with dynamic batching'], 'mlp_2048'), without: await readStats(servers['without dynamic batching'], 'mlp_2048') };
  const load = (server: RunningProcess) => (windowMs: number) => closedLoad({ origin: server.url, path, ...body, concurrency: 64, durationMs: windowMs });
  const results = await runInterleaved(
    {
      'with dynamic batching': load(servers['with dynamic batching']),
      'without dynamic batching': load(servers['without dynamic batching']),
    },
    durationMs,
    A_WINDOW_MS,
  );
  const after = { with: await readStats(servers['with dynamic batching'], 'mlp_2048'), without: await readStats(servers['without dynamic batching'], 'mlp_2048') };
  for (const server of Object.values(servers)) await server.stop();
  const avgBatch = (a: typeof before.with, b: typeof before.with) => (b.inference_count - a.inference_count) / (b.execution_count - a.execution_count);
  say('| variant | infer/s | p50 ms | p99 ms | avg batch (inferences/executions) |');
  say('| --- | ---: | ---: | ---: | ---: |');
  for (const [name, r, batch] of [
    ['with dynamic batching', results['with dynamic batching'], avgBatch(before.with, after.with)],
    ['without dynamic batching', results['without dynamic batching'], avgBatch(before.without, after.without)],
  ] as const) {
    say(`| ${name} | ${fmt(r.perSecond)} | ${fmt(r.p50us / 1000, 2)} | ${fmt(r.p99us / 1000, 2)} | ${fmt(batch, 1)} |`);
  }
  const ratio = results['with dynamic batching'].perSecond / results['without dynamic batching'].perSecond;
  say(
    `\nRatio: **${fmt(ratio, 2)}×** (target ≥ 5×). Both servers ran side by side, measured in alternating ${fmt(durationMs / Math.max(1, Math.round(durationMs / A_WINDOW_MS)) / 1000, 1)} s windows.`,
  );
}

function inProcessSamplesPerSecond(modelPath: string, batch: number, ms: number): Promise<number> {
  return (async () => {
    const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, extra: { session: { intra_op: { allow_spinning: '0' } } } });
    const input = new ort.Tensor('float32', fp32(batch * 768), [batch, 768]);
    for (let i = 0; i < 5; i++) await session.run({ INPUT__0: input });
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < ms) {
      await session.run({ INPUT__0: input });
      n += 1;
    }
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
  const r = await withStats(server, 'mlp_2048', () => closedLoad({ origin: server.url, path: '/v2/models/mlp_2048/infer', ...body, concurrency: 4, durationMs }));
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
  const path = '/v2/models/my_model/infer';
  const server = await startHerd(createVariantRepository('my_model', (c) => c));
  // For comparison only (the ratio of record is the example config's): the same model with its session on the
  // event loop thread for every batch (execution_thread auto splits my_model: small batches there, large ones in a worker).
  const onMain = await startHerd(createVariantRepository('my_model', (c) => `${c}\nparameters { key: "execution_thread" value { string_value: "main" } }\n`));
  const probe = await fetch(`${server.url}${path}`, { method: 'POST', body: body.body, headers: body.headers });
  const responseBytes = (await probe.arrayBuffer()).byteLength;
  const bare = await startBareServer(responseBytes);
  await warm(server.url, path, body, 64);
  await warm(onMain.url, path, body, 64);
  await warm(bare.url, '/', body, 64);
  const before = await readStats(server, 'my_model');
  const herdCpu = createCpuMeter(server);
  const onMainCpu = createCpuMeter(onMain);
  const bareCpu = createCpuMeter(bare);
  const { herd, main, floor } = await runInterleaved(
    {
      herd: (windowMs) => herdCpu.track(() => closedLoad({ origin: server.url, path, ...body, concurrency: 64, durationMs: windowMs })),
      main: (windowMs) => onMainCpu.track(() => closedLoad({ origin: onMain.url, path, ...body, concurrency: 64, durationMs: windowMs })),
      floor: (windowMs) => bareCpu.track(() => closedLoad({ origin: bare.url, path: '/', ...body, concurrency: 64, durationMs: windowMs })),
    },
    durationMs,
  );
  const after = await readStats(server, 'my_model');
  await server.stop();
  await onMain.stop();
  await bare.stop();
  say(`| server | requests/s | p50 ms | p99 ms |`);
  say('| --- | ---: | ---: | ---: |');
  say(`| bare node:http (reads ${body.body.length} B, answers ${responseBytes} B) | ${fmt(floor.perSecond)} | ${fmt(floor.p50us / 1000, 2)} | ${fmt(floor.p99us / 1000, 2)} |`);
  say(`| Herd, my_model (example config: execution_thread auto) | ${fmt(herd.perSecond)} | ${fmt(herd.p50us / 1000, 2)} | ${fmt(herd.p99us / 1000, 2)} |`);
  say(`| Herd, my_model with execution_thread: main (comparison) | ${fmt(main.perSecond)} | ${fmt(main.p50us / 1000, 2)} | ${fmt(main.p99us / 1000, 2)} |`);
  const batch = (after.inference_count - before.inference_count) / (after.execution_count - before.execution_count);
  const perRequest = (cpu: { main: number; total: number }, r: LoadResult) => `${fmt(cpu.main / r.requests)} µs main thread, ${fmt(cpu.total / r.requests)} µs all threads`;
  say(
    `\nRatio: **${fmt((herd.perSecond / floor.perSecond) * 100, 1)}%** (target ≥ 60%; with execution_thread: main ${fmt((main.perSecond / floor.perSecond) * 100, 1)}%). Average batch ${fmt(batch, 1)}. The three servers ran side by side, measured in alternating windows.`,
  );
  say(
    `CPU per request (from /proc, steadier than requests/s on a shared machine): Herd ${perRequest(herdCpu.spent, herd)}; with execution_thread: main ${perRequest(onMainCpu.spent, main)}; bare ${perRequest(bareCpu.spent, floor)}.`,
  );
}

async function benchD(): Promise<void> {
  say('\n## D. add_sub, concurrency 1, binary: latency and server overhead\n');
  const body = createBinaryInferBody([
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, () => 1) },
  ]);
  const path = '/v2/models/add_sub/infer';
  const thread = (value: string) => (c: string) => `${c}\nparameters { key: "execution_thread" value { string_value: "${value}" } }\n`;
  const variants = {
    'default (execution_thread auto)': await startHerd(createVariantRepository('add_sub', (c) => c)),
    'execution_thread: worker': await startHerd(createVariantRepository('add_sub', thread('worker'))),
    'execution_thread: main': await startHerd(createVariantRepository('add_sub', thread('main'))),
  };
  type Name = keyof typeof variants;
  const names = Object.keys(variants) as Name[];
  for (const server of Object.values(variants)) await warm(server.url, path, body, 1);
  // The floor: a bare node:http server answering a body of the same size, measured in the same windows.
  const probe = await fetch(`${variants[names[0]!].url}${path}`, { method: 'POST', body: body.body, headers: body.headers });
  const bare = await startBareServer((await probe.arrayBuffer()).byteLength);
  await warm(bare.url, '/', body, 1);
  const before = new Map<Name, StatsSnapshot>();
  for (const name of names) before.set(name, await readStats(variants[name], 'add_sub'));
  const loads = await runInterleaved(
    {
      ...(Object.fromEntries(
        names.map((name) => [name, (windowMs: number) => closedLoad({ origin: variants[name].url, path, ...body, concurrency: 1, durationMs: windowMs })]),
      ) as Record<Name, (windowMs: number) => Promise<LoadResult>>),
      bare: (windowMs: number) => closedLoad({ origin: bare.url, path: '/', ...body, concurrency: 1, durationMs: windowMs }),
    },
    durationMs,
  );
  await bare.stop();
  say('| variant | infer/s | client p50 µs | client p99 µs | server compute µs (mean) | server overhead µs (mean: request − compute) |');
  say('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const name of names) {
    const server = diffStats(before.get(name)!, await readStats(variants[name], 'add_sub'));
    await variants[name].stop();
    const r = loads[name];
    say(`| ${name} | ${fmt(r.perSecond)} | ${fmt(r.p50us)} | ${fmt(r.p99us)} | ${fmt(server.computeUs)} | ${fmt(server.requestUs - server.computeUs)} |`);
  }
  say(`| bare node:http (same body sizes; the floor, not a target) | ${fmt(loads.bare.perSecond)} | ${fmt(loads.bare.p50us)} | ${fmt(loads.bare.p99us)} | | |`);
  say(
    "\nThe servers ran side by side, measured in alternating windows. Targets: client p50 ≤ 250 µs, server overhead ≤ 50 µs. Reference, measured by NVIDIA on its own machine and not comparable: Triton's `simple` model, 1,408 infer/s, p50 690 µs.",
  );
}

/** E's model shape: batches of at most 4 on 2 instances, and a queue holding one batch per instance. */
const E_MAX_BATCH = 4;
const E_INSTANCES = 2;
const E_QUEUE = E_INSTANCES * E_MAX_BATCH;

async function benchE(): Promise<void> {
  say(`\n## E. Overload: mlp_2048 (batches of at most ${E_MAX_BATCH}) with max_queue_size ${E_QUEUE}, 4× the sustainable load\n`);
  say(
    `Batches are capped at ${E_MAX_BATCH} so that 4× the model's sustainable rate stays below what the HTTP front end can parse on this machine: the test is about the model queue, not the socket backlog. ` +
      `max_queue_size is what an operator derives from a latency budget: ${E_QUEUE} (instances × max_batch_size) holds one batch per instance, so an accepted request waits for at most about one batch time before its own batch starts, and a request beyond that is refused at once.\n`,
  );
  const body = createBinaryInferBody([{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: fp32(768) }]);
  // The example's batching block is replaced whole: a batch goes as soon as it is full, and waits at most 100 µs.
  const repo = createVariantRepository('mlp_2048', (c) =>
    c
      .replace(/max_batch_size: \d+/, `max_batch_size: ${E_MAX_BATCH}`)
      .replace(
        /dynamic_batching \{[^}]*\}\n/s,
        `dynamic_batching {\n  preferred_batch_size: [ ${E_MAX_BATCH} ]\n  max_queue_delay_microseconds: 100\n  default_queue_policy { max_queue_size: ${E_QUEUE} }\n}\n`,
      ),
  );
  const server = await startHerd(repo);
  const path = '/v2/models/mlp_2048/infer';
  // Enough connections to keep every instance busy (a batch executing on each, and the next batch waiting in the
  // queue) without overflowing the queue: then hardly any request is refused. With more, the refused ones retry at
  // once, and that storm of 503s takes CPU from the model and understates what it sustains (measured here, 3 s
  // each: 12 connections ~3,400-3,650 infer/s with ~70 refusals, 16 connections ~3,600 with ~2,400-3,200).
  // The bench used 32 connections before: with this queue, 16 of them would be refused and retrying.
  const holds = E_INSTANCES * E_MAX_BATCH + E_MAX_BATCH;
  await warm(server.url, path, body, holds);
  const sustainable = await runLoad({ origin: server.url, path, ...body, concurrency: holds, durationMs });
  // The two loads alternate in windows with a 1 s pause between them (see runInterleaved), so both meet the
  // same background load; each window waits for its last answer, so no backlog crosses into the next.
  // The load generator's own event-loop delay is recorded: where it is large, the client is the bottleneck.
  const generatorDelay = monitorEventLoopDelay({ resolution: 1 });
  generatorDelay.enable();
  const { unloaded, overload } = await runInterleaved(
    {
      unloaded: (windowMs) => openLoad({ origin: server.url, path, ...body, concurrency: 64, durationMs: windowMs, ratePerSecond: sustainable.perSecond * 0.8 }),
      overload: (windowMs) => openLoad({ origin: server.url, path, ...body, concurrency: 256, durationMs: windowMs, ratePerSecond: sustainable.perSecond * 4 }),
    },
    durationMs,
    1500,
    1000,
  );
  generatorDelay.disable();
  await server.stop();
  const answered = Object.values(overload.statuses).reduce((a, b) => a + b, 0);
  say('| load | sent | 200 | 503 | other/errors | accepted p50 ms | accepted p99 ms | 503 p99 ms |');
  say('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, r] of [
    ['0.8× sustainable (open loop)', unloaded],
    ['4× sustainable (open loop)', overload],
  ] as const) {
    const other = r.requests - (r.statuses[200] ?? 0) - (r.statuses[503] ?? 0);
    say(
      `| ${name} | ${r.requests} | ${r.statuses[200] ?? 0} | ${r.statuses[503] ?? 0} | ${other} | ${fmt(r.p50us / 1000, 2)} | ${fmt(r.p99us / 1000, 2)} | ${fmt(r.refusedP99us / 1000, 2)} |`,
    );
  }
  say(
    `\nSustainable (closed loop, ${holds} connections: a batch executing on each instance and one waiting, so the queue hardly overflows; ${sustainable.requests - (sustainable.statuses[200] ?? 0)} refused): ${fmt(sustainable.perSecond)} infer/s. The two loads alternated in 1.5 s windows. Accepted p99 under 4× load / unloaded p99: **${fmt(overload.p99us / unloaded.p99us, 2)}×** (target ≤ 2×). Answers ${answered} + errors ${overload.errors} = requests ${overload.requests}.`,
  );
  // On a shared machine the capacity during the windows can differ from the closed-loop measurement before
  // them; what the server actually served under overload tells how far beyond its capacity the load really was.
  const served = (overload.statuses[200] ?? 0) / overload.seconds;
  say(`Offered ÷ served under the 4× load: ${fmt(overload.requests / overload.seconds / served, 1)}× (the overload the server actually met).`);
  say(
    `Load generator event-loop delay meanwhile: p50 ${fmt(generatorDelay.percentile(50) / 1e6, 2)} ms, p99 ${fmt(generatorDelay.percentile(99) / 1e6, 2)} ms, max ${fmt(generatorDelay.max / 1e6, 1)} ms.`,
  );
}

const runners: Record<string, () => Promise<void>> = { a: benchA, b: benchB, c: benchC, d: benchD, e: benchE };
const date = new Date().toISOString().slice(0, 10);
say(`# Serving benchmarks — ${date}`);
say(
  `\nMachine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}. Load generator on the same machine: ${generators}. ${seconds} s per measurement. Command: \`npx tsx bench/serving/run-serving-bench.ts --seconds ${seconds}\`.`,
);
for (const key of only) await runners[key]?.();
mkdirSync('bench/results', { recursive: true });
const file = `bench/results/serving-${date}.md`;
writeFileSync(file, `${lines.join('\n')}\n`);
process.stdout.write(`\nwritten to ${file}\n`);
