import { execSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { runInterleaved, runLoad, type LoadResult } from '../lib/closed-loop-load.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { cpuSeconds, startBenchProcess as start } from '../lib/bench-process.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? String(args[args.indexOf(name) + 1]) : fallback);
const seconds = Number(option('--seconds', '5'));
const label = option('--label', '');
const CONCURRENCY = 16;
const MASTER = 'sk-herd-bench-master-key-0000000000000000000000';
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

ensureBuilt();
const mock = await start([resolve('bench/gateway/mock-upstream.mjs'), '0'], /listening (\d+)/, (m) => `http://127.0.0.1:${m[1]}`);

// The pipeline's four models from the example repository, nothing else (no ONNX models to load). Inside
// the checkout (.tmp/ is ignored) so token_counter's import of gpt-tokenizer resolves from node_modules.
mkdirSync(resolve('.tmp'), { recursive: true });
const dir = mkdtempSync(join(resolve('.tmp'), 'bridge-bench-'));
for (const model of ['token_counter', 'model_router', 'chat', 'smart_chat']) cpSync(resolve('examples/model_repository', model), join(dir, 'models', model), { recursive: true });
writeFileSync(
  join(dir, 'herd.yaml'),
  `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving: { model_repository: [./models] }
auth: { master_key_env: HERD_BENCH_MASTER, db: ./herd.db }
billing: { ledger: "sqlite:./herd.db" }
providers:
  bench: { type: openai, base_url: "${mock.url}/v1", api_key_env: BENCH_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1: { price: { input: 2.00, cached_input: 0.50, output: 8.00 }, deployments: [{ provider: bench }] }
  fast-model: { price: { input: 0.30, output: 2.50 }, deployments: [{ provider: bench, upstream_model: gpt-4.1 }] }
  balanced-model: { price: { input: 0.28, output: 0.42 }, deployments: [{ provider: bench, upstream_model: gpt-4.1 }] }
  quality-model: { price: { input: 3.00, output: 15.00 }, deployments: [{ provider: bench, upstream_model: gpt-4.1 }] }
routes:
  tiers: { fast: fast-model, balanced: balanced-model, quality: quality-model }
`,
);
const herd = await start([resolve('dist/cli/herd.js'), 'serve', '--config', join(dir, 'herd.yaml')], /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/, (m) => m[1] as string, {
  ...process.env,
  HERD_BENCH_MASTER: MASTER,
  BENCH_UPSTREAM_KEY: 'sk-bench',
});

const prompt = 'Say hello in French.';
// The same chat call both ways: the chat model's system prompt, max_tokens and temperature (0.7: not cached).
const chatBody = Buffer.from(
  JSON.stringify({
    model: 'fast',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: prompt },
    ],
    max_tokens: 2048,
    temperature: 0.7,
  }),
);
const generateBody = Buffer.from(JSON.stringify({ text_input: prompt }));
const chatLoad = (ms: number) =>
  runLoad({
    origin: herd.url,
    path: '/v1/chat/completions',
    body: chatBody,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` },
    concurrency: CONCURRENCY,
    durationMs: ms,
  });
const ensembleLoad = (ms: number) =>
  runLoad({
    origin: herd.url,
    path: '/v2/models/smart_chat/generate',
    body: generateBody,
    headers: { 'content-type': 'application/json' },
    concurrency: CONCURRENCY,
    durationMs: ms,
  });

const check = await fetch(`${herd.url}/v2/models/smart_chat/generate`, { method: 'POST', body: generateBody, headers: { 'content-type': 'application/json' } });
const sample = await check.text();
if (check.status !== 200) throw new Error(`smart_chat answered ${check.status}: ${sample}`);

// Warm-up of both paths until V8 has optimised them.
await chatLoad(2000);
await ensembleLoad(2000);
const pid = herd.child.pid!;
const cpu: Record<string, number> = { chat: 0, ensemble: 0 };
const timed = (key: string, load: (ms: number) => Promise<LoadResult>) => async (ms: number) => {
  const before = cpuSeconds(pid);
  const r = await load(ms);
  cpu[key] = (cpu[key] ?? 0) + cpuSeconds(pid) - before;
  return r;
};
const load1 = loadavg()[0] ?? 0;
const runs = await runInterleaved({ chat: timed('chat', chatLoad), ensemble: timed('ensemble', ensembleLoad) }, seconds * 1000, 1000);
const load2 = loadavg()[0] ?? 0;
await herd.stop();
await mock.stop();

const commit = execSync('git rev-parse --short HEAD').toString().trim();
const date = new Date().toISOString().slice(0, 10);
const row = (name: string, key: 'chat' | 'ensemble') => {
  const r = runs[key];
  const answered = r.statuses[200] ?? 0;
  if (answered !== r.requests) throw new Error(`${name}: statuses ${JSON.stringify(r.statuses)} errors ${r.errors}`);
  const cpuUs = ((cpu[key] ?? 0) * 1e6) / Math.max(1, answered);
  say(`| ${name} | ${fmt(answered / r.seconds)} | ${fmt(r.p50us)} | ${fmt(r.p99us)} | ${fmt(cpuUs, 1)} |`);
  return cpuUs;
};
say(`# Bridge benchmark — ${date}${label ? ` (${label})` : ''}\n`);
say(
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}; commit ${commit}. The host was shared with other builds and test runs at the time (1-minute load average ${fmt(load1, 2)} before the measured windows, ${fmt(load2, 2)} after): absolute numbers are noisy, the ratio is what this records. Load generator (undici Pool), mock upstream (bench/gateway/mock-upstream.mjs) and one Herd process (compiled dist/, SQLite ledger on) all on the same cores; concurrency ${CONCURRENCY}; ${seconds} s per target in alternating 1 s windows. CPU per request is the Herd process's own (user+system) over the requests it answered. Command: \`npx tsx bench/bridge/run-bridge-bench.ts --seconds ${seconds}\`.\n`,
);
say('| path | requests/s | p50 µs | p99 µs | Herd CPU µs/request |');
say('| --- | ---: | ---: | ---: | ---: |');
const plain = row('POST /v1/chat/completions (model fast)', 'chat');
const ensemble = row('POST /v2/models/smart_chat/generate (token_counter → model_router → chat → gateway)', 'ensemble');
say(`\nEnsemble CPU per request ÷ plain gateway call's: **${fmt(ensemble / plain, 2)}×** (target ≤ 1.5×).`);
say(`\nA smart_chat answer: \`${sample}\``);
mkdirSync('bench/results', { recursive: true });
const file = `bench/results/bridge-${date}${label ? `-${label}` : ''}.md`;
writeFileSync(file, `${lines.join('\n')}\n`);
process.stdout.write(`\nwritten to ${file}\n`);
