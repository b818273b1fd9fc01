// The load API's parameters as both transports hand them over, and Triton's refusals of wrong kinds and names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readJsonLoadParameters, readLoadParameters, validateModelName } from '../../../src/serving/repository/load-parameters.ts';

const grpcKinds = { string: 'string_param', bytes: 'bytes_param' };

test('config and files are read; nothing given is an empty request', () => {
  assert.deepEqual(readLoadParameters([], grpcKinds), {});
  const read = readLoadParameters(
    [
      ['config', { kind: 'string', value: '{}' }],
      ['file:1/model.onnx', { kind: 'bytes', value: Buffer.from([1, 2]) }],
    ],
    grpcKinds,
  );
  assert.equal(read.config, '{}');
  assert.deepEqual([...(read.files ?? [])], [['file:1/model.onnx', Buffer.from([1, 2])]]);
  assert.deepEqual([...(readJsonLoadParameters({ 'file:a': Buffer.from('hello').toString('base64') }).files ?? [])], [['file:a', Buffer.from('hello')]]);
});

test("wrong kinds and unknown names are refused with Triton's words", () => {
  assert.throws(
    () => readLoadParameters([['config', { kind: 'bytes', value: Buffer.from('{}') }]], grpcKinds),
    /^HerdError: invalid value type for load parameter 'config', expected string_param\.$/,
  );
  assert.throws(() => readLoadParameters([['file:x', { kind: 'string', value: '' }]], grpcKinds), /expected bytes_param\.$/);
  assert.throws(() => readJsonLoadParameters({ config: null }), /'config', expected a string\.$/);
  assert.throws(() => readJsonLoadParameters({ 'file:x': [1] }), /'file:x', expected a base64 string\.$/);
  assert.throws(() => readJsonLoadParameters({ Config: '{}' }), /unrecognized load parameter 'Config'\.$/);
});

test("a model name is never a path (Triton's ValidateModelName)", () => {
  validateModelName('simple');
  assert.throws(() => validateModelName('  '), /Model name cannot be empty/);
  assert.throws(() => validateModelName('..'), /must not contain path traversal characters/);
  assert.throws(() => validateModelName('a/b'), /invalid model name 'a\/b'/);
});
