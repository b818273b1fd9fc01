// Triton's classification extension: top-k "value:index[:label]" strings, their shape, ordering,
// value formatting (std::to_string), unsupported types and label files.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DataType } from '../../src/core/datatype.ts';
import { HerdError } from '../../src/core/errors.ts';
import type { Tensor, TensorData } from '../../src/core/tensor.ts';
import { classifyTensor, formatFixed6, readLabelFile } from '../../src/serving/classification.ts';
import { readModelLabels } from '../../src/serving/repository/read-model-labels.ts';
import type { ModelConfig } from '../../src/serving/model-config/model-config.ts';

const decoder = new TextDecoder();
const strings = (t: Tensor) => (t.data as Uint8Array[]).map((b) => decoder.decode(b));
const tensor = (datatype: DataType, shape: number[], data: TensorData): Tensor => ({ name: 'out', datatype, shape, data });

function throwsHerd(fn: () => unknown, code: string, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof HerdError);
    assert.equal(err.code, code);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe('classifyTensor', () => {
  it("reproduces the protocol document's example (non-batching), with std::to_string values", () => {
    const result = classifyTensor(tensor('FP32', [4], Float32Array.of(1.1, 3.3, 0.5, 2.4)), { classCount: 2, batching: false });
    assert.deepEqual([result.name, result.datatype, result.shape], ['out', 'BYTES', [2]]);
    assert.deepEqual(strings(result), ['3.300000:1', '2.400000:3']);
    const labelled = classifyTensor(tensor('FP32', [4], Float32Array.of(1.1, 3.3, 0.5, 2.4)), {
      classCount: 2,
      batching: false,
      labels: ['index_0_label', 'index_1_label', 'index_2_label', 'index_3_label'],
    });
    assert.deepEqual(strings(labelled), ['3.300000:1:index_1_label', '2.400000:3:index_3_label']);
  });

  it('ranks each batch row on its own and shapes the result [batch, k]', () => {
    const out = tensor('FP32', [2, 3], Float32Array.of(0.1, 0.7, 0.2, 0.9, 0.05, 0.05));
    const result = classifyTensor(out, { classCount: 2, batching: true, labels: ['cat', 'dog', 'bird'] });
    assert.deepEqual(result.shape, [2, 2]);
    assert.deepEqual(strings(result), ['0.700000:1:dog', '0.200000:2:bird', '0.900000:0:cat', '0.050000:1:dog']);
  });

  it('returns min(k, classes) entries when k exceeds the class count', () => {
    const result = classifyTensor(tensor('INT32', [2, 3], Int32Array.of(1, 2, 3, 6, 5, 4)), { classCount: 10, batching: true });
    assert.deepEqual(result.shape, [2, 3]);
    assert.deepEqual(strings(result), ['3:2', '2:1', '1:0', '6:0', '5:1', '4:2']);
  });

  it('ranks a non-batching multi-dimensional output over all its elements', () => {
    const result = classifyTensor(tensor('INT16', [2, 2], Int16Array.of(4, -3, 9, 0)), { classCount: 3, batching: false });
    assert.deepEqual(result.shape, [3]);
    assert.deepEqual(strings(result), ['9:2', '4:0', '0:3']);
  });

  it('breaks ties by the lower index and ranks NaN last', () => {
    assert.deepEqual(strings(classifyTensor(tensor('INT32', [4], Int32Array.of(5, 7, 7, 1)), { classCount: 4, batching: false })), ['7:1', '7:2', '5:0', '1:3']);
    assert.deepEqual(strings(classifyTensor(tensor('FP64', [4], Float64Array.of(NaN, -Infinity, Infinity, -0)), { classCount: 4, batching: false })), [
      'inf:2',
      '-0.000000:3',
      '-inf:1',
      'nan:0',
    ]);
  });

  it('formats integers in decimal, 64-bit ones exactly', () => {
    const cases: [DataType, TensorData, string][] = [
      ['UINT8', Uint8Array.of(255), '255:0'],
      ['INT8', Int8Array.of(-128), '-128:0'],
      ['UINT32', Uint32Array.of(4294967295), '4294967295:0'],
      ['INT64', BigInt64Array.of(9007199254740993n), '9007199254740993:0'],
      ['UINT64', BigUint64Array.of(18446744073709551615n), '18446744073709551615:0'],
    ];
    for (const [datatype, data, want] of cases) {
      assert.deepEqual(strings(classifyTensor(tensor(datatype, [1], data), { classCount: 1, batching: false })), [want], datatype);
    }
    const ranked = classifyTensor(tensor('INT64', [3], BigInt64Array.of(-5n, 10n, 2n)), { classCount: 3, batching: false });
    assert.deepEqual(strings(ranked), ['10:1', '2:2', '-5:0']);
  });

  it('formats floats like printf("%f"), rounding ties to even as glibc does', () => {
    assert.equal(formatFixed6(0.0078125), '0.007812'); // toFixed(6) would give 0.007813
    assert.equal(formatFixed6(0.0234375), '0.023438');
    assert.equal(formatFixed6(Math.fround(3.3)), '3.300000');
    assert.equal(formatFixed6(1e21), '1000000000000000000000.000000');
    assert.equal(formatFixed6(-1e-9), '-0.000000');
    assert.equal(formatFixed6(5e-324), '0.000000');
    assert.equal(formatFixed6(123456.7890125), '123456.789012');
    assert.equal(formatFixed6(2.675), '2.675000');
  });

  it('adds no label suffix for a missing or empty label, and encodes labels as UTF-8', () => {
    const result = classifyTensor(tensor('UINT8', [4], Uint8Array.of(1, 2, 3, 4)), { classCount: 4, batching: false, labels: ['猫', '', 'bird'] });
    assert.deepEqual(strings(result), ['4:3', '3:2:bird', '2:1', '1:0:猫']);
  });

  it('handles an empty batch', () => {
    const result = classifyTensor(tensor('FP32', [0, 3], new Float32Array(0)), { classCount: 2, batching: true });
    assert.deepEqual(result.shape, [0, 2]);
    assert.equal(result.data.length, 0);
  });

  it("rejects the types Triton cannot classify, with Triton's message", () => {
    const cases: [DataType, TensorData][] = [
      ['BYTES', [new Uint8Array(1)]],
      ['BOOL', Uint8Array.of(1)],
      ['FP16', Uint16Array.of(1)],
      ['BF16', Uint16Array.of(1)],
    ];
    for (const [datatype, data] of cases) {
      throwsHerd(
        () => classifyTensor(tensor(datatype, [1], data), { classCount: 1, batching: false }),
        'INVALID_ARG',
        `class result not available for output due to unsupported type '${datatype}'`,
      );
    }
  });

  it('rejects a class count that is not a positive integer', () => {
    for (const classCount of [0, -1, 1.5, Number.NaN]) {
      throwsHerd(
        () => classifyTensor(tensor('FP32', [2], Float32Array.of(1, 2)), { classCount, batching: false }),
        'INVALID_ARG',
        /classification count for output 'out' must be a positive integer/,
      );
    }
  });

  it('reports data that does not fill the shape as INTERNAL', () => {
    throwsHerd(() => classifyTensor(tensor('FP32', [2, 3], Float32Array.of(1, 2)), { classCount: 1, batching: true }), 'INTERNAL', "output 'out' has shape [2,3] but 2 elements");
  });
});

describe('label files', () => {
  const root = mkdtempSync(join(tmpdir(), 'herd-labels-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(root, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads one label per line like std::getline, dropping CR and a BOM', () => {
    assert.deepEqual(readLabelFile(file('a.txt', 'cat\ndog\nbird\n')), ['cat', 'dog', 'bird']);
    assert.deepEqual(readLabelFile(file('b.txt', 'cat\ndog')), ['cat', 'dog']);
    assert.deepEqual(readLabelFile(file('c.txt', '\ufeffcat\r\n\r\nbird\r\n')), ['cat', '', 'bird']);
    assert.deepEqual(readLabelFile(file('d.txt', '')), []);
    assert.deepEqual(readLabelFile(file('e.txt', '\n')), ['']);
  });

  it('reports a missing file as NOT_FOUND', () => {
    throwsHerd(() => readLabelFile(join(root, 'nope.txt')), 'NOT_FOUND', /unable to read label file .*nope\.txt/);
  });

  it('reads every output label_filename from the model directory and refuses paths outside it', () => {
    const modelPath = join(root, 'classifier');
    mkdirSync(modelPath);
    writeFileSync(join(modelPath, 'labels.txt'), 'a\nb\n');
    const output = (name: string, label_filename: string) => ({
      name,
      data_type: 'TYPE_FP32' as const,
      dims: [2],
      label_filename,
      is_shape_tensor: false,
      is_non_linear_format_io: false,
    });
    const config = { name: 'classifier', output: [output('probs', 'labels.txt'), output('raw', '')] } as ModelConfig;
    const labels = readModelLabels(config, modelPath);
    assert.deepEqual([...labels.entries()], [['probs', ['a', 'b']]]);

    const escaping = { name: 'classifier', output: [output('probs', '../secrets.txt')] } as ModelConfig;
    throwsHerd(
      () => readModelLabels(escaping, modelPath),
      'INVALID_ARG',
      /model 'classifier': output 'probs' label_filename '\.\.\/secrets\.txt' resolves outside the model directory/,
    );
    // serving.allow_files_outside_model_dir (on-disk configs only) lets the operator share a label file.
    writeFileSync(join(root, 'secrets.txt'), 'shared\n');
    assert.deepEqual(readModelLabels(escaping, modelPath, true).get('probs'), ['shared']);
  });
});
