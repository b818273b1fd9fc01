// The start-up model table stays as narrow as its names and states when a model fails: the reasons
// follow it, one line per model. Checked on the function and on a real `herd serve`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { formatModelTable } from '../../src/cli/format-model-table.ts';

const LONG_REASON =
  "failed to load 'broken' version 1: Internal: onnxruntime could not read /models/broken/1/model.onnx: " +
  'Load model from /models/broken/1/model.onnx failed: Protobuf parsing failed. The file may be truncated, corrupted, or not an ONNX model at all; ' +
  'check that it was written completely';

test('a failed model keeps its row short and its reason goes below the table', () => {
  const text = formatModelTable([
    { name: 'add_sub', state: 'READY', versions: [1], reason: '' },
    { name: 'broken', state: 'UNAVAILABLE', versions: [1, 2], reason: LONG_REASON },
    { name: 'empty', state: 'UNAVAILABLE', versions: [], reason: 'no version directory' },
    { name: 'loading', state: 'LOADING', versions: [1], reason: '' },
  ]);
  const lines = text.split('\n');
  assert.deepEqual(lines, [
    '+---------+---------+----------------------------+',
    '| Model   | Version | Status                     |',
    '+---------+---------+----------------------------+',
    '| add_sub | 1       | READY                      |',
    '| broken  | 1       | UNAVAILABLE (reason below) |',
    '| broken  | 2       | UNAVAILABLE (reason below) |',
    '| empty   | -       | UNAVAILABLE (reason below) |',
    '| loading | 1       | LOADING                    |',
    '+---------+---------+----------------------------+',
    `broken: ${LONG_REASON}`,
    'empty: no version directory',
  ]);
});

test('all ready: the table alone, as tritonserver prints it', () => {
  assert.equal(
    formatModelTable([{ name: 'my_model', state: 'READY', versions: [1], reason: '' }]),
    [
      '+----------+---------+--------+',
      '| Model    | Version | Status |',
      '+----------+---------+--------+',
      '| my_model | 1       | READY  |',
      '+----------+---------+--------+',
    ].join('\n'),
  );
});

test('herd serve with a model that fails to load: a narrow table, then the reason', async () => {
  const repository = mkdtempSync(join(tmpdir(), 'herd-table-'));
  cpSync(resolve('test/fixtures/slow_repository/slow_echo'), join(repository, 'slow_echo'), { recursive: true });
  mkdirSync(join(repository, 'broken', '1'), { recursive: true });
  writeFileSync(
    join(repository, 'broken', 'config.pbtxt'),
    'name: "broken"\nbackend: "onnxruntime"\nmax_batch_size: 0\ninput [ { name: "X", data_type: TYPE_FP32, dims: [ 1 ] } ]\noutput [ { name: "Y", data_type: TYPE_FP32, dims: [ 1 ] } ]\n',
  );
  writeFileSync(join(repository, 'broken', '1', 'model.onnx'), 'this is not an ONNX model');
  const child = spawn(
    process.execPath,
    [
      resolve('bin/herd.mjs'),
      'serve',
      '--model-repository',
      repository,
      '--http-port',
      '0',
      '--grpc-port',
      '0',
      '--metrics-port',
      '0',
      '--host',
      '127.0.0.1',
      '--strict-readiness',
      'false',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  const exited = new Promise((r) => child.on('exit', r));
  try {
    const end = Date.now() + 30_000;
    while (!/Started HTTPService/.test(stdout) && child.exitCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const lines = stdout.split('\n');
    const first = lines.findIndex((l) => l.startsWith('+--'));
    assert.ok(first >= 0, stdout);
    const table = lines.slice(first, first + 6);
    assert.match(table[3] as string, /^\| broken +\| - +\| UNAVAILABLE \(reason below\) \|$/);
    assert.match(table[4] as string, /^\| slow_echo +\| 1 +\| READY +\|$/);
    assert.ok(
      table.every((l) => l.length <= 60),
      table.join('\n'),
    );
    assert.match(lines[first + 6] as string, /^broken: .*model\.onnx/);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(repository, { recursive: true, force: true });
  }
});
