// The Dockerfile checked statically (no container daemon here): pinned base, stages, non-root user, health
// check, ports, no secret in an ENV or ARG, and a .dockerignore that keeps .git, node_modules, data and .env out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

type Instruction = { op: string; args: string; stage: string };

/** The Dockerfile's instructions (continuations joined, comments dropped), each with the stage it belongs to. */
function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  const args = new Map<string, string>();
  let stage = '';
  const out: Instruction[] = [];
  for (const raw of joined.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [op = '', ...rest] = line.split(/\s+/);
    const body = rest.join(' ').replace(/\$\{(\w+)\}/g, (m, name: string) => args.get(name) ?? m);
    if (op.toUpperCase() === 'ARG' && stage === '') {
      const [name = '', value = ''] = body.split('=');
      args.set(name, value);
    }
    if (op.toUpperCase() === 'FROM') stage = /\bAS\s+(\S+)/i.exec(body)?.[1] ?? body;
    out.push({ op: op.toUpperCase(), args: body, stage });
  }
  return out;
}

const dockerfile = instructions(readFileSync('Dockerfile', 'utf8'));
const inStage = (stage: string) => dockerfile.filter((i) => i.stage === stage);
const last = (stage: string, op: string) =>
  inStage(stage)
    .filter((i) => i.op === op)
    .at(-1);

test('every FROM is pinned by digest or is an earlier stage', () => {
  const stages = new Set<string>();
  for (const from of dockerfile.filter((i) => i.op === 'FROM')) {
    const image = from.args.split(/\s+/)[0] ?? '';
    assert.ok(stages.has(image) || /^node:20-bookworm-slim@sha256:[0-9a-f]{64}$/.test(image), `FROM ${image} is neither pinned nor a stage`);
    stages.add(from.stage);
  }
  assert.deepEqual([...stages], ['build', 'prod-deps', 'runtime', 'python', 'default']);
});

test('the runtime and python images run as uid 1000, with a health check, the three ports and herd serve', () => {
  for (const stage of ['runtime', 'python']) {
    assert.equal(last(stage, 'USER')?.args, '1000:1000', `${stage}: last USER`);
  }
  const runtime = inStage('runtime');
  assert.match(last('runtime', 'HEALTHCHECK')?.args ?? '', /CMD \["node", "-e", .*\/v2\/health\/ready/);
  assert.equal(last('runtime', 'EXPOSE')?.args, '8000 8001 8002');
  assert.equal(last('runtime', 'CMD')?.args, '["herd", "serve", "--config", "/etc/herd/herd.yaml"]');
  assert.ok(runtime.some((i) => i.op === 'VOLUME' && i.args.includes('/data')));
  assert.ok(
    runtime.some((i) => i.op === 'COPY' && i.args.includes('--from=prod-deps')),
    'runtime node_modules come from the --omit=dev stage',
  );
  assert.ok(!runtime.some((i) => i.op === 'RUN' && /npm (ci|install)(?!.*--omit=dev)/.test(i.args)), 'no dev install in the runtime');
  assert.ok(inStage('prod-deps').some((i) => i.op === 'RUN' && i.args.includes('npm ci --omit=dev')));
  assert.ok(inStage('python').some((i) => i.op === 'RUN' && /python3 python3-numpy/.test(i.args)));
  assert.equal(dockerfile.at(-1)?.args, 'runtime AS default', 'a plain docker build gives the Node-only image');
});

test('onnxruntime-node downloads no CUDA libraries; no secret in ENV or ARG', () => {
  assert.ok(inStage('build').some((i) => i.op === 'ENV' && i.args.includes('ONNXRUNTIME_NODE_INSTALL=skip')));
  for (const i of dockerfile.filter((d) => d.op === 'ENV' || d.op === 'ARG')) {
    assert.doesNotMatch(i.args, /(KEY|TOKEN|SECRET|PASSWORD|DATABASE_URL|REDIS_URL)\s*=/i, `${i.op} ${i.args}`);
  }
});

test('.dockerignore keeps .git, node_modules, data, .env and databases out of the build context', () => {
  const ignored = new Set(
    readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
  for (const entry of ['.git', 'node_modules', 'data', '.env', '.env.*', 'dist', '**/*.db']) assert.ok(ignored.has(entry), `.dockerignore lacks ${entry}`);
  // What the build copies must not be ignored.
  for (const entry of ['src', 'package.json', 'package-lock.json', 'deploy', 'scripts']) assert.ok(!ignored.has(entry), entry);
});
