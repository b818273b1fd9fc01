// local-embed (the example embedding ensemble: js tokenizer, ONNX encoder) at concurrency 64, one text per
// request, over KServe or through POST /v1/embeddings (a `type: triton` deployment, in process): with its
// steps' dynamic batchers vs the same ensemble whose steps have none, side by side in one Herd, in
// alternating windows. Writes a Markdown table.
//   npx tsx bench/serving/embedding-batching-bench.ts [--via kserve|gateway] [--seconds 2] [--rounds 3] [--concurrency 64] [--out FILE]
import { execSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { runLoad, type LoadResult } from '../lib/closed-loop-load.ts';
import { startHerd } from '../lib/herd-process.ts';

const { values } = parseArgs({
  options: {
    via: { type: 'string', default: 'kserve' },
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '64' },
    out: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);

const via = values.via === 'gateway' ? 'gateway' : 'kserve';
const BATCHED = 'local-embed';
const UNBATCHED = 'local-embed-unbatched';
const STEPS = ['local-embed-tokenizer', 'local-embed-encoder'];
/** The encoder step of each variant: its stats say how many inferences an execution carried. */
const ENCODER: Record<string, string> = { [BATCHED]: 'local-embed-encoder', [UNBATCHED]: 'local-embed-unbatched-encoder' };

/**
 * The example ensemble and its steps as they are, and a renamed copy of all three whose steps have no
 * dynamic_batching (each request its own execution of each step).
 */
function createRepository(): string {
  const repo = mkdtempSync(join(tmpdir(), 'herd-bench-embed-'));
  const rename = (name: string) => name.replace(BATCHED, UNBATCHED);
  for (const name of [BATCHED, ...STEPS]) {
    const source = resolve('examples/model_repository', name);
    cpSync(source, join(repo, name), { recursive: true });
    cpSync(source, join(repo, rename(name)), { recursive: true });
    let config = readFileSync(join(source, 'config.pbtxt'), 'utf8').replace(`name: "${name}"`, `name: "${rename(name)}"`);
    // One-line (`dynamic_batching { ... }`) and block forms alike.
    config = config.replace(/^dynamic_batching \{[^}]*\}\n?/m, '');
    for (const step of STEPS) config = config.replace(`model_name: "${step}"`, `model_name: "${rename(step)}"`);
    if (config.includes('dynamic_batching')) throw new Error(`${name}: dynamic_batching left in the unbatched copy`);
    writeFileSync(join(repo, rename(name), 'config.pbtxt'), config);
  }
  return repo;
}

const TEXT = 'How do I reset my password if I no longer have access to my email?';
const kserveBody = Buffer.from(JSON.stringify({ inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1, 1], data: [TEXT] }] }));
// What the openai SDK sends by default.
const gatewayBody = (model: string) => Buffer.from(JSON.stringify({ model, input: TEXT, encoding_format: 'base64' }));

/** herd.yaml for --via gateway: both models as embedding models on an in-process triton provider, ledger on. */
function writeGatewayConfig(): string {
  const state = mkdtempSync(join(tmpdir(), 'herd-bench-embed-state-'));
  const file = join(state, 'herd.yaml');
  const model = (name: string) => `  ${name}: { kind: embedding, price: { input: 0, output: 0 }, deployments: [{ provider: local, upstream_model: ${name} }] }`;
  writeFileSync(
    file,
    [
      `auth: { db: "${join(state, 'keys.db')}" }`,
      `billing: { currency: USD, ledger: "sqlite:${join(state, 'ledger.db')}" }`,
      'providers:',
      '  local: { type: triton, timeout_ms: 60000, retry: { attempts: 1 } }',
      'models:',
      model(BATCHED),
      model(UNBATCHED),
      '',
    ].join('\n'),
  );
  return file;
}

async function stats(url: string, model: string): Promise<{ inferences: number; executions: number }> {
  const res = await fetch(`${url}/v2/models/${ENCODER[model]}/stats`);
  const s = ((await res.json()) as { model_stats: { inference_count: number; execution_count: number }[] }).model_stats[0]!;
  return { inferences: s.inference_count, executions: s.execution_count };
}

const repository = createRepository();
const herd = await startHerd(repository, via === 'gateway' ? ['--config', writeGatewayConfig()] : []);
try {
  const origin = herd.url;
  const load = (model: string, ms: number) =>
    via === 'gateway'
      ? runLoad({ origin, path: '/v1/embeddings', body: gatewayBody(model), headers: { 'content-type': 'application/json' }, concurrency, durationMs: ms })
      : runLoad({ origin, path: `/v2/models/${model}/infer`, body: kserveBody, headers: { 'content-type': 'application/json' }, concurrency, durationMs: ms });
  await load(BATCHED, 500);
  await load(UNBATCHED, 500);
  const before: Record<string, { inferences: number; executions: number }> = { [BATCHED]: await stats(origin, BATCHED), [UNBATCHED]: await stats(origin, UNBATCHED) };
  const results: Record<string, LoadResult[]> = { [BATCHED]: [], [UNBATCHED]: [] };
  for (let r = 0; r < rounds; r++) {
    for (const model of r % 2 === 0 ? [BATCHED, UNBATCHED] : [UNBATCHED, BATCHED]) results[model]!.push(await load(model, seconds * 1000));
  }
  const row = async (model: string, label: string) => {
    const runs = results[model]!;
    const ok = runs.reduce((n, r) => n + r.okUs.length, 0);
    const time = runs.reduce((n, r) => n + r.seconds, 0);
    const all = runs.flatMap((r) => r.okUs).sort((a, b) => a - b);
    const pick = (p: number) => (all[Math.min(all.length - 1, Math.floor((p / 100) * all.length))] ?? 0) / 1000;
    const after = await stats(origin, model);
    const batch = (after.inferences - before[model]!.inferences) / Math.max(1, after.executions - before[model]!.executions);
    const errors = runs.reduce((n, r) => n + r.errors + (r.requests - r.okUs.length - r.errors), 0);
    return { label, perSecond: ok / time, p50: pick(50), p99: pick(99), batch, errors };
  };
  const batched = await row(BATCHED, 'steps with dynamic batching (example config)');
  const unbatched = await row(UNBATCHED, 'steps without dynamic batching');
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {}
  const lines = [
    `# local-embed: dynamic batching vs none — ${new Date().toISOString().slice(0, 10)}`,
    '',
    `Code: ${commit}. Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load generator on the same machine (bench/lib/closed-loop-load.ts).`,
    `Command: \`npx tsx bench/serving/embedding-batching-bench.ts --via ${via} --seconds ${seconds} --rounds ${rounds} --concurrency ${concurrency}\`. One text per request, ${via === 'gateway' ? 'POST /v1/embeddings (base64, as the openai SDK asks; a type: triton deployment in process, ledger on)' : 'KServe JSON'}, concurrency ${concurrency}; both models in one Herd, measured in alternating ${seconds} s windows.`,
    '',
    '| variant | infer/s | p50 ms | p99 ms | avg encoder batch (inferences/executions) | non-200 |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...[batched, unbatched].map(
      (r) => `| ${r.label} | ${Math.round(r.perSecond).toLocaleString('en-US')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.batch.toFixed(1)} | ${r.errors} |`,
    ),
    '',
    `Ratio: **${(batched.perSecond / unbatched.perSecond).toFixed(2)}×** (target ≥ 3×).`,
  ];
  const text = `${lines.join('\n')}\n`;
  if (values.out) writeFileSync(values.out, text);
  process.stdout.write(text);
} finally {
  await herd.stop();
}
