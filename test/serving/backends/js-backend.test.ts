// The `js` backend end to end against the model files in test/fixtures/js_models and the example
// token_counter: module forms, args, request helpers, validation of what models return, reloads.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { countTokens, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { HerdError } from '../../../src/core/errors.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import type { Backend, ExecutionMarks, InferenceRequest, InferenceResult } from '../../../src/serving/backends/backend.ts';
import { jsBackend } from '../../../src/serving/backends/js/js-backend.ts';
import { createError, createTensor, decodeBytes, decodeStrings, encodeBytes, modelHelpers, type ModelErrorCode } from '../../../src/serving/backends/js/model-api.ts';
import type { ConfigDataType, ModelConfig } from '../../../src/serving/model-config/model-config.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/js_models/', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../../examples/model_repository/', import.meta.url));

type Io = [name: string, dataType: ConfigDataType, dims: number[]];

/** A complete ModelConfig with Triton's defaults; the fixtures have no config.pbtxt. */
function makeConfig(name: string, maxBatchSize: number, inputs: Io[], outputs: Io[], defaultModelFilename = ''): ModelConfig {
  return {
    name,
    platform: '',
    backend: 'js',
    runtime: '',
    version_policy: { latest: { num_versions: 1 } },
    max_batch_size: maxBatchSize,
    input: inputs.map(([n, data_type, dims]) => ({
      name: n,
      data_type,
      dims,
      format: 'FORMAT_NONE',
      is_shape_tensor: false,
      is_non_linear_format_io: false,
      allow_ragged_batch: false,
      optional: false,
    })),
    output: outputs.map(([n, data_type, dims]) => ({
      name: n,
      data_type,
      dims,
      label_filename: '',
      is_shape_tensor: false,
      is_non_linear_format_io: false,
    })),
    batch_input: [],
    batch_output: [],
    instance_group: [],
    default_model_filename: defaultModelFilename,
    cc_model_filenames: {},
    metric_tags: {},
    parameters: {},
    model_warmup: [],
  };
}

const CONFIGS = {
  add_sub: makeConfig(
    'add_sub',
    8,
    [
      ['INPUT0', 'TYPE_FP32', [4]],
      ['INPUT1', 'TYPE_FP32', [4]],
    ],
    [
      ['OUTPUT0', 'TYPE_FP32', [4]],
      ['OUTPUT1', 'TYPE_FP32', [4]],
    ],
  ),
  upper_class: makeConfig('upper_class', 0, [['TEXT', 'TYPE_STRING', [-1]]], [['UPPER', 'TYPE_STRING', [-1]]]),
  object_default: makeConfig('object_default', 8, [['IN', 'TYPE_FP32', [-1]]], [['COUNT', 'TYPE_INT64', [1]]]),
  throwing: makeConfig('throwing', 8, [['IN', 'TYPE_INT32', [1]]], [['OUT', 'TYPE_INT32', [1]]]),
  wrong_count: makeConfig('wrong_count', 8, [['IN', 'TYPE_INT32', [1]]], [['OUT', 'TYPE_INT32', [1]]]),
  bad_output: makeConfig('bad_output', 8, [['IN', 'TYPE_INT32', [2]]], [['OUT', 'TYPE_FP32', [2]]]),
  custom_filename: makeConfig('custom_filename', 8, [['IN', 'TYPE_INT32', [1]]], [['OUT', 'TYPE_INT32', [1]]], 'entry.mjs'),
  token_counter: makeConfig('token_counter', 64, [['text_input', 'TYPE_STRING', [1]]], [['token_count', 'TYPE_INT32', [1]]]),
};

const loaded: Backend[] = [];
after(async () => {
  await Promise.allSettled(loaded.map((b) => b.unload()));
});

async function load(config: ModelConfig, options: { modelPath?: string; instanceName?: string } = {}): Promise<Backend> {
  const modelPath = options.modelPath ?? join(FIXTURES, config.name);
  const backend = await jsBackend.load({
    config,
    modelPath,
    versionPath: join(modelPath, '1'),
    version: 1,
    instanceName: options.instanceName ?? `${config.name}_0`,
    instanceKind: 'KIND_CPU',
  });
  loaded.push(backend);
  return backend;
}

function request(inputs: Tensor[], extra: Partial<InferenceRequest> = {}): InferenceRequest {
  return { id: '', modelName: 'm', modelVersion: 1, inputs, requestedOutputs: [], parameters: {}, ...extra };
}

function int32Request(batch: number, parameters: InferenceRequest['parameters'] = {}, name = 'IN'): InferenceRequest {
  return request([createTensor(name, 'INT32', [batch, 1], new Array(batch).fill(1))], { parameters });
}

function ok(result: InferenceResult): Tensor[] {
  if (!result.ok) assert.fail(`expected success, got ${result.error.code}: ${result.error.message}`);
  return result.outputs;
}

function failed(result: InferenceResult): HerdError {
  if (result.ok) assert.fail('expected a per-request error');
  return result.error;
}

async function rejects(promise: Promise<unknown>, code: string, ...fragments: string[]): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof HerdError, `not a HerdError: ${String(err)}`);
    assert.equal(err.code, code, err.message);
    for (const f of fragments) assert.ok(err.message.includes(f), `'${err.message}' lacks '${f}'`);
    return true;
  });
}

describe('js backend: good models', () => {
  it('is registered under the name js', () => {
    assert.equal(jsBackend.name, 'js');
  });

  it('runs a named-export model over a batch and passes Triton-style args', async () => {
    const backend = await load(CONFIGS.add_sub);
    const a = (batch: number, base: number) =>
      createTensor(
        'INPUT0',
        'FP32',
        [batch, 4],
        Array.from({ length: batch * 4 }, (_, i) => base + i),
      );
    const b = (batch: number) => createTensor('INPUT1', 'FP32', [batch, 4], new Array(batch * 4).fill(1));
    const marks: ExecutionMarks = {};
    const before = process.hrtime.bigint();
    const results = await backend.execute(
      [
        request([a(1, 0), b(1)], { id: 'r1', parameters: { echo: 'hi' } }),
        request([a(2, 10), b(2)], { id: 'r2' }),
        request([a(3, 20), b(3)], { id: 'r3', requestedOutputs: ['OUTPUT1'] }),
      ],
      marks,
    );
    assert.equal(results.length, 3);

    const [first, second, third] = results;
    const [sum, diff] = ok(first);
    assert.deepEqual([sum.name, sum.datatype, sum.shape], ['OUTPUT0', 'FP32', [1, 4]]);
    assert.deepEqual(Array.from(sum.data as Float32Array), [1, 2, 3, 4]);
    assert.deepEqual(Array.from(diff.data as Float32Array), [-1, 0, 1, 2]);
    assert.deepEqual(ok(second)[0].shape, [2, 4]);
    assert.deepEqual(
      ok(third).map((t) => t.name),
      ['OUTPUT1'],
      'only the requested output is returned',
    );

    assert.ok(first.ok && first.parameters);
    assert.deepEqual(first.parameters, {
      executions: 1,
      batch_requests: 3,
      instance: 'add_sub_0',
      version: '1',
      kind: 'CPU',
      repository: join(FIXTURES, 'add_sub'),
      config_name: 'add_sub',
      requested: 'OUTPUT0,OUTPUT1',
      request_id: 'r1',
      echo: 'hi',
    });
    assert.ok(third.ok && third.parameters?.requested === 'OUTPUT1');

    assert.ok(marks.inputEnd !== undefined && marks.inferEnd !== undefined);
    assert.ok(before <= marks.inputEnd && marks.inputEnd <= marks.inferEnd);
  });

  it('gives every instance its own module state and calls finalize on unload', async () => {
    const one = await load(CONFIGS.add_sub, { instanceName: 'add_sub_0_1' });
    const two = await load(CONFIGS.add_sub, { instanceName: 'add_sub_0_2' });
    const call = (backend: Backend) => backend.execute([request([createTensor('INPUT0', 'FP32', [1, 4], [1, 2, 3, 4]), createTensor('INPUT1', 'FP32', [1, 4], [0, 0, 0, 0])])]);
    await call(one);
    await call(one);
    const [third] = await call(one);
    const [firstOfTwo] = await call(two);
    assert.ok(third.ok && firstOfTwo.ok);
    assert.equal(third.parameters?.executions, 3);
    assert.equal(firstOfTwo.parameters?.executions, 1);

    await one.unload();
    await one.unload();
    const finalized = (globalThis as { __herdFinalized?: string[] }).__herdFinalized ?? [];
    assert.deepEqual(
      finalized.filter((n) => n === 'add_sub_0_1'),
      ['add_sub_0_1'],
      'finalize runs once',
    );
    await rejects(call(one), 'UNAVAILABLE', 'add_sub/1/model.mjs');
    assert.ok((await call(two))[0].ok, 'the other instance is untouched');
  });

  it('unloads cleanly while a batch is still running', async () => {
    const backend = await load(CONFIGS.upper_class, { instanceName: 'upper_wait' });
    const running = backend.execute([request([createTensor('TEXT', 'BYTES', [1], ['x'])])]);
    await backend.unload();
    assert.ok((await running)[0].ok);
  });

  it('instantiates a default-exported class with async initialize and execute (non-batching, BYTES)', async () => {
    const backend = await load(CONFIGS.upper_class);
    const [r1, r2] = await backend.execute([request([createTensor('TEXT', 'BYTES', [3], ['hello', 'straße', '你好'])]), request([createTensor('TEXT', 'BYTES', [0], [])])]);
    const [upper] = ok(r1);
    assert.deepEqual([upper.name, upper.datatype, upper.shape], ['UPPER', 'BYTES', [3]]);
    assert.deepEqual(decodeStrings(upper), ['HELLO', 'STRASSE', '你好']);
    assert.deepEqual(ok(r2)[0].shape, [0]);
  });

  it('uses a default-exported object found as model.js', async () => {
    const backend = await load(CONFIGS.object_default);
    const [result] = await backend.execute([request([createTensor('IN', 'FP32', [2, 3], [1, 2, 3, 4, 5, 6])])]);
    const [count] = ok(result);
    assert.equal(count.datatype, 'INT64');
    assert.deepEqual(Array.from(count.data as BigInt64Array), [3n, 3n]);
  });

  it('loads the file named by default_model_filename', async () => {
    const backend = await load(CONFIGS.custom_filename);
    const [result] = await backend.execute([int32Request(2)]);
    assert.deepEqual(ok(result)[0].shape, [2, 1]);
  });
});

describe('js backend: load failures', () => {
  it('reports a missing model file as NOT_FOUND, naming what it looked for', async () => {
    const config = { ...CONFIGS.add_sub, name: 'nothing_here' };
    const empty = mkdtempSync(join(tmpdir(), 'herd-js-'));
    mkdirSync(join(empty, '1'));
    try {
      await rejects(load(config, { modelPath: empty }), 'NOT_FOUND', "'nothing_here'", 'model.mjs, model.js');
      await rejects(load({ ...CONFIGS.custom_filename, default_model_filename: 'other.mjs' }), 'NOT_FOUND', 'other.mjs');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('rejects a module without execute()', async () => {
    await rejects(load({ ...CONFIGS.add_sub, name: 'no_execute' }), 'INVALID_ARG', 'no_execute/1/model.mjs', 'exports no execute');
  });

  it('fails the load when initialize() throws or the import fails', async () => {
    await rejects(load({ ...CONFIGS.add_sub, name: 'init_throws' }), 'INTERNAL', 'init_throws/1/model.mjs', 'initialize() failed', 'missing weights file');
    await rejects(load({ ...CONFIGS.add_sub, name: 'import_error' }), 'INTERNAL', 'import_error/1/model.mjs', 'failed to import', 'herd-no-such-package-for-tests');
  });
});

describe('js backend: misbehaving models', () => {
  it('turns a thrown exception into an INTERNAL error for every request of the batch', async () => {
    const backend = await load(CONFIGS.throwing);
    const results = await backend.execute([int32Request(1, { mode: 'throw' }), int32Request(2)]);
    assert.equal(results.length, 2);
    for (const r of results) {
      const error = failed(r);
      assert.equal(error.code, 'INTERNAL');
      assert.match(error.message, /^js model throwing\/1\/model\.mjs: execute\(\) threw TypeError: kaboom$/);
    }
    assert.match(failed((await backend.execute([int32Request(1, { mode: 'throw_string' })]))[0]).message, /threw plain string thrown$/);
    const bad = failed((await backend.execute([int32Request(1, { mode: 'bad_tensor' })]))[0]);
    assert.equal(bad.code, 'INTERNAL');
    assert.ok(bad.message.includes('throwing/1/model.mjs') && bad.message.includes("createTensor('OUT')"), bad.message);
    // The instance keeps working after its model threw.
    assert.ok((await backend.execute([int32Request(1)]))[0].ok);
  });

  it('keeps the code of an error made with herd.createError', async () => {
    const backend = await load(CONFIGS.throwing);
    const [result] = await backend.execute([int32Request(1, { mode: 'throw_invalid' })]);
    const error = failed(result);
    assert.equal(error.code, 'INVALID_ARG');
    assert.equal(error.message, 'text must not be empty');
  });

  it('passes per-request errors through and still answers the good requests', async () => {
    const backend = await load(CONFIGS.throwing);
    const [good, asString, coded, asError] = await backend.execute([
      int32Request(2),
      int32Request(1, { fail: 'string' }),
      int32Request(1, { fail: 'coded' }),
      int32Request(1, { fail: 'error' }),
    ]);
    assert.deepEqual(Array.from(ok(good)[0].data as Int32Array), [7, 7]);
    assert.deepEqual([failed(asString).code, failed(asString).message], ['INTERNAL', 'cannot handle this one']);
    assert.deepEqual([failed(coded).code, failed(coded).message], ['UNAVAILABLE', 'try later']);
    assert.deepEqual([failed(asError).code, failed(asError).message], ['INTERNAL', 'out of range']);
  });

  it('fails the whole batch when the number of responses is wrong', async () => {
    const backend = await load(CONFIGS.wrong_count);
    await rejects(backend.execute([int32Request(1), int32Request(1)]), 'INTERNAL', 'wrong_count/1/model.mjs', 'returned 1 responses for 2 requests');
    await rejects(backend.execute([int32Request(1, { mode: 'not_array' })]), 'INTERNAL', 'wrong_count/1/model.mjs', 'not an array');
  });

  const badCases: [string, string][] = [
    ['unknown_name', "output 'NOPE' is not in the model config (outputs: OUT)"],
    ['wrong_datatype', "output 'OUT' has datatype FP64, config says FP32 (TYPE_FP32)"],
    ['length_mismatch', "output 'OUT' has shape [2,3] (6 elements) but 4 data elements"],
    ['wrong_rank', "output 'OUT' has shape [4], config expects [-1,2] (batch dim first)"],
    ['wrong_dim', "output 'OUT' has shape [4,1], config expects [-1,2]"],
    ['wrong_batch', "output 'OUT' has batch size 3 but the request has batch size 2"],
    ['plain_array', "output 'OUT' is FP32, so its data must be a Float32Array, got an array"],
    ['typed_array_kind', "output 'OUT' is FP32, so its data must be a Float32Array, got Float64Array"],
    ['duplicate', "output 'OUT' is returned twice"],
    ['missing', "requested output 'OUT' is missing from the response"],
    ['not_object', 'response is number, not { outputs } or { error }'],
    ['no_outputs', 'response has neither an outputs array nor an error'],
    ['not_tensor', 'outputs[0] is string, not a tensor'],
    ['bad_params', "response parameter 'when' is a Date"],
  ];
  for (const [name, message] of badCases) {
    it(`reports a bad response (${name}) on that request only, naming model and output`, async () => {
      const backend = await load(CONFIGS.bad_output);
      const input = (batch: number) =>
        createTensor(
          'IN',
          'INT32',
          [batch, 2],
          Array.from({ length: batch * 2 }, (_, i) => i),
        );
      const [good, bad] = await backend.execute([request([input(1)]), request([input(2)], { parameters: { case: name } })]);
      assert.deepEqual(Array.from(ok(good)[0].data as Float32Array), [0, 0.5]);
      const error = failed(bad);
      assert.equal(error.code, 'INTERNAL');
      assert.ok(error.message.startsWith('js model bad_output/1/model.mjs: '), error.message);
      assert.ok(error.message.includes(message), `'${error.message}' lacks '${message}'`);
    });
  }
});

describe('js backend: reloads', () => {
  it('imports a changed model file afresh while older instances keep their code', async () => {
    const root = mkdtempSync(join(tmpdir(), 'herd-js-reload-'));
    const modelPath = join(root, 'custom_filename');
    cpSync(join(FIXTURES, 'custom_filename'), modelPath, { recursive: true });
    const config = { ...CONFIGS.custom_filename, default_model_filename: 'model.mjs' };
    const write = (value: number) =>
      writeFileSync(
        join(modelPath, '1', 'model.mjs'),
        `export function execute(rs) { return rs.map(() => ({ outputs: [{ name: 'OUT', datatype: 'INT32', shape: [1, 1], data: Int32Array.of(${value}) }] })); }\n`,
      );
    try {
      write(1);
      const before = await load(config, { modelPath });
      write(2);
      const after = await load(config, { modelPath });
      const value = async (b: Backend) => (ok((await b.execute([int32Request(1)]))[0])[0].data as Int32Array)[0];
      assert.equal(await value(before), 1);
      assert.equal(await value(after), 2);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('model helpers (args.herd)', () => {
  const throwsInternal = (fn: () => unknown, fragment: string) =>
    assert.throws(fn, (err: unknown) => err instanceof HerdError && err.code === 'INTERNAL' && err.message.includes(fragment));

  it("createTensor converts plain values to the datatype's typed array", () => {
    assert.ok(createTensor('a', 'INT32', [2], [1, -2]).data instanceof Int32Array);
    assert.deepEqual(Array.from(createTensor('b', 'BOOL', [3], [true, false, 1]).data as Uint8Array), [1, 0, 1]);
    assert.deepEqual(Array.from(createTensor('c', 'UINT64', [2], [1, 2n ** 64n - 1n]).data as BigUint64Array), [1n, 2n ** 64n - 1n]);
    assert.deepEqual(decodeStrings(createTensor('d', 'BYTES', [2], ['x', encodeBytes('é')])), ['x', 'é']);
    const own = new Float32Array(4);
    assert.equal(createTensor('e', 'FP32', [2, 2], own).data, own, 'a typed array of the right kind is used as is');
    assert.deepEqual(createTensor('f', 'FP32', [], [1]).shape, []);
  });

  it('createTensor refuses what a typed array would silently wrap, truncate or mis-size', () => {
    throwsInternal(() => createTensor('t', 'INT32', [2, 2], [1, 2, 3]), "createTensor('t'): shape [2,2] needs 4 elements, data has 3");
    throwsInternal(() => createTensor('t', 'UINT8', [1], [256]), 'not an integer in [0, 255]');
    throwsInternal(() => createTensor('t', 'INT32', [1], [1.5]), 'not an integer');
    throwsInternal(() => createTensor('t', 'INT64', [1], [2n ** 63n]), 'not an integer in');
    throwsInternal(() => createTensor('t', 'BOOL', [1], [2]), 'not a boolean or 0/1');
    throwsInternal(() => createTensor('t', 'FP32', [1], new Float64Array(1)), 'FP32 needs a Float32Array, got Float64Array');
    throwsInternal(() => createTensor('t', 'FP16', [1], [1]), 'raw bits as a Uint16Array');
    throwsInternal(() => createTensor('t', 'BYTES', [1], [3] as unknown as string[]), 'BYTES element 0 is number');
    throwsInternal(() => createTensor('t', 'FP32', [-1], []), 'non-negative integers');
  });

  it('encodes, decodes and makes coded errors', () => {
    assert.equal(decodeBytes(encodeBytes('你好, world')), '你好, world');
    throwsInternal(() => decodeStrings(createTensor('n', 'INT8', [1], [1])), "tensor 'n' is INT8, not BYTES");
    const error = createError('NOT_FOUND', 'no such user');
    assert.ok(error instanceof HerdError && error.code === 'NOT_FOUND' && error.message === 'no such user');
    throwsInternal(() => createError('RATE_LIMITED' as ModelErrorCode, 'x'), "unknown code 'RATE_LIMITED'");
  });

  it("loadTokenizer hands out Herd's gpt-tokenizer, special tokens as ordinary text", async () => {
    const tokenizer = await modelHelpers.loadTokenizer();
    assert.equal(tokenizer.encoding, 'o200k_base');
    assert.equal(await modelHelpers.loadTokenizer('o200k_base'), tokenizer, 'loaded once, shared');
    const text = 'Hello <|endoftext|> 世界';
    assert.deepEqual(tokenizer.encode(text), encode(text, { disallowedSpecial: new Set() }));
    assert.equal(tokenizer.countTokens(text), tokenizer.encode(text).length);
    assert.equal(tokenizer.decode(tokenizer.encode(text)), text);
    const cl100k = await modelHelpers.loadTokenizer('cl100k_base');
    assert.equal(cl100k.encoding, 'cl100k_base');
    assert.ok(cl100k.countTokens('Triton Inference Server 部署') > 0);
    await assert.rejects(
      modelHelpers.loadTokenizer('p50k' as 'o200k_base'),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && /unknown encoding 'p50k'; use one of o200k_base, cl100k_base/.test(err.message),
    );
  });
});

describe('token_counter example (o200k_base)', () => {
  const ordinary = { disallowedSpecial: new Set<string>() };
  const texts = [
    'Hello, world!',
    '',
    '通过 HolySheep AI（汇率¥1=$1，无损结算），同样是100万Token，费用直接是：¥8、¥15、¥2.50、¥0.42。',
    'Triton Inference Server 部署多模型推理实战',
    'emoji 🚀🔥 and accents: naïve café',
    'text that spells <|endoftext|> counts as plain characters',
    'function add(a, b) {\n  return a + b;\n}\n'.repeat(20),
  ];

  it('counts tokens exactly as gpt-tokenizer does, over a batch of several requests', async () => {
    const backend = await load(CONFIGS.token_counter, { modelPath: join(EXAMPLES, 'token_counter') });
    const groups = [texts.slice(0, 3), texts.slice(3, 4), texts.slice(4)];
    const results = await backend.execute(groups.map((g) => request([createTensor('text_input', 'BYTES', [g.length, 1], g)])));
    assert.equal(results.length, groups.length);
    results.forEach((result, i) => {
      const [counts] = ok(result);
      assert.deepEqual([counts.name, counts.datatype, counts.shape], ['token_count', 'INT32', [groups[i].length, 1]]);
      assert.deepEqual(
        Array.from(counts.data as Int32Array),
        groups[i].map((t) => countTokens(t, ordinary)),
      );
    });
    const [first] = results;
    assert.ok(first.ok);
    assert.equal((first.outputs[0].data as Int32Array)[1], 0, 'the empty string has no tokens');
    assert.equal((first.outputs[0].data as Int32Array)[0], 4, "'Hello, world!' is 4 o200k tokens");
  });

  it('handles a full batch of 64', async () => {
    const backend = await load(CONFIGS.token_counter, { modelPath: join(EXAMPLES, 'token_counter') });
    const batch = Array.from({ length: 64 }, (_, i) => `request number ${i} 第${i}个请求`);
    const [result] = await backend.execute([request([createTensor('text_input', 'BYTES', [64, 1], batch)])]);
    assert.deepEqual(
      Array.from(ok(result)[0].data as Int32Array),
      batch.map((t) => countTokens(t)),
    );
  });
});
