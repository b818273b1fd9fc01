// config.pbtxt and JSON configs to complete ModelConfigs: the shared test repository, Triton's
// defaults and autofill, validation errors located in the file, the JSON reader, and round trips.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { HerdError } from '../../../src/core/errors.ts';
import { convertModelConfigToJson } from '../../../src/serving/model-config/convert-model-config-to-json.ts';
import type { ModelConfig } from '../../../src/serving/model-config/model-config.ts';
import { normalizeInstanceGroups, normalizeModelConfig, parseJsonModelConfig, parsePbtxtModelConfig } from '../../../src/serving/model-config/parse-model-config.ts';
import { TRITON_MODEL_REPOSITORY } from '../../triton-testdata.ts';

const REPOSITORY = TRITON_MODEL_REPOSITORY;
const FILE = 'models/m/config.pbtxt';

function rejection(run: () => unknown): HerdError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof HerdError, `expected a HerdError, got ${String(err)}`);
    return err;
  }
  return assert.fail('expected a rejection');
}

const pbtxt = (text: string, name = 'm') => parsePbtxtModelConfig(text, FILE, name);

describe('parsePbtxtModelConfig: the shared Triton repository', () => {
  const models = readdirSync(REPOSITORY)
    .filter((name) => !name.startsWith('.'))
    .sort();
  for (const name of models) {
    it(`parses ${name}/config.pbtxt`, () => {
      const file = join(REPOSITORY, name, 'config.pbtxt');
      const config = parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, name);
      assert.equal(config.name, name);
      assert.ok(config.input.length > 0 && config.output.length > 0);
      assert.ok(config.instance_group.length > 0);
    });
  }

  it('reads densenet_onnx completely, with the defaults Triton adds', () => {
    const file = join(REPOSITORY, 'densenet_onnx', 'config.pbtxt');
    const config = parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, 'densenet_onnx');
    const expected: ModelConfig = {
      name: 'densenet_onnx',
      platform: 'onnxruntime_onnx',
      backend: 'onnxruntime',
      runtime: '',
      version_policy: { latest: { num_versions: 1 } },
      max_batch_size: 0,
      input: [
        {
          name: 'data_0',
          data_type: 'TYPE_FP32',
          format: 'FORMAT_NCHW',
          dims: [3, 224, 224],
          reshape: { shape: [1, 3, 224, 224] },
          is_shape_tensor: false,
          allow_ragged_batch: false,
          optional: false,
          is_non_linear_format_io: false,
        },
      ],
      output: [
        {
          name: 'fc6_1',
          data_type: 'TYPE_FP32',
          dims: [1000],
          reshape: { shape: [1, 1000, 1, 1] },
          label_filename: 'densenet_labels.txt',
          is_shape_tensor: false,
          is_non_linear_format_io: false,
        },
      ],
      batch_input: [],
      batch_output: [],
      optimization: {
        priority: 'PRIORITY_DEFAULT',
        input_pinned_memory: { enable: true },
        output_pinned_memory: { enable: true },
        gather_kernel_buffer_threshold: 0,
        eager_batching: false,
      },
      instance_group: [{ name: 'densenet_onnx', kind: 'KIND_CPU', count: 2, gpus: [], secondary_devices: [], profile: [], passive: false, host_policy: '' }],
      default_model_filename: 'model.onnx',
      cc_model_filenames: {},
      metric_tags: {},
      parameters: {},
      model_warmup: [],
    };
    assert.deepEqual(config, expected);
  });

  it('reads simple_dyna_sequence: sequence batcher, control inputs, parameters, named instance group', () => {
    const file = join(REPOSITORY, 'simple_dyna_sequence', 'config.pbtxt');
    const config = parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, 'simple_dyna_sequence');
    const batching = config.sequence_batching!;
    assert.equal(batching.max_sequence_idle_microseconds, 10_000_000);
    assert.deepEqual(batching.oldest, { max_candidate_sequences: 1024, preferred_batch_size: [8], max_queue_delay_microseconds: 10000, preserve_ordering: false });
    assert.deepEqual(
      batching.control_input.map((c) => [c.name, c.control[0].kind]),
      [
        ['START', 'CONTROL_SEQUENCE_START'],
        ['END', 'CONTROL_SEQUENCE_END'],
        ['READY', 'CONTROL_SEQUENCE_READY'],
        ['CORRID', 'CONTROL_SEQUENCE_CORRID'],
      ],
    );
    assert.deepEqual(batching.control_input[3].control[0], {
      kind: 'CONTROL_SEQUENCE_CORRID',
      int32_false_true: [],
      fp32_false_true: [],
      bool_false_true: [],
      data_type: 'TYPE_UINT64',
    });
    assert.deepEqual(config.parameters, { execute_delay_ms: { string_value: '3' } });
    assert.deepEqual(
      config.instance_group.map((g) => [g.name, g.kind, g.count]),
      [['simple_dyna_sequence_0', 'KIND_CPU', 2]],
    );
  });

  it('reads simple_identity (python backend): default file model.py, one CPU instance', () => {
    const file = join(REPOSITORY, 'simple_identity', 'config.pbtxt');
    const config = parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, 'simple_identity');
    assert.equal(config.platform, '');
    assert.equal(config.default_model_filename, 'model.py');
    assert.deepEqual(
      config.instance_group.map((g) => [g.name, g.kind, g.count]),
      [['simple_identity', 'KIND_CPU', 1]],
    );
  });
});

describe('Triton defaults and autofill', () => {
  it('fills backend from platform and platform from backend', () => {
    assert.equal(pbtxt('platform: "onnxruntime_onnx"').backend, 'onnxruntime');
    const config = pbtxt('backend: "onnxruntime"');
    assert.equal(config.platform, 'onnxruntime_onnx');
    assert.equal(config.default_model_filename, 'model.onnx');
    assert.equal(pbtxt('backend: "onnxruntime" default_model_filename: "other.onnx"').default_model_filename, 'other.onnx');
  });

  it('takes the name from the folder when the config has none', () => {
    assert.equal(pbtxt('backend: "js"', 'folder').name, 'folder');
  });

  it("leaves Herd's js backend to choose its own file", () => {
    const config = pbtxt('backend: "js"');
    assert.equal(config.platform, '');
    assert.equal(config.default_model_filename, '');
    assert.equal(config.instance_group[0].count, 1);
  });

  it('finds the backend from the version folder, as Triton does', () => {
    const fromFiles = (entries: string[]) => parsePbtxtModelConfig('', FILE, 'm', { versionDirectoryEntries: entries });
    assert.deepEqual([fromFiles(['model.onnx']).backend, fromFiles(['model.onnx']).platform], ['onnxruntime', 'onnxruntime_onnx']);
    assert.deepEqual([fromFiles(['model.py']).backend, fromFiles(['model.py']).default_model_filename], ['python', 'model.py']);
    assert.deepEqual([fromFiles(['model.pt']).backend, fromFiles(['model.pt']).platform], ['pytorch', 'pytorch_libtorch']);
  });

  it("takes a custom backend from a model named 'model.<backend>', and otherwise says it cannot tell", () => {
    const config = pbtxt('', 'resnet.identity');
    assert.deepEqual([config.backend, config.default_model_filename], ['identity', 'model.identity']);
    assert.equal(
      rejection(() => pbtxt('max_batch_size: 1')).message,
      "models/m/config.pbtxt: Invalid model name: Could not determine backend for model 'm' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'.",
    );
  });

  it('names instance groups like Triton: the model for the default group, <model>_<i> for unnamed ones', () => {
    assert.deepEqual(
      pbtxt('backend: "js"').instance_group.map((g) => g.name),
      ['m'],
    );
    const config = pbtxt('backend: "onnxruntime" instance_group [{ count: 3 }, { name: "mine" kind: KIND_AUTO }, {}]');
    assert.deepEqual(
      config.instance_group.map((g) => [g.name, g.kind, g.count]),
      [
        ['m_0', 'KIND_CPU', 3],
        ['mine', 'KIND_CPU', 2],
        ['m_2', 'KIND_CPU', 2],
      ],
    );
  });

  it('fills the dynamic batcher as Triton prints it: preferred size = max_batch_size, no default queue policy', () => {
    const config = pbtxt('backend: "js" max_batch_size: 4 dynamic_batching {}');
    assert.deepEqual(config.dynamic_batching, {
      preferred_batch_size: [4],
      max_queue_delay_microseconds: 0,
      preserve_ordering: false,
      priority_levels: 0,
      default_priority_level: 0,
      priority_queue_policy: {},
    });
    const withPolicy = pbtxt('backend: "js" max_batch_size: 4 dynamic_batching { default_queue_policy { max_queue_size: 3 } }');
    assert.deepEqual(withPolicy.dynamic_batching?.default_queue_policy, {
      timeout_action: 'REJECT',
      default_timeout_microseconds: 0,
      allow_timeout_override: false,
      max_queue_size: 3,
    });
  });

  it('gives the sequence batcher its 1 s idle default and version_policy its latest-1 default', () => {
    const config = pbtxt('backend: "js" max_batch_size: 2 sequence_batching { direct {} }');
    assert.equal(config.sequence_batching?.max_sequence_idle_microseconds, 1_000_000);
    assert.deepEqual(config.sequence_batching?.direct, { max_queue_delay_microseconds: 0, minimum_slot_utilization: 0 });
    assert.deepEqual(config.version_policy, { latest: { num_versions: 1 } });
    assert.deepEqual(pbtxt('backend: "js" version_policy { all {} }').version_policy, { all: {} });
  });

  it('gives an ensemble neither an optimization block nor instance groups', () => {
    const config = pbtxt(`platform: "ensemble"
      input [{ name: "IN" data_type: TYPE_FP32 dims: [1] }]
      output [{ name: "OUT" data_type: TYPE_FP32 dims: [1] }]
      ensemble_scheduling { step [{ model_name: "a" model_version: -1 input_map { key: "x" value: "IN" } output_map { key: "y" value: "OUT" } }] }`);
    assert.equal(config.optimization, undefined);
    assert.deepEqual(config.instance_group, []);
    assert.deepEqual(config.ensemble_scheduling?.step[0], { model_name: 'a', model_version: -1, input_map: { x: 'IN' }, output_map: { y: 'OUT' }, model_namespace: '' });
  });

  it('normalizes idempotently, so a backend auto-complete can run it again', () => {
    const config = pbtxt('backend: "onnxruntime" max_batch_size: 4 dynamic_batching {} instance_group [{}, {}]');
    const again = structuredClone(config);
    normalizeModelConfig(again);
    normalizeInstanceGroups(again);
    assert.deepEqual(again, config);
  });
});

describe('parsePbtxtModelConfig: validation errors point into the file', () => {
  const cases: [string, string, string][] = [
    ['a negative max_batch_size', 'backend: "js"\nmax_batch_size: -1', "models/m/config.pbtxt:2:1: 'max_batch_size' must be non-negative value for m (max_batch_size)"],
    [
      'a zero dimension',
      'backend: "js"\ninput [\n  { name: "a" data_type: TYPE_FP32 dims: [ 4, 0 ] }\n]',
      "models/m/config.pbtxt:3:47: model input 'a' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for m (input[0].dims[1])",
    ],
    [
      'a missing data_type (located at its input)',
      'backend: "js"\noutput [\n  { name: "o" dims: [1] }\n]',
      "models/m/config.pbtxt:3:3: model output 'o' must specify 'data_type' for m (output[0].data_type)",
    ],
    [
      'a name that is not the folder',
      '\n  name: "other" backend: "js"',
      "models/m/config.pbtxt:2:3: unexpected directory name 'm' for model 'other', directory name must equal model name (name)",
    ],
    [
      'a preferred batch size above max_batch_size',
      'backend: "js" max_batch_size: 4\ndynamic_batching { preferred_batch_size: [ 2, 8 ] }',
      'models/m/config.pbtxt:2:47: dynamic batching preferred size must be <= max batch size for m (dynamic_batching.preferred_batch_size[1])',
    ],
    [
      'a platform that contradicts the backend',
      'backend: "onnxruntime"\nplatform: "tensorrt_plan"',
      "models/m/config.pbtxt:2:1: unexpected 'platform' and 'backend' pair, got:tensorrt_plan, onnxruntime (platform)",
    ],
    [
      'a problem in a field that was not written (no line:column)',
      'platform: "ensemble"',
      'models/m/config.pbtxt: ensemble scheduling must be set for ensemble m whose platform is ensemble (ensemble_scheduling)',
    ],
  ];
  for (const [title, text, message] of cases) {
    it(title, () => assert.equal(rejection(() => pbtxt(text)).message, message));
  }

  it('can leave inputs/outputs for after a backend auto-complete', () => {
    const config = parsePbtxtModelConfig('backend: "js" input [{ name: "a" }]', FILE, 'm', { validateIO: false });
    assert.deepEqual(config.input[0].dims, []);
  });
});

describe('parseJsonModelConfig', () => {
  it("reads Triton's own GET /config output", () => {
    const triton =
      '{"name":"densenet_onnx","platform":"onnxruntime_onnx","backend":"onnxruntime","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":0,"input":[{"name":"data_0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[1,3,224,224],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"fc6_1","data_type":"TYPE_FP32","dims":[1,1000,1,1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"densenet_onnx","kind":"KIND_CPU","count":2,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"model.onnx","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]}';
    const config = parseJsonModelConfig(triton, 'override', 'densenet_onnx');
    assert.equal(JSON.stringify(convertModelConfigToJson(config)), triton);
  });

  it('takes lowerCamel names, enums in any case or by number, 64-bit integers as strings, and null as unset', () => {
    const config = parseJsonModelConfig(
      {
        name: 'm',
        backend: 'js',
        maxBatchSize: '4',
        versionPolicy: null,
        input: [{ name: 'a', dataType: 'type_fp32', dims: ['-1', 3, 4], format: 2 }],
        dynamic_batching: { maxQueueDelayMicroseconds: '100', priorityQueuePolicy: { 1: { timeoutAction: 'delay' } }, priority_levels: 2, default_priority_level: 1 },
      },
      'override',
    );
    assert.equal(config.max_batch_size, 4);
    assert.deepEqual(config.version_policy, { latest: { num_versions: 1 } });
    assert.deepEqual([config.input[0].data_type, config.input[0].format, config.input[0].dims], ['TYPE_FP32', 'FORMAT_NCHW', [-1, 3, 4]]);
    assert.equal(config.dynamic_batching?.max_queue_delay_microseconds, 100);
    assert.equal(config.dynamic_batching?.priority_queue_policy['1'].timeout_action, 'DELAY');
  });

  const cases: [string, unknown, string][] = [
    ['an unknown field, by path', { name: 'm', backend: 'js', input: [{ name: 'a', dimz: [1] }] }, "override: unknown field 'dimz' in ModelInput (input[0])"],
    ['a wrong type', { name: 'm', backend: 'js', max_batch_size: 'eight' }, `override: expected an integer for int32 field 'max_batch_size', got string "eight" (max_batch_size)`],
    ['a fractional integer', { name: 'm', backend: 'js', input: [{ dims: [1.5] }] }, "override: expected an integer for int64 field 'dims', got number 1.5 (input[0].dims[0])"],
    [
      'a bad enum',
      { name: 'm', input: [{ data_type: 'FP32' }] },
      "override: invalid value 'FP32' for DataType field 'data_type'; valid values: TYPE_INVALID, TYPE_BOOL, TYPE_UINT8, TYPE_UINT16, TYPE_UINT32, TYPE_UINT64, TYPE_INT8, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_STRING, TYPE_BF16 (input[0].data_type)",
    ],
    ['a scalar where a list goes', { name: 'm', input: [{ dims: 3 }] }, "override: expected an array for repeated field 'dims', got number 3 (input[0].dims)"],
    ['a list where a message goes', { name: 'm', version_policy: [] }, 'override: expected an object for ModelVersionPolicy, got an array (version_policy)'],
    [
      'two oneof members',
      { name: 'm', dynamic_batching: {}, sequence_batching: {} },
      "override: field 'sequence_batching' is specified along with field 'dynamic_batching', but only one member of oneof 'scheduling_choice' may be set (sequence_batching)",
    ],
    [
      'a field given twice',
      { name: 'm', max_batch_size: 1, maxBatchSize: 2 },
      "override: field 'max_batch_size' is given twice, as 'max_batch_size' and 'maxBatchSize' (max_batch_size)",
    ],
    [
      'a bad map key',
      { name: 'm', dynamic_batching: { priority_queue_policy: { high: {} } } },
      "override: map key 'high' of field 'priority_queue_policy' is not a uint64 (dynamic_batching.priority_queue_policy)",
    ],
    ['a validation problem', { name: 'm', backend: 'js', max_batch_size: -2 }, "override: 'max_batch_size' must be non-negative value for m (max_batch_size)"],
    ['not an object', [], 'override: expected an object for ModelConfig, got an array'],
    ['invalid JSON text', '{"name": ', 'override: invalid JSON: Unexpected end of JSON input'],
  ];
  for (const [title, json, message] of cases) {
    it(`rejects ${title}`, () => assert.equal(rejection(() => parseJsonModelConfig(json, 'override')).message, message));
  }
});

describe('round trip pbtxt -> JSON -> parseJsonModelConfig', () => {
  const roundTrip = (config: ModelConfig, name: string) => {
    const json = JSON.stringify(convertModelConfigToJson(config));
    const again = parseJsonModelConfig(json, 'round trip', name);
    assert.deepEqual(again, config);
    assert.equal(JSON.stringify(convertModelConfigToJson(again)), json);
  };

  for (const name of readdirSync(REPOSITORY)
    .filter((n) => !n.startsWith('.'))
    .sort()) {
    it(name, () => {
      const file = join(REPOSITORY, name, 'config.pbtxt');
      roundTrip(parsePbtxtModelConfig(readFileSync(file, 'utf8'), file, name), name);
    });
  }

  it('a config using every part of the proto', () => {
    const config = pbtxt(`
      name: "m" backend: "onnxruntime" runtime: "rt" max_batch_size: 8
      version_policy { specific { versions: [1, 3] } }
      input [{ name: "a" data_type: TYPE_FP32 format: FORMAT_NHWC dims: [2, 2, 3] reshape { shape: [4, 3] } allow_ragged_batch: true optional: true }]
      output [{ name: "o" data_type: TYPE_STRING dims: [-1] label_filename: "labels.txt" }]
      batch_input [{ kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_INT32 source_input: "a" }]
      batch_output [{ target_name: "o" kind: BATCH_SCATTER_WITH_INPUT_SHAPE source_input: "a" }]
      optimization {
        graph { level: 1 } priority: PRIORITY_MAX gather_kernel_buffer_threshold: 7 eager_batching: true
        cuda { graphs: true graph_spec [{ batch_size: 2 input { key: "a" value { dim: [2, 3] } } graph_lower_bound { batch_size: 1 input { key: "a" value { dim: [1] } } } }] }
        execution_accelerators { cpu_execution_accelerator [{ name: "openvino" parameters { key: "k" value: "v" } }] }
        input_pinned_memory { enable: false }
      }
      sequence_batching {
        oldest { max_candidate_sequences: 4 preferred_batch_size: [2, 4] max_queue_delay_microseconds: 100 preserve_ordering: true }
        max_sequence_idle_microseconds: 5000000
        control_input [
          { name: "S" control [{ kind: CONTROL_SEQUENCE_START fp32_false_true: [0, 1] }] },
          { name: "R" control [{ kind: CONTROL_SEQUENCE_READY bool_false_true: [false, true] }] },
          { name: "C" control [{ kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_STRING }] }
        ]
        state [{ input_name: "si" output_name: "so" data_type: TYPE_FP32 dims: [4]
                 initial_state [{ data_type: TYPE_FP32 dims: [4] zero_data: true name: "zeros" }] use_growable_memory: true }]
        iterative_sequence: true
      }
      instance_group [{ name: "g" count: 2 kind: KIND_CPU rate_limiter { resources [{ name: "r" global: true count: 2 }] priority: 1 }
                        secondary_devices [{ kind: KIND_NVDLA device_id: 1 }] passive: true host_policy: "numa0" }]
      default_model_filename: "x.onnx"
      cc_model_filenames { key: "8.6" value: "a.onnx" }
      metric_tags { key: "team" value: "ml" }
      parameters { key: "p" value { string_value: "1" } }
      model_warmup [{ name: "w" batch_size: 2 count: 3 inputs { key: "a" value { data_type: TYPE_FP32 dims: [2, 2, 3] random_data: true } } }]
      model_operations { op_library_filename: ["libop.so"] }
      model_transaction_policy { decoupled: true }
      model_repository_agents { agents [{ name: "checksum" parameters { key: "MD5:1/model.onnx" value: "abc" } }] }
      response_cache { enable: false }
      model_metrics { metric_control [{ metric_identifier { family: "nv_inference_request_duration" } histogram_options { buckets: [0.5, 1, 2.5] } }] }`);
    roundTrip(config, 'm');
  });
});
