// The start-up banner the README shows is what `herd serve --config examples/herd.yaml` prints: the model
// table, the gateway's counts and disabled providers, the open-mode warning and the ready line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The README's banner block, between "it prints:" and the closing fence. */
function readmeBanner(): string[] {
  const readme = readFileSync('README.md', 'utf8');
  const block = /After npm's own lines it prints:\n\n```\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, 'README has the start-up banner block');
  return (block[1] ?? '').trimEnd().split('\n');
}

/** Ports, URLs and the repository path differ per run; everything else must be as printed. */
const normalise = (line: string) =>
  line
    .replace(/http:\/\/127\.0\.0\.1:\d+/g, 'http://127.0.0.1:PORT')
    .replace(/0\.0\.0\.0:\d+ \((?:http:\/\/)?127\.0\.0\.1:[^)]*\)/g, '0.0.0.0:PORT (URL)')
    .replace(/repositories: .*$/, 'repositories: PATH');

test('the README start-up banner is what herd serve prints for examples/herd.yaml', { timeout: 120_000 }, async () => {
  // A copy of the example config whose keys and ledger live in a temporary folder, never in ./data.
  const dir = mkdtempSync(join(tmpdir(), 'herd-banner-'));
  const config = readFileSync('examples/herd.yaml', 'utf8')
    .replace('[./model_repository]', `[${resolve('examples/model_repository')}]`)
    .replace('db: ../data/herd.db', 'db: ./data/keys.db')
    .replace('ledger: sqlite:../data/herd.db', 'ledger: sqlite:./data/ledger.db');
  writeFileSync(join(dir, 'herd.yaml'), config);
  const child = spawn(process.execPath, [resolve('bin/herd.mjs'), 'serve', '--config', join(dir, 'herd.yaml'), '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0'], {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir },
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const printed = await new Promise<string>((done, fail) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/^(Ready|Not ready): .*\n/m.test(out)) done(out);
    });
    child.once('exit', (code) => fail(new Error(`herd serve exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  assert.deepEqual(printed.trimEnd().split('\n').map(normalise), readmeBanner().map(normalise));
});
