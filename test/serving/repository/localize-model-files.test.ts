// The temporary model folder the load API's files build: what is written where, what Triton refuses, and that
// a refusal leaves nothing behind.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { localizeModelFiles } from '../../../src/serving/repository/localize-model-files.ts';

const temp = mkdtempSync(join(tmpdir(), 'herd-localize-test-'));
const previousTmpdir = process.env['TMPDIR'];
before(() => {
  process.env['TMPDIR'] = temp;
});
after(() => {
  if (previousTmpdir === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = previousTmpdir;
  rmSync(temp, { recursive: true, force: true });
});

const files = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v)]));

test('files land under a folder named after the model, in a temporary folder that remove() deletes', async () => {
  const localized = await localizeModelFiles('m', files({ 'file:1/model.onnx': 'onnx', 'file:1/sub/./x.txt': 'x', 'file:labels.txt': 'a\nb' }), true);
  assert.equal(localized.modelPath.startsWith(temp), true);
  assert.equal(readFileSync(join(localized.modelPath, '1', 'model.onnx'), 'utf8'), 'onnx');
  assert.equal(readFileSync(join(localized.modelPath, '1', 'sub', 'x.txt'), 'utf8'), 'x');
  assert.equal(readFileSync(join(localized.modelPath, 'labels.txt'), 'utf8'), 'a\nb');
  assert.equal(localized.redact(`could not read ${join(localized.modelPath, '1', 'model.onnx')}`), 'could not read m/1/model.onnx');
  localized.remove();
  localized.remove();
  assert.equal(existsSync(localized.modelPath), false);
  assert.deepEqual(readdirSync(temp), []);
});

test("Triton's refusals, each before or instead of leaving anything on disk", async () => {
  const refusals: [Record<string, string>, RegExp, boolean?][] = [
    [{ 'file:1/model.onnx': 'x' }, /^Load parameter 'config' must be specified for model file override$/, false],
    [{ [`file:1/${'é'.repeat(128)}`]: 'x' }, /^Invalid file parameter '1\/é{128}': File name too long \(a path component is 256 bytes, NAME_MAX is 255\)$/],
    [{ 'file:../x': 'x' }, /^Invalid file parameter 'file:..\/x' with normalized path '..\/x' must stay within model directory\.$/],
    [{ 'file:1/../../m2/x': 'x' }, /with normalized path '..\/m2\/x' must stay/],
    [{ 'file:/etc/passwd': 'x' }, /with normalized path '\/etc\/passwd' must stay/],
    [{ 'file:': 'x' }, /^Invalid file parameter 'file:' with normalized path '.' must stay within model directory\.$/],
    [{ 'file:1/a\0b': 'x' }, /the path contains a NUL character/],
    [{ 'file:1': 'x', 'file:1/model.onnx': 'x' }, /^Invalid file parameter 'file:1\/model.onnx', directory has been created as a file$/],
    [{ 'file:1/model.onnx': 'x', 'file:1': 'x' }, /^Invalid file parameter 'file:1': a directory or file of that name has been created by another file parameter$/],
  ];
  for (const [entries, message, hasConfig = true] of refusals) {
    await assert.rejects(
      localizeModelFiles('m', files(entries), hasConfig),
      (err: Error & { code: string }) => err.code === 'INVALID_ARG' && message.test(err.message),
      JSON.stringify(Object.keys(entries)),
    );
  }
  assert.deepEqual(readdirSync(temp), []);
});
