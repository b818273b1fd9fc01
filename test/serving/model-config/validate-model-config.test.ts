// Triton's configuration rules with Triton's wording, plus Herd's additions, one case each.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import type { ModelConfig } from '../../../src/serving/model-config/model-config.ts';
import { fillDefaults } from '../../../src/serving/model-config/message-schema.ts';
import { ModelConfigSchema } from '../../../src/serving/model-config/model-config-schema.ts';
import { autoCompleteBackendFields, normalizeInstanceGroups, normalizeModelConfig } from '../../../src/serving/model-config/parse-model-config.ts';
import { parseTextFormat } from '../../../src/serving/model-config/pbtxt-parser.ts';
import { listModelConfigWarnings, validateModelConfig, validateModelIOConfig } from '../../../src/serving/model-config/validate-model-config.ts';

/** pbtxt -> normalized ModelConfig without validation, so broken configs can be built. */
function build(text: string, name: string): ModelConfig {
  const config = fillDefaults(ModelConfigSchema, parseTextFormat(text, ModelConfigSchema, 'config.pbtxt').message) as unknown as ModelConfig;
  autoCompleteBackendFields(config, name);
  normalizeModelConfig(config);
  normalizeInstanceGroups(config);
  return config;
}

/** A valid config plus `text`, to break one field at a time. */
function config(text = ''): ModelConfig {
  return build(
    `name: "m" backend: "js" max_batch_size: 8
    input [{ name: "IN" data_type: TYPE_FP32 dims: [4] }]
    output [{ name: "OUT" data_type: TYPE_FP32 dims: [4] }]
    ${text}`,
    'm',
  );
}

function problem(run: () => void): { message: string; param: string | undefined; code: string } {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof HerdError, `expected a HerdError, got ${String(err)}`);
    return { message: err.message, param: err.param, code: err.code };
  }
  return assert.fail('expected the config to be rejected');
}

const check = (c: ModelConfig) => problem(() => validateModelConfig(c));

describe('validateModelConfig', () => {
  it('accepts a valid config', () => {
    validateModelConfig(config(), { expectedName: 'm' });
  });

  it('names the source and the field when given a file', () => {
    const c = config();
    c.max_batch_size = -1;
    assert.deepEqual(
      problem(() => validateModelConfig(c, { file: 'models/m/config.pbtxt' })),
      {
        message: "models/m/config.pbtxt: 'max_batch_size' must be non-negative value for m (max_batch_size)",
        param: 'max_batch_size',
        code: 'INVALID_ARG',
      },
    );
  });

  it('requires the folder name', () => {
    assert.equal(
      problem(() => validateModelConfig(config(), { expectedName: 'folder' })).message,
      "unexpected directory name 'folder' for model 'm', directory name must equal model name",
    );
  });

  it('requires a name and a backend', () => {
    const c = config();
    c.name = '';
    assert.equal(check(c).message, "model configuration must specify 'name'");
    const d = config();
    d.backend = '';
    assert.equal(check(d).message, "unexpected platform type '' for m");
  });

  it('accepts dynamic batching without batching, as Triton does, with a warning', () => {
    const c = config('dynamic_batching {}');
    c.max_batch_size = 0;
    c.dynamic_batching!.preferred_batch_size = [];
    validateModelConfig(c);
    const warnings = listModelConfigWarnings(c);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^model 'm': dynamic_batching with max_batch_size 0 cannot batch; .* run one at a time/);
    assert.deepEqual(listModelConfigWarnings(config('dynamic_batching {}')), []);
    // A preferred size still has to fit the (zero) maximum, as in Triton.
    c.dynamic_batching!.preferred_batch_size = [1];
    assert.equal(check(c).message, 'dynamic batching preferred size must be <= max batch size for m');
  });

  it('checks preferred batch sizes and priority levels', () => {
    assert.equal(check(config('dynamic_batching { preferred_batch_size: [0] }')).message, 'dynamic batching preferred size must be positive for m');
    assert.equal(check(config('dynamic_batching { preferred_batch_size: [16] }')).message, 'dynamic batching preferred size must be <= max batch size for m');
    assert.equal(check(config('dynamic_batching { priority_levels: 2 }')).message, 'default priority level must be in range [1, 2] for m');
    assert.deepEqual(check(config('dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 3 value {} } }')), {
      message: 'priority queue policy must have priority level in range [1, 2] for m',
      param: 'dynamic_batching.priority_queue_policy["3"]',
      code: 'INVALID_ARG',
    });
    assert.equal(
      check(config('dynamic_batching { preserve_ordering: true priority_levels: 2 default_priority_level: 1 }')).message,
      "Only one priority level is allowed when 'preserve_ordering' is true for m",
    );
    assert.equal(
      check(config('dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 5 } }')).message,
      "Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for m",
    );
  });

  it('checks sequence batching controls', () => {
    const control = (body: string) => check(config(`sequence_batching { control_input [${body}] }`)).message;
    assert.equal(control('{ control [{ kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] }] }'), 'sequence batching control tensor must have a name for m');
    assert.equal(
      control('{ name: "S" control [{ kind: CONTROL_SEQUENCE_START }] }'),
      "sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_START for m",
    );
    assert.equal(
      control('{ name: "S" control [{ kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] bool_false_true: [false, true] }] }'),
      "sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for CONTROL_SEQUENCE_START for m",
    );
    assert.equal(
      control('{ name: "S" control [{ kind: CONTROL_SEQUENCE_END int32_false_true: [1] }] }'),
      "sequence batching control 'int32_false_true' must have exactly 2 entries for CONTROL_SEQUENCE_END for m",
    );
    assert.equal(
      control('{ name: "S" control [{ kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] }] }, { name: "S" }'),
      "sequence batching control tensor 'S' is specified for multiple control kinds for m",
    );
    assert.equal(
      control(
        '{ name: "A" control [{ kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] }] }, { name: "B" control [{ kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] }] }',
      ),
      'sequence batching specifies multiple CONTROL_SEQUENCE_READY tensors for m',
    );
    assert.equal(
      control('{ name: "C" control [{ kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 }] }'),
      'unexpected data type for control CONTROL_SEQUENCE_CORRID for m. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING',
    );
    assert.equal(check(config('sequence_batching { oldest { preferred_batch_size: [9] } }')).message, 'sequence batching preferred batch size must be <= max batch size for m');
    assert.equal(
      check(config('sequence_batching { direct { minimum_slot_utilization: 1.5 } }')).message,
      'sequence batching minimum slot utilization must be in range (0.0, 1.0] for m',
    );
    assert.equal(
      check(config('sequence_batching {} response_cache { enable: true }')).message,
      'Response Cache does not currently support model m with sequence batching scheduler. Please disable the response cache.',
    );
  });

  it('checks instance groups for a server without GPUs', () => {
    assert.deepEqual(check(config('instance_group [{ name: "g" kind: KIND_GPU }]')), {
      message: 'instance group g of model m has kind KIND_GPU but server does not support GPUs',
      param: 'instance_group[0].kind',
      code: 'INVALID_ARG',
    });
    assert.equal(check(config('instance_group [{ name: "g" kind: KIND_CPU gpus: [0] }]')).message, 'instance group g of model m has kind KIND_CPU but specifies one or more GPUs');
    assert.equal(
      check(config('instance_group [{ name: "g" profile: ["0"] }]')).message,
      'instance group g of model m and platform  specifies profile field which is only supported for TensorRT models',
    );
    assert.deepEqual(check(config('instance_group [{ name: "g" count: -2 }]')), {
      message: 'instance group g of model m must have count >= 1, got -2',
      param: 'instance_group[0].count',
      code: 'INVALID_ARG',
    });
    const c = config();
    c.instance_group = [];
    assert.equal(check(c).message, "must specify one or more 'instance group's for m");
  });

  it('checks model_metrics and decoupled + response cache', () => {
    assert.equal(check(config('model_metrics { metric_control [{ metric_identifier { family: "f" } }] }')).message, "metric control must specify 'histogram_options'");
    assert.equal(
      check(config('model_transaction_policy { decoupled: true } response_cache { enable: true }')).message,
      "Response Cache does not currently support model m with 'decoupled' transaction policy. Please disable the response cache.",
    );
  });
});

describe('validateModelConfig: ensembles', () => {
  const ensemble = (steps: string, io = 'input [{ name: "IN" data_type: TYPE_FP32 dims: [1] }] output [{ name: "OUT" data_type: TYPE_FP32 dims: [1] }]') =>
    build(`name: "e" platform: "ensemble" ${io} ensemble_scheduling { step [${steps}] }`, 'e');
  const step = (model: string, input: string, output: string) =>
    `{ model_name: "${model}" model_version: -1 input_map { key: "x" value: "${input}" } output_map { key: "y" value: "${output}" } }`;

  it('accepts a connected pipeline whose models exist', () => {
    validateModelConfig(ensemble(`${step('a', 'IN', 'mid')}, ${step('b', 'mid', 'OUT')}`), { modelExists: (n) => n === 'a' || n === 'b' });
  });

  it('reports a step model missing from the repository, or the ensemble itself', () => {
    assert.deepEqual(
      problem(() => validateModelConfig(ensemble(step('a', 'IN', 'OUT')), { modelExists: () => false })),
      {
        message: "ensemble 'e' step 0 uses model 'a', which is not in the model repository",
        param: 'ensemble_scheduling.step[0].model_name',
        code: 'INVALID_ARG',
      },
    );
    assert.equal(check(ensemble(step('e', 'IN', 'OUT'))).message, "ensemble 'e' cannot use itself as the model of step 0");
  });

  it('reports broken wiring as Triton does', () => {
    assert.equal(
      check(ensemble(`${step('a', 'IN', 'mid')}, ${step('b', 'other', 'OUT')}`)).message,
      "output 'OUT' for ensemble 'e' is not written: at least one of its depending tensors, 'other', is not connected",
    );
    assert.equal(check(ensemble(step('a', 'X', 'OUT'))).message, "ensemble input 'IN' for ensemble 'e' is not used");
    assert.equal(
      check(ensemble(`${step('a', 'IN', 'OUT')}, ${step('b', 'IN', 'OUT')}`)).message,
      "ensemble tensor 'OUT' can appear in an output map only once for ensemble 'e' step 1",
    );
    assert.equal(check(ensemble(`${step('a', 'IN', 'OUT')}, ${step('b', 'IN', 'spare')}`)).message, "ensemble tensor 'spare' is unused in ensemble 'e'");
    assert.equal(check(ensemble('{ model_name: "a" output_map { key: "y" value: "OUT" } }')).message, "must specify 'input_map' in step 0 of ensemble 'e'");
  });

  it('rejects instance groups and missing scheduling on ensembles', () => {
    const c = ensemble(step('a', 'IN', 'OUT'));
    c.instance_group = config().instance_group;
    assert.equal(check(c).message, "instance group should not be specified for ensemble 'e'");
    c.instance_group = [];
    c.ensemble_scheduling = undefined;
    assert.equal(check(c).message, 'ensemble scheduling must be set for ensemble e whose platform is ensemble');
  });
});

describe('validateModelIOConfig', () => {
  const io = (text: string) => problem(() => validateModelIOConfig(build(`name: "m" backend: "js" max_batch_size: 0 ${text}`, 'm')));

  it('requires name, data_type and dims, and dims >= 1 or -1', () => {
    assert.equal(io('input [{ data_type: TYPE_FP32 dims: [1] }]').message, "model input must specify 'name' for m");
    assert.deepEqual(io('input [{ name: "a" dims: [1] }]'), { message: "model input 'a' must specify 'data_type' for m", param: 'input[0].data_type', code: 'INVALID_ARG' });
    assert.equal(io('output [{ name: "o" data_type: TYPE_FP32 }]').message, "model output 'o' must specify 'dims' for m");
    assert.deepEqual(io('input [{ name: "a" data_type: TYPE_FP32 dims: [2, -2] }]'), {
      message: "model input 'a' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for m",
      param: 'input[0].dims[1]',
      code: 'INVALID_ARG',
    });
    assert.equal(io('input [{ name: "a" data_type: TYPE_INVALID dims: [1] }]').message, "model input 'a' must specify 'data_type' for m");
  });

  it('checks reshape sizes, wildcard runs and empty reshapes', () => {
    assert.equal(io('input [{ name: "a" data_type: TYPE_FP32 dims: [2, 3] reshape { shape: [5] } }]').message, "model input 'a' has different size for dims and reshape for m");
    assert.equal(
      io('input [{ name: "a" data_type: TYPE_FP32 dims: [2, -1] reshape { shape: [-1, -1] } }]').message,
      "model input 'a' has different number of variable-size dimensions for dims and reshape for m",
    );
    assert.equal(
      io('input [{ name: "a" data_type: TYPE_FP32 dims: [2, 4, -1, 6] reshape { shape: [8, -1, 2, 6] } }]').message,
      "model input 'a' has different size for dims and reshape for m",
    );
    assert.equal(
      io('input [{ name: "a" data_type: TYPE_FP32 dims: [1] reshape {} }]').message,
      "model input 'a' cannot have empty reshape for non-batching model as scalar tensors are not supported for m",
    );
    validateModelIOConfig(build('name: "m" backend: "js" input [{ name: "a" data_type: TYPE_FP32 dims: [2, 4, -1, 6] reshape { shape: [8, -1, 1, 6] } }]', 'm'));
    validateModelIOConfig(build('name: "m" backend: "js" max_batch_size: 2 input [{ name: "a" data_type: TYPE_FP32 dims: [1] reshape { shape: [] } }]', 'm'));
  });

  it('checks formats, TensorRT-only flags, duplicates and batch inputs/outputs', () => {
    assert.equal(io('input [{ name: "a" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [3, 4] }]').message, 'model input NHWC/NCHW require 3 dims for m');
    assert.equal(io('input [{ name: "a" data_type: TYPE_INT32 dims: [1] is_shape_tensor: true }]').message, 'shape tensors are only supported for TensorRT platform for m');
    assert.equal(
      io('output [{ name: "o" data_type: TYPE_FP32 dims: [1] is_non_linear_format_io: true }]').message,
      'Non-linear IO format is only supported for the TensorRT platform for m',
    );
    assert.deepEqual(io('input [{ name: "a" data_type: TYPE_FP32 dims: [1] }, { name: "a" data_type: TYPE_FP32 dims: [1] }]'), {
      message: "model input 'a' is specified more than once for m",
      param: 'input[1].name',
      code: 'INVALID_ARG',
    });
    assert.equal(
      io('input [{ name: "a" data_type: TYPE_FP32 dims: [1] }] batch_input [{ kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_FP32 source_input: ["b"] }]').message,
      "unknown source input name 'b' for m",
    );
    assert.equal(
      io('input [{ name: "a" data_type: TYPE_FP32 dims: [1] }] batch_input [{ kind: BATCH_ITEM_SHAPE data_type: TYPE_INT64 source_input: ["a"] }]').message,
      'batch input data type must be TYPE_INT32 or TYPE_FP32 for m',
    );
    assert.equal(
      io(
        'input [{ name: "a" data_type: TYPE_FP32 dims: [1] }] output [{ name: "o" data_type: TYPE_FP32 dims: [1] }] batch_output [{ target_name: ["o", "o"] source_input: ["a"] }]',
      ).message,
      "target output name 'o' can only be specified once for m",
    );
  });
});
