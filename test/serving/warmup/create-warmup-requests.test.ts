// Warmup samples as Triton's GenerateWarmupData builds them: batch_size requests of batch 1, data from
// zeros, random bytes or a file, and Triton's refusals for what cannot be built.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parsePbtxtModelConfig } from '../../../src/serving/model-config/parse-model-config.ts';
import { createWarmupSamples } from '../../../src/serving/warmup/create-warmup-requests.ts';

const versionPath = mkdtempSync(join(tmpdir(), 'herd-warmup-'));
mkdirSync(join(versionPath, 'warmup'));
writeFileSync(join(versionPath, 'warmup', 'short.bin'), Buffer.alloc(4));
writeFileSync(join(versionPath, 'warmup', 'ints.bin'), Buffer.from(Int32Array.from([7, -1, 3]).buffer));
after(() => rmSync(versionPath, { recursive: true, force: true }));

function config(maxBatchSize: number, warmup: string) {
  return parsePbtxtModelConfig(
    [
      'name: "m"',
      'backend: "js"',
      `max_batch_size: ${maxBatchSize}`,
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]',
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]',
      `model_warmup [ ${warmup} ]`,
      '',
    ].join('\n'),
    '/r/m/config.pbtxt',
    'm',
  );
}

const input = (value: string, dims = '[ 3 ]') => `inputs { key: "IN" value { data_type: TYPE_INT32 dims: ${dims} ${value} } }`;

test('batch_size requests of batch 1; count 0 runs once; batch 0 samples are skipped', () => {
  const samples = createWarmupSamples(
    config(4, `{ name: "a" batch_size: 3 ${input('zero_data: true')} }, { name: "skip" batch_size: 0 ${input('zero_data: true')} }`),
    versionPath,
    1,
  );
  assert.equal(samples.length, 1);
  const [sample] = samples;
  assert.equal(sample?.count, 1);
  assert.equal(sample?.requests.length, 3);
  assert.deepEqual(
    sample?.requests[0]?.inputs.map((t) => ({ ...t, data: [...(t.data as Int32Array)] })),
    [{ name: 'IN', datatype: 'INT32', shape: [1, 3], data: [0, 0, 0] }],
  );
});

test('a non-batching model gets the dims as they are; file data is read as raw little-endian values', () => {
  const [sample] = createWarmupSamples(config(0, `{ name: "f" batch_size: 1 count: 2 ${input('input_data_file: "ints.bin"')} }`), versionPath, 1);
  assert.equal(sample?.count, 2);
  assert.deepEqual(sample?.requests[0]?.inputs[0]?.shape, [3]);
  assert.deepEqual([...((sample?.requests[0]?.inputs[0]?.data as Int32Array | undefined) ?? [])], [7, -1, 3]);
});

test("Triton's refusals: variable dims, a short file, a missing file, a batch over the maximum", () => {
  assert.throws(
    () => createWarmupSamples(config(4, `{ name: "v" batch_size: 1 ${input('zero_data: true', '[ -1 ]')} }`), versionPath, 1),
    /warmup setting expects all variable-size dimensions are specified for input 'IN'/,
  );
  assert.throws(
    () => createWarmupSamples(config(4, `{ name: "s" batch_size: 1 ${input('input_data_file: "short.bin"')} }`), versionPath, 1),
    /warmup setting expects 12 bytes, but the data provided from short.bin only has 4 bytes/,
  );
  assert.throws(
    () => createWarmupSamples(config(4, `{ name: "n" batch_size: 1 ${input('input_data_file: "none.bin"')} }`), versionPath, 1),
    /warmup sample 'n' input 'IN': cannot read .*none\.bin/,
  );
  assert.throws(
    () => createWarmupSamples(config(2, `{ name: "b" batch_size: 3 ${input('zero_data: true')} }`), versionPath, 1),
    /warmup sample 'b' has batch_size 3, more than the model's maximum batch size 2/,
  );
  assert.throws(
    () => createWarmupSamples(config(4, `{ name: "u" batch_size: 1 inputs { key: "IN" value { data_type: TYPE_INT32 dims: [ 3 ] } } }`), versionPath, 1),
    /warmup setting expects input 'IN' to have input_data_type set/,
  );
});
