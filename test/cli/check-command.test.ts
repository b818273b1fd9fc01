// `herd check` as a user runs it: the example config resolves; a broken one names file:line:column.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const herd = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [resolve('bin/herd.mjs'), ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ...env } });

test('the example herd.yaml checks out: providers enabled by their key variable, effective prices, routes', () => {
  const r = herd(['check', 'examples/herd.yaml'], { HOLYSHEEP_API_KEY: 'sk-test' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /holysheep .*\(enabled\)/);
  assert.match(r.stdout, /openai .*\(disabled: OPENAI_API_KEY is not set\)/);
  assert.match(r.stdout, /via openai\/gpt-4\.1: list 2 \/ 8, effective 14\.6 \/ 58\.4/, 'list × ¥7.3');
  assert.match(r.stdout, /auto: ≤ 500 prompt tokens → fast \(gemini-2\.5-flash\)/);
  assert.doesNotMatch(r.stdout, /sk-test/, 'never prints a key');
});

test('a config that names an unknown provider fails with the path and position', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-check-'));
  const file = join(dir, 'herd.yaml');
  writeFileSync(
    file,
    'providers:\n  relay: { type: openai, base_url: "http://127.0.0.1:1/v1" }\nmodels:\n  m:\n    price: { input: 1, output: 2 }\n    deployments: [{ provider: nope }]\n',
  );
  const r = herd(['check', file]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`${file}:6:\\d+: models\\.m\\.deployments\\[0\\]\\.provider: unknown provider 'nope' \\(known: relay\\)`));
});

test('check takes --config as serve and keys do, and shows the gRPC port', () => {
  const r = herd(['check', '--config', 'examples/herd.yaml']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^examples\/herd\.yaml: OK/);
  assert.match(r.stdout, /server: http 0\.0\.0\.0:8000, grpc :8001, metrics :8002/);
  const both = herd(['check', 'examples/herd.yaml', '--config', 'other.yaml']);
  assert.equal(both.status, 1);
  assert.match(both.stderr, /two config files given/);
});

test('herd --version prints the package version', () => {
  const r = herd(['--version']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
});
