// Runs one closed-loop load against `herd serve` started with --cpu-prof, to see where the main thread's
// time goes (summarise the .cpuprofile by self/inclusive time). Not a benchmark: profiling slows Node down.
// Usage: npx tsx bench/serving/profile-herd.ts MODEL CONCURRENCY SECONDS OUT_DIR [execution_thread]
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createSampleInferBody, runLoad } from '../lib/closed-loop-load.ts';
import { createVariantRepository, ensureBuilt } from '../lib/herd-process.ts';

const [model = 'my_model', concurrency = '64', seconds = '5', outDir = '/tmp/herd-prof', thread] = process.argv.slice(2);
const body = createSampleInferBody(model);
const repo = createVariantRepository(model, (c) => (thread ? `${c}\nparameters { key: "execution_thread" value { string_value: "${thread}" } }\n` : c));
ensureBuilt();
const spawnedAt = Date.now();
const child = spawn(
  process.execPath,
  [
    '--cpu-prof',
    `--cpu-prof-dir=${outDir}`,
    resolve('dist/cli/herd.js'),
    'serve',
    '--model-repository',
    repo,
    '--host',
    '127.0.0.1',
    '--http-port',
    '0',
    '--grpc-port',
    '0',
    '--metrics-port',
    '0',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise<string>((ok) => {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const m = out.match(/\((http:\/\/[^)]+)\)/);
    if (m) ok(m[1]!);
  });
});
const startupS = (Date.now() - spawnedAt) / 1000;
const r = await runLoad({ origin: url, path: `/v2/models/${model}/infer`, ...body, concurrency: Number(concurrency), durationMs: Number(seconds) * 1000 });
const { okUs: _ok, refusedUs: _refused, ...summary } = r;
process.stdout.write(`${JSON.stringify({ ...summary, startupS })}\n`);
child.kill('SIGINT');
await new Promise((done) => child.once('exit', done));
