// The batch bench's processes and input: the delayed mock upstream, one `herd serve` (compiled dist/, SQLite ledger
// and batch store in a temp folder, lines run realtime), its gateway key made with `herd keys create`, the JSONL file.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { type BenchProcess, startBenchProcess } from '../lib/bench-process.ts';

export interface BatchBenchOptions {
  delayMs: number;
  /** batch.realtime.concurrency */
  concurrency: number;
  maxLines: number;
  /** Writes a V8 CPU profile of `herd serve` into this folder when it exits. */
  cpuProfDir?: string | undefined;
}

export interface BatchBenchStack {
  dir: string;
  upstream: BenchProcess;
  herd: BenchProcess;
  /** A gateway key without budget or limits: the batch owner and the realtime client. */
  key: string;
  stop(): Promise<void>;
}

const MASTER = 'sk-herd-batch-bench-master-000000000000000000000';

export function buildHerd(): void {
  const run = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error('npm run build failed');
}

function batchBenchYaml(upstreamUrl: string, o: BatchBenchOptions): string {
  return `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_BENCH_MASTER, db: ./herd.db }
billing: { ledger: "sqlite:./herd.db" }
batch:
  max_lines: ${o.maxLines}
  realtime: { concurrency: ${o.concurrency} }
  upstream: { providers: [] }
providers:
  bench: { type: openai, base_url: "${upstreamUrl}/v1", api_key_env: BENCH_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, cached_input: 0.50, output: 8.00 }
    deployments: [{ provider: bench }]
`;
}

function createKey(dir: string): string {
  const run = spawnSync(process.execPath, [resolve('dist/cli/herd.js'), 'keys', 'create', '--db', join(dir, 'herd.db'), '--name', 'batch-bench'], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`herd keys create failed: ${run.stderr}`);
  return run.stdout.trim();
}

export async function startBatchBenchStack(o: BatchBenchOptions): Promise<BatchBenchStack> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-batch-bench-'));
  const upstream = await startBenchProcess([resolve('bench/batch/delay-upstream.mjs'), '0', String(o.delayMs)], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);
  let key: string;
  let herd: BenchProcess;
  try {
    writeFileSync(join(dir, 'herd.yaml'), batchBenchYaml(upstream.url, o));
    key = createKey(dir);
    herd = await startBenchProcess(
      [...(o.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`]), resolve('dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')],
      /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/,
      (m) => m[1] as string,
      {
        ...process.env,
        HERD_BENCH_MASTER: MASTER,
        BENCH_UPSTREAM_KEY: 'sk-bench-upstream',
      },
    );
  } catch (err) {
    // Herd did not start: the upstream child and the folder must not outlive the bench.
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    upstream,
    herd,
    key,
    async stop() {
      await herd.stop();
      await upstream.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The realtime requests' body and, with a custom_id each, every batch line's. */
export const chatBody = (n: number) => ({
  model: 'gpt-4.1',
  messages: [
    { role: 'system', content: 'Answer with one word.' },
    { role: 'user', content: `Is review ${n} positive, neutral or negative? "Arrived on time, works as described."` },
  ],
  max_tokens: 4,
});

/** Writes `lines` chat requests as OpenAI batch JSONL; returns the file's size in bytes. */
export async function writeBatchFile(path: string, lines: number): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  for (let i = 0; i < lines; i++) {
    const line = `${JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: chatBody(i) })}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

/** The machine and code a run is recorded with: cores, CPU model, memory, Node, commit (and whether the tree was dirty). */
export function describeMachine(): { cores: string; cpu: string; commit: string; dirty: boolean } {
  const sh = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: 'utf8' }).stdout.trim();
  const cpu = /model name\s*:\s*(.+)/.exec(sh('cat', ['/proc/cpuinfo']))?.[1] ?? 'unknown';
  return { cores: sh('nproc', []), cpu, commit: sh('git', ['rev-parse', 'HEAD']), dirty: sh('git', ['status', '--porcelain', '--', 'src', 'bench']) !== '' };
}
