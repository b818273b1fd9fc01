// The image's install, without a container: the compiled package copied to a temp folder, `npm ci --omit=dev`
// there, the Dockerfile's prune script, then `herd serve` from it on Triton's example repository. Catches a runtime
// import of a dev dependency and a prune that removes what Herd loads. Opt-in (HERD_TEST_PRODUCTION_INSTALL=1):
// the install takes minutes on 2 busy cores (247 s measured, mostly better-sqlite3's native module), too long for `npm test`.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TRITON_MODEL_REPOSITORY } from '../triton-testdata.ts';

const OPT_IN = process.env.HERD_TEST_PRODUCTION_INSTALL === '1';
const dir = mkdtempSync(join(tmpdir(), 'herd-production-install-'));
let child: ChildProcess | undefined;
after(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function run(cmd: string, args: string[], cwd: string, timeout: number): void {
  const out = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
  assert.equal(out.status, 0, `${cmd} ${args.join(' ')} failed:\n${out.stdout}\n${out.stderr}`);
}

async function startServer(): Promise<string> {
  const args = ['dist/cli/herd.js', 'serve', '--model-repository', TRITON_MODEL_REPOSITORY, '--model-control-mode', 'explicit', '--load-model', 'simple'];
  const ports = ['--host', '127.0.0.1', '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0'];
  const proc = spawn(process.execPath, [...args, ...ports], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child = proc;
  let out = '';
  proc.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise<string>((ok, fail) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out);
      if (m) ok(m[1] as string);
    });
    proc.on('exit', (code) => fail(new Error(`herd serve exited ${code} before listening:\n${out}`)));
  });
}

test('npm ci --omit=dev of the built package serves Triton example models', {
  skip: OPT_IN ? false : 'opt-in: HERD_TEST_PRODUCTION_INSTALL=1 (minutes: npm ci installs the native modules)',
  timeout: 900_000,
}, async () => {
  assert.ok(existsSync(TRITON_MODEL_REPOSITORY), `no Triton example repository at ${TRITON_MODEL_REPOSITORY} (set HERD_TESTDATA)`);
  run('npm', ['run', '--silent', 'build'], resolve('.'), 600_000);
  for (const entry of ['package.json', 'package-lock.json', 'dist']) cpSync(entry, join(dir, entry), { recursive: true });
  run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], dir, 600_000);
  run('sh', [resolve('deploy/docker/prune-node-modules.sh')], dir, 60_000);
  assert.equal(existsSync(join(dir, 'node_modules/typescript')), false, 'a dev dependency was installed');

  const url = await startServer();
  const ready = await fetch(`${url}/v2/health/ready`);
  assert.equal(ready.status, 200);
  const data = Array.from({ length: 16 }, (_, i) => i);
  const infer = await fetch(`${url}/v2/models/simple/infer`, {
    method: 'POST',
    body: JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: data.map(() => 1) },
      ],
    }),
  });
  assert.equal(infer.status, 200, await infer.clone().text());
  const outputs = ((await infer.json()) as { outputs: { name: string; data: number[] }[] }).outputs;
  assert.deepEqual(
    outputs.find((o) => o.name === 'OUTPUT0')?.data,
    data.map((v) => v + 1),
  );
});
