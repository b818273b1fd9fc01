// The health and metrics paths the deploy files probe, asked of a real `herd serve` (empty repository, free
// ports), and every herd.yaml under deploy/ through `herd check`: probes and configs that Herd answers, today.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const HERD = resolve('bin/herd.mjs');
const dir = mkdtempSync(join(tmpdir(), 'herd-deploy-probes-'));
let child: ChildProcess | undefined;
after(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function deployFiles(path: string, out: string[] = []): string[] {
  for (const name of readdirSync(path)) {
    const full = join(path, name);
    if (statSync(full).isDirectory()) deployFiles(full, out);
    else out.push(full);
  }
  return out;
}
const files = [...deployFiles('deploy'), 'Dockerfile'];

/** Paths probed on the HTTP port (/v2/health/…) and scraped on the metrics port, as the deploy files name them. */
function probedPaths(): { http: string[]; metrics: string[] } {
  const text = files.map((f) => readFileSync(f, 'utf8')).join('\n');
  const http = [...new Set([...text.matchAll(/\/v2\/health\/[a-z]+/g)].map((m) => m[0]))].sort();
  const metrics = [...new Set([...text.matchAll(/path: ["']?(\/metrics)\b/g)].map((m) => m[1] as string))];
  return { http, metrics };
}

async function startHerd(): Promise<{ http: string; metrics: string }> {
  const repo = join(dir, 'models');
  mkdirSync(repo);
  const args = [HERD, 'serve', '--model-repository', repo, '--host', '127.0.0.1', '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0'];
  const proc = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child = proc;
  let out = '';
  proc.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((ok, fail) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const http = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out)?.[1];
      const metrics = /Started Metrics Service at \S+ \((http:\/\/[^)/]+)/.exec(out)?.[1];
      if (http && metrics && out.includes('Ready:')) ok({ http, metrics });
    });
    proc.on('exit', (code) => fail(new Error(`herd serve exited ${code}:\n${out}`)));
  });
}

test('every health path the deploy files probe answers 200 on a real herd serve, and /metrics on the metrics port', async () => {
  const paths = probedPaths();
  assert.deepEqual(paths.http, ['/v2/health/live', '/v2/health/ready']);
  assert.deepEqual(paths.metrics, ['/metrics']);
  const urls = await startHerd();
  for (const path of paths.http) assert.equal((await fetch(`${urls.http}${path}`)).status, 200, path);
  const metrics = await fetch(`${urls.metrics}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /^# HELP nv_/m);
});

test('every herd.yaml under deploy/ passes herd check', async () => {
  const configs = files.filter((f) => f.endsWith('herd.yaml'));
  assert.equal(configs.length, 3);
  const env = { ...process.env, DATABASE_URL: 'postgres://herd@db.invalid:5432/herd', REDIS_URL: 'redis://cache.invalid:6379' };
  // In parallel: each check is a Node start-up, the slow part.
  const results = await Promise.allSettled(configs.map((config) => promisify(execFile)(process.execPath, [HERD, 'check', config], { env })));
  for (const [i, result] of results.entries()) {
    assert.equal(result.status, 'fulfilled', `${configs[i]}: ${result.status === 'rejected' ? String(result.reason) : ''}`);
    if (result.status === 'fulfilled') assert.match(result.value.stdout, /: OK/);
  }
});
