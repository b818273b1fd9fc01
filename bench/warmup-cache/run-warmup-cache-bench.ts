// Model warmup and the response cache, measured in one run against the real server (startHerd, in this
// process, one undici client): (1) the first request's latency on my_model and mlp_2048 without and with
// model_warmup, as a ratio to the same model's steady-state latency; (2) mlp_2048 at c=1: a cache hit vs an
// execution of the same request. Writes bench/results/serving-config-<date>-<label>.md.
// Usage: npx tsx bench/warmup-cache/run-warmup-cache-bench.ts [--trials 5] [--requests 300] [--label NAME] [--note TEXT]
import { execSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { createBinaryInferBody } from '../lib/closed-loop-load.ts';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '5' },
    requests: { type: 'string', default: '300' },
    label: { type: 'string', default: 'run' },
    note: { type: 'string', default: '' },
    'trial-repo': { type: 'string' },
    trial: { type: 'string', default: '0' },
  },
});
const TRIALS = Number(args.trials);
const REQUESTS = Number(args.requests);
const EXAMPLES = resolve('examples/model_repository');
const MODELS = ['my_model', 'mlp_2048'] as const;

const WARMUP = `
model_warmup [ { name: "zeros" batch_size: 1 count: 1 inputs { key: "INPUT__0" value { data_type: TYPE_FP32 dims: [ 768 ] zero_data: true } } } ]
`;

/** A copy of an example model under another name, with extra config text appended. */
function copyModel(repo: string, model: string, as: string, extra: string): void {
  cpSync(join(EXAMPLES, model), join(repo, as), { recursive: true });
  const file = join(repo, as, 'config.pbtxt');
  writeFileSync(file, readFileSync(file, 'utf8').replace(`name: "${model}"`, `name: "${as}"`) + extra);
}

function sampleBody(seed: number) {
  return createBinaryInferBody([{ name: 'INPUT__0', datatype: 'FP32', shape: [1, 768], data: Float32Array.from({ length: 768 }, (_, i) => Math.sin(i + seed)) }]);
}

async function timeRequest(pool: Pool, model: string, seed: number): Promise<number> {
  const { body, headers } = sampleBody(seed);
  const start = process.hrtime.bigint();
  const res = await pool.request({ path: `/v2/models/${model}/infer`, method: 'POST', body, headers });
  await res.body.arrayBuffer();
  const us = Number(process.hrtime.bigint() - start) / 1000;
  if (res.statusCode !== 200) throw new Error(`${model}: HTTP ${res.statusCode}`);
  return us;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] as number;
};

async function start(repo: string, cache?: unknown): Promise<{ server: HerdServer; pool: Pool }> {
  const config = herdConfigSchema.parse({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0 },
    serving: { model_repository: [repo], ...(cache ? { cache } : {}) },
  });
  const server = await startHerd(config);
  return { server, pool: new Pool(server.httpUrl, { connections: 1 }) };
}

async function loadSeconds(server: HerdServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^nv_model_load_duration_secs\{model="([^"]+)",version="1"\} ([\d.e-]+)$/gm)].map((m) => [m[1], Number(m[2])]));
}

/** A js echo model: the process's first request warms Herd's HTTP path on it, so neither variant pays that. */
const ECHO_MODEL = `export function execute(requests) { return requests.map((r) => ({ outputs: [{ ...r.input('INPUT__0'), name: 'OUTPUT__0' }] })); }\n`;
const ECHO_CONFIG =
  'name: "echo"\nbackend: "js"\nmax_batch_size: 8\ninput [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 768 ] } ]\noutput [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 768 ] } ]\n';

interface TrialResult {
  first: Record<string, number>;
  steady: Record<string, number[]>;
  loadMs: Record<string, number>;
}

/** One trial in this (fresh) process: load everything, warm the HTTP path on `echo`, time each model's first request. */
async function runTrial(repo: string, trial: number): Promise<TrialResult> {
  const { server, pool } = await start(repo);
  const result: TrialResult = { first: {}, steady: {}, loadMs: {} };
  try {
    for (const [name, secs] of Object.entries(await loadSeconds(server))) result.loadMs[name] = secs * 1000;
    for (let i = 0; i < 20; i++) await timeRequest(pool, 'echo', i);
    for (const m of MODELS) {
      // Alternate which variant goes first, so neither always benefits from the other's first run.
      const order = trial % 2 === 0 ? ['cold', 'warm'] : ['warm', 'cold'];
      for (const v of order) result.first[`${m}_${v}`] = await timeRequest(pool, `${m}_${v}`, trial);
    }
    for (const m of MODELS)
      for (const v of ['cold', 'warm']) {
        for (let i = 0; i < 30; i++) (result.steady[`${m}_${v}`] ??= []).push(await timeRequest(pool, `${m}_${v}`, 1000 + i));
      }
  } finally {
    await pool.close();
    await server.close();
  }
  return result;
}

async function benchWarmup(): Promise<string[]> {
  const repo = mkdtempSync(join(tmpdir(), 'herd-bench-warmup-'));
  for (const m of MODELS) {
    copyModel(repo, m, `${m}_cold`, '');
    copyModel(repo, m, `${m}_warm`, WARMUP);
  }
  mkdirSync(join(repo, 'echo', '1'), { recursive: true });
  writeFileSync(join(repo, 'echo', 'config.pbtxt'), ECHO_CONFIG);
  writeFileSync(join(repo, 'echo', '1', 'model.mjs'), ECHO_MODEL);
  const first: Record<string, number[]> = {};
  const steady: Record<string, number[]> = {};
  const load: Record<string, number[]> = {};
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      // A new process per trial: a cold first request means a process that has never run the model.
      const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--trial-repo', repo, '--trial', String(trial)], {
        encoding: 'utf8',
        maxBuffer: 1 << 24,
      });
      if (child.status !== 0) throw new Error(`trial ${trial} failed: ${child.stderr}`);
      const result = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as TrialResult;
      for (const [k, v] of Object.entries(result.first)) (first[k] ??= []).push(v);
      for (const [k, v] of Object.entries(result.steady)) (steady[k] ??= []).push(...v);
      for (const [k, v] of Object.entries(result.loadMs)) (load[k] ??= []).push(v);
    }
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
  const rows = [
    '| model | warmup | first request, median of trials (ms) | steady state p50 (ms) | first / steady | load time, median (ms) |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const m of MODELS)
    for (const v of ['cold', 'warm']) {
      const k = `${m}_${v}`;
      const f = median(first[k] ?? []) / 1000;
      const s = median(steady[k] ?? []) / 1000;
      rows.push(
        `| ${m} | ${v === 'warm' ? 'model_warmup (1 × zeros)' : 'none'} | ${f.toFixed(2)} | ${s.toFixed(2)} | ${(f / s).toFixed(1)}× | ${median(load[k] ?? []).toFixed(0)} |`,
      );
    }
  const ratio = (m: string) => median(first[`${m}_cold`] ?? []) / median(first[`${m}_warm`] ?? []);
  rows.push(
    '',
    ...MODELS.map(
      (m) =>
        `- ${m}: the cold first request takes **${ratio(m).toFixed(1)}×** the warm one. All first requests: cold ${(first[`${m}_cold`] ?? []).map((x) => (x / 1000).toFixed(1)).join(', ')} ms; warm ${(first[`${m}_warm`] ?? []).map((x) => (x / 1000).toFixed(1)).join(', ')} ms.`,
    ),
  );
  return rows;
}

async function benchCache(): Promise<string[]> {
  const repo = mkdtempSync(join(tmpdir(), 'herd-bench-cache-'));
  copyModel(repo, 'mlp_2048', 'mlp_2048', '');
  copyModel(repo, 'mlp_2048', 'mlp_2048_cached', '\nresponse_cache { enable: true }\n');
  const { server, pool } = await start(repo, { local: { size: 64 * 1024 * 1024 } });
  const samples: Record<'execution' | 'hit' | 'miss', number[]> = { execution: [], hit: [], miss: [] };
  try {
    for (let i = 0; i < 50; i++) {
      await timeRequest(pool, 'mlp_2048', 7);
      await timeRequest(pool, 'mlp_2048_cached', 7);
    }
    // Interleaved so both see the same host load: the same request executed, the same request from the cache, a new request (miss).
    for (let i = 0; i < REQUESTS; i++) {
      samples.execution.push(await timeRequest(pool, 'mlp_2048', 7));
      samples.hit.push(await timeRequest(pool, 'mlp_2048_cached', 7));
      samples.miss.push(await timeRequest(pool, 'mlp_2048_cached', 10_000 + i));
    }
    const stats = (await (await fetch(`${server.httpUrl}/v2/models/mlp_2048_cached/stats`)).json()) as {
      model_stats: { inference_stats: Record<string, { count: number; ns: number }> }[];
    };
    const s = stats.model_stats[0]?.inference_stats ?? {};
    const rows = ['| request (mlp_2048, 1 × FP32[768], binary, c=1) | p50 (µs) | p90 (µs) | p99 (µs) |', '| --- | ---: | ---: | ---: |'];
    for (const [name, xs] of Object.entries(samples))
      rows.push(
        `| ${name === 'execution' ? 'executed (no response_cache)' : name === 'hit' ? 'cache hit' : 'cache miss (executed, then stored)'} | ${pct(xs, 0.5).toFixed(0)} | ${pct(xs, 0.9).toFixed(0)} | ${pct(xs, 0.99).toFixed(0)} |`,
      );
    const hit = s['cache_hit'];
    const miss = s['cache_miss'];
    rows.push(
      '',
      `- A hit takes **${((pct(samples.hit, 0.5) / pct(samples.execution, 0.5)) * 100).toFixed(0)}%** of an execution's p50 (${(pct(samples.execution, 0.5) / pct(samples.hit, 0.5)).toFixed(2)}× faster), HTTP round trip included.`,
    );
    if (hit && miss)
      rows.push(
        `- Server side (/stats): a hit's lookup took ${(hit.ns / hit.count / 1000).toFixed(1)} µs on average (${hit.count} hits); a miss's lookup + insert ${(miss.ns / miss.count / 1000).toFixed(1)} µs (${miss.count} misses).`,
      );
    return rows;
  } finally {
    await pool.close();
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  }
}

if (args['trial-repo'] !== undefined) {
  process.stdout.write(`${JSON.stringify(await runTrial(args['trial-repo'], Number(args.trial)))}\n`);
  process.exit(0);
}

const commit = execSync('git rev-parse --short HEAD').toString().trim();
const date = new Date().toISOString().slice(0, 10);
const warmup = await benchWarmup();
const cache = await benchCache();
const text = [
  `# Serving configuration benchmarks: model warmup and the response cache (${date})`,
  '',
  `Code: ${commit}. Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Server and client in one process (startHerd + one undici connection).`,
  `Command: \`npx tsx bench/warmup-cache/run-warmup-cache-bench.ts --trials ${TRIALS} --requests ${REQUESTS}\`.`,
  ...(args.note ? ['', args.note] : []),
  '',
  '## First request, with and without model_warmup',
  '',
  `Each trial is a new process: it starts a server holding both variants of each model (identical but for model_warmup) and a js echo model, sends 20 requests to the echo model (so Herd's HTTP path is warm for both variants), then times the first request to each variant and 30 more (steady state). ${TRIALS} trials; the variant sent first alternates.`,
  '',
  ...warmup,
  '',
  '## Response cache hit vs execution, mlp_2048, concurrency 1',
  '',
  `${REQUESTS} rounds of: the same request to mlp_2048 (no cache), the same request to mlp_2048_cached (a hit after the first), a new request to mlp_2048_cached (a miss). Local cache, 64 MiB.`,
  '',
  ...cache,
  '',
].join('\n');
const out = join('bench/results', `serving-config-${date}-${args.label}.md`);
writeFileSync(out, text);
process.stdout.write(`${text}\nwritten to ${out}\n`);
