// `herd serve` as a user runs it: a real process, its start-up report, clean errors, draining shutdown.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const HERD = resolve('bin/herd.mjs');
const SLOW_REPOSITORY = resolve('test/fixtures/slow_repository');

// A test that fails before its server exits must not leave it running: its pipes would hold the suite open.
const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function run(args: string[]) {
  const child = spawn(process.execPath, [HERD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const output = () => ({ stdout, stderr });
  const waitFor = async (pattern: RegExp, ms = 20000): Promise<RegExpMatchArray> => {
    const end = Date.now() + ms;
    for (;;) {
      const m = stdout.match(pattern);
      if (m) return m;
      if (Date.now() > end || child.exitCode !== null) throw new Error(`no ${pattern} in output:\n${stdout}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, exited, output, waitFor };
}

test('serve prints the model table and where it listens; SIGTERM answers in-flight requests, then exits 0', async () => {
  const proc = run([
    'serve',
    '--model-repository',
    SLOW_REPOSITORY,
    '--http-port',
    '0',
    '--grpc-port',
    '0',
    '--metrics-port',
    '0',
    '--host',
    '127.0.0.1',
    '--drain-grace-secs',
    '0',
  ]);
  const [, url] = await proc.waitFor(/Started HTTPService at \S+ \((http:\/\/[^)]+)\)/);
  assert.match(proc.output().stdout, /\| slow_echo \| 1 +\| READY +\|/);
  const inFlight = fetch(`${url}/v2/models/slow_echo/infer`, {
    method: 'POST',
    body: JSON.stringify({ inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [7] }] }),
  });
  await new Promise((r) => setTimeout(r, 100));
  proc.child.kill('SIGTERM');
  const res = await inFlight;
  assert.equal(res.status, 200);
  assert.deepEqual(((await res.json()) as { outputs: { data: number[] }[] }).outputs[0]?.data, [7]);
  assert.equal(await proc.exited, 0);
  assert.match(proc.output().stdout, /all requests answered/);
});

test('a bad herd.yaml is one clear line with file:line:column, exit 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-cli-'));
  const file = join(dir, 'herd.yaml');
  writeFileSync(file, 'server:\n  http_port: lots\n');
  const proc = run(['serve', '--config', file]);
  assert.equal(await proc.exited, 1);
  assert.match(proc.output().stderr, new RegExp(`^herd: ${file}:2:14: server\\.http_port: `));
  assert.doesNotMatch(proc.output().stderr, /\n\s+at /, 'no stack trace');
});

test('a model repository that does not exist, or is a file, stops the server with exit 1, as in Triton', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-cli-'));
  const missing = join(dir, 'nonexistent');
  const a = run(['serve', '--model-repository', missing, '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0', '--host', '127.0.0.1']);
  assert.equal(await a.exited, 1);
  assert.equal(a.output().stderr, `herd: failed to stat file ${missing}: the model repository does not exist (ENOENT); check --model-repository / serving.model_repository\n`);
  assert.doesNotMatch(a.output().stdout, /Started HTTPService/);
  const file = join(dir, 'a-file');
  writeFileSync(file, '');
  const b = run(['serve', '--model-repository', SLOW_REPOSITORY, '--model-repository', file, '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0', '--host', '127.0.0.1']);
  assert.equal(await b.exited, 1);
  assert.match(b.output().stderr, new RegExp(`^herd: repository path is not a valid directory: ${file} is a file`));
});

test('flags are validated: an unknown control mode and --load-model outside explicit mode', async () => {
  const a = run(['serve', '--model-repository', SLOW_REPOSITORY, '--model-control-mode', 'sometimes']);
  assert.equal(await a.exited, 1);
  assert.match(a.output().stderr, /--model-control-mode must be none, poll or explicit/);
  const b = run(['serve', '--model-repository', SLOW_REPOSITORY, '--load-model', 'slow_echo']);
  assert.equal(await b.exited, 1);
  assert.match(b.output().stderr, /--load-model is only allowed with --model-control-mode=explicit/);
});
