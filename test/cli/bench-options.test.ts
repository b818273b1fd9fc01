// `herd bench` flags and the tensors it builds: perf_analyzer's range syntax, clear one-line errors
// for bad values, and inputs shaped from model metadata with -b and --shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import { levelAt, parseConcurrencyRange, parseRequestRateRange, type LoadRange } from '../../src/cli/bench/parse-range.ts';
import { parseBenchOptions, parseShapes, type BenchFlags } from '../../src/cli/bench/parse-bench-options.ts';
import { createBenchInputs, type BenchInputSpec } from '../../src/cli/bench/create-bench-inputs.ts';
import { createSeededRandom } from '../../src/core/seeded-random.ts';
import type { ModelConfigDocument, ModelMetadata } from '../../src/client/kserve-types.ts';

const levels = (range: LoadRange) => {
  const out: number[] = [];
  for (let i = 0; ; i++) {
    const level = levelAt(range, i);
    if (level === undefined || i > 50) return out;
    out.push(level);
  }
};

const isInvalid = (pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && pattern.test(err.message);

test('ranges: start[:end[:step]] with perf_analyzer defaults', () => {
  assert.deepEqual(parseConcurrencyRange('4'), { start: 4, end: 4, step: 1 });
  assert.deepEqual(parseConcurrencyRange('1:8'), { start: 1, end: 8, step: 1 });
  assert.deepEqual(parseConcurrencyRange(' 2:8:3 '), { start: 2, end: 8, step: 3 });
  assert.deepEqual(levels(parseConcurrencyRange('2:8:3')), [2, 5, 8]);
  assert.deepEqual(levels(parseConcurrencyRange('1:4:2')), [1, 3]);
  assert.deepEqual(levels(parseRequestRateRange('0.1:0.3:0.1')), [0.1, 0.2, 0.3], 'float steps do not drift');
  assert.deepEqual(levels(parseRequestRateRange('100:250:50')), [100, 150, 200, 250]);
  assert.deepEqual(parseConcurrencyRange('1:0:2'), { start: 1, end: 0, step: 2 }, 'end 0: open range');
  assert.equal(levelAt({ start: 1, end: 0, step: 2 }, 40), 81);
});

test('bad ranges are clear errors naming the flag and the expected form', () => {
  const bad: [string, RegExp][] = [
    ['', /start is empty/],
    ['a:b', /start 'a' is not a whole number/],
    ['1.5', /start '1.5' is not a whole number/],
    ['0:4', /start must be greater than 0/],
    ['4:2', /end 2 is below start 4/],
    ['1:4:0', /step must be greater than 0/],
    ['1:2:3:4', /4 fields/],
    ['1::2', /end is empty/],
    ['-1:4', /start '-1' is not a whole number/],
  ];
  for (const [text, pattern] of bad) {
    assert.throws(
      () => parseConcurrencyRange(text),
      (err: unknown) =>
        isInvalid(pattern)(err) &&
        (err as Error).message.startsWith(`--concurrency-range '${text}': `) &&
        (err as Error).message.endsWith('expected start[:end[:step]], e.g. 1:8:2'),
      text,
    );
  }
  assert.throws(() => parseRequestRateRange('fast'), isInvalid(/^--request-rate-range 'fast': start 'fast' is not a number/));
  assert.throws(() => parseRequestRateRange('10:5'), isInvalid(/end 5 is below start 10/));
});

test("options: defaults are perf_analyzer's, with binary tensors by default", () => {
  const o = parseBenchOptions({ modelName: 'm' });
  assert.deepEqual(
    [o.url, o.batchSize, o.mode, o.range, o.binary, o.measurementIntervalMs, o.stabilityPercentage, o.maxTrials, o.inputData, o.percentile, o.csvFile, o.version],
    ['localhost:8000', 1, 'concurrency', { start: 1, end: 1, step: 1 }, true, 5000, 10, 10, 'random', undefined, undefined, undefined],
  );
  const r = parseBenchOptions({
    modelName: 'm',
    requestRateRange: '50:100:50',
    json: true,
    percentile: '95',
    filename: 'out.csv',
    modelVersion: '2',
    requestDistribution: 'poisson',
  });
  assert.deepEqual([r.mode, r.binary, r.percentile, r.csvFile, r.version, r.distribution], ['request-rate', false, 95, 'out.csv', '2', 'poisson']);
});

test('bad options are one INVALID_ARG (or UNSUPPORTED) line each', () => {
  const cases: [BenchFlags, RegExp][] = [
    [{}, /-m\/--model-name is required/],
    [{ modelName: 'm', binary: true, json: true }, /--binary and --json are exclusive/],
    [{ modelName: 'm', concurrencyRange: '1', requestRateRange: '1' }, /are exclusive/],
    [{ modelName: 'm', concurrencyRange: '1:0' }, /needs -l\/--latency-threshold/],
    [{ modelName: 'm', batchSize: '0' }, /-b\/--batch-size must be at least 1, got 0/],
    [{ modelName: 'm', batchSize: 'two' }, /-b\/--batch-size must be a whole number, got 'two'/],
    [{ modelName: 'm', measurementInterval: '1.5' }, /-p\/--measurement-interval must be a whole number/],
    [{ modelName: 'm', stabilityPercentage: '0' }, /must be greater than 0/],
    [{ modelName: 'm', percentile: '100' }, /--percentile must be at most 99/],
    [{ modelName: 'm', inputData: 'file.json' }, /--input-data must be random or zero/],
    [{ modelName: 'm', requestRateRange: '5', requestDistribution: 'uniform' }, /constant or poisson/],
    [{ modelName: 'm', protocol: 'tcp' }, /must be http or grpc/],
    [{ modelName: 'm', protocol: 'grpc', json: true }, /--json applies to HTTP only/],
    [{ modelName: 'm', sharedMemory: 'posix' }, /--shared-memory must be none, system or cuda/],
    [{ modelName: 'm', outputSharedMemorySize: '0' }, /--output-shared-memory-size must be at least 1/],
  ];
  for (const [flags, pattern] of cases) assert.throws(() => parseBenchOptions(flags), isInvalid(pattern), pattern.source);
  assert.throws(
    () => parseBenchOptions({ modelName: 'm', sharedMemory: 'cuda' }),
    (err: unknown) => err instanceof HerdError && err.code === 'UNSUPPORTED' && /CPU-only/.test(err.message),
  );
  const grpc = parseBenchOptions({ modelName: 'm', protocol: 'GRPC', sharedMemory: 'system' });
  assert.deepEqual([grpc.protocol, grpc.url, grpc.sharedMemory, grpc.outputSharedMemorySize], ['grpc', 'localhost:8001', 'system', 102400]);
  assert.doesNotThrow(() => parseBenchOptions({ modelName: 'm', concurrencyRange: '1:0', latencyThreshold: '50' }));
});

test('--shape NAME:dims, names may contain colons', () => {
  assert.deepEqual(
    [...parseShapes(['IN:3,224,224', 'ns:x:2'])],
    [
      ['IN', [3, 224, 224]],
      ['ns:x', [2]],
    ],
  );
  assert.throws(() => parseShapes(['IN']), isInvalid(/expected NAME:d1,d2/));
  assert.throws(() => parseShapes(['IN:3,0']), isInvalid(/dim '0' is not a whole number >= 1/));
  assert.throws(() => parseShapes(['IN:2', 'IN:3']), isInvalid(/twice/));
});

const metadata: ModelMetadata = {
  name: 'm',
  platform: 'js',
  inputs: [
    { name: 'IMAGE', datatype: 'FP16', shape: [-1, 3, -1] },
    { name: 'TEXT', datatype: 'BYTES', shape: [-1, 2] },
    { name: 'IDS', datatype: 'INT64', shape: [-1, 4] },
    { name: 'MASK', datatype: 'BOOL', shape: [-1, 4] },
  ],
  outputs: [],
};
const config: ModelConfigDocument = {
  name: 'm',
  max_batch_size: 8,
  input: metadata.inputs.map((i) => ({ name: i.name, data_type: 'TYPE_X', dims: i.shape.slice(1) })),
  output: [],
};
const spec = (over: Partial<BenchInputSpec> = {}): BenchInputSpec => ({
  metadata,
  config,
  batchSize: 2,
  shapes: new Map([['IMAGE', [3, 5]]]),
  inputData: 'random',
  stringLength: 6,
  random: createSeededRandom(1),
  ...over,
});

test('inputs: batch dim from -b, variable dims from --shape, data of the right type', () => {
  const tensors = createBenchInputs(spec());
  assert.deepEqual(
    tensors.map((t) => [t.name, t.datatype, t.shape]),
    [
      ['IMAGE', 'FP16', [2, 3, 5]],
      ['TEXT', 'BYTES', [2, 2]],
      ['IDS', 'INT64', [2, 4]],
      ['MASK', 'BOOL', [2, 4]],
    ],
  );
  const [image, text, ids, mask] = tensors;
  assert.ok(image?.data instanceof Uint16Array && image.data.length === 30);
  assert.ok(Array.isArray(text?.data) && text.data.every((s) => s.length === 6 && /^[A-Za-z0-9 ]+$/.test(Buffer.from(s).toString())));
  assert.ok(ids?.data instanceof BigInt64Array && Array.from(ids.data).every((v) => v >= 0n && v < 100n));
  assert.ok(mask?.data instanceof Uint8Array && Array.from(mask.data).every((v) => v === 0 || v === 1));
  const again = createBenchInputs(spec());
  assert.deepEqual(Array.from(again[0]?.data as Uint16Array), Array.from(image.data), 'seeded: the same bytes every run');
  const zero = createBenchInputs(spec({ inputData: 'zero' }));
  assert.ok(Array.from(zero[0]?.data as Uint16Array).every((v) => v === 0));
  assert.equal(Buffer.from((zero[1]!.data as Uint8Array[])[0] as Uint8Array).toString(), '000000');
});

test('inputs: clear errors for missing shapes, bad batch sizes and unsupported models', () => {
  assert.throws(() => createBenchInputs(spec({ shapes: new Map() })), isInvalid(/input 'IMAGE' has variable dims \[3,-1\]: give its shape with --shape IMAGE:3,N/));
  assert.throws(() => createBenchInputs(spec({ shapes: new Map([['IMAGE', [4, 5]]]) })), isInvalid(/dim 0 is fixed at 3/));
  assert.throws(() => createBenchInputs(spec({ shapes: new Map([['IMAGE', [5]]]) })), isInvalid(/has 1 dims but input 'IMAGE' has 2/));
  assert.throws(() => createBenchInputs(spec({ batchSize: 9 })), isInvalid(/-b 9 exceeds the max_batch_size 8/));
  const noBatch = { ...config, max_batch_size: 0 };
  const flatMeta = { ...metadata, inputs: [{ name: 'X', datatype: 'FP32', shape: [4] }] };
  assert.throws(() => createBenchInputs(spec({ metadata: flatMeta, config: noBatch, batchSize: 2, shapes: new Map() })), isInvalid(/does not support batching/));
  assert.deepEqual(createBenchInputs(spec({ metadata: flatMeta, config: noBatch, batchSize: 1, shapes: new Map() }))[0]?.shape, [4]);
  assert.throws(
    () => createBenchInputs(spec({ config: { ...config, sequence_batching: {} } })),
    (err: unknown) => err instanceof HerdError && err.code === 'UNSUPPORTED',
  );
  const optionalConfig = { ...config, input: config.input.map((i) => ({ ...i, optional: i.name === 'IMAGE' })) };
  assert.deepEqual(
    createBenchInputs(spec({ config: optionalConfig, shapes: new Map() })).map((t) => t.name),
    ['TEXT', 'IDS', 'MASK'],
    'optional inputs are left out unless shaped',
  );
});
