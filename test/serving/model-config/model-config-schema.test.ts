// The schema and the ModelConfig types describe the same proto: every typed field is in the schema
// and nothing else is (the `satisfies` literals fail to compile when a type gains or loses a field).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type * as T from '../../../src/serving/model-config/model-config.ts';
import { type MessageSchema, defineMessage, scalarField } from '../../../src/serving/model-config/message-schema.ts';
import { ModelConfigSchema } from '../../../src/serving/model-config/model-config-schema.ts';

type Keys<M> = Record<keyof M, true>;

function sub(schema: MessageSchema, ...path: string[]): MessageSchema {
  let current = schema;
  for (const name of path) {
    const type = current.byName.get(name)?.type;
    assert.ok(type?.kind === 'message', `${current.name}.${name} is not a message field`);
    current = type.message;
  }
  return current;
}

const seq = (...p: string[]) => sub(ModelConfigSchema, 'sequence_batching', ...p);
const opt = (...p: string[]) => sub(ModelConfigSchema, 'optimization', ...p);

const pairs: [MessageSchema, Record<string, true>][] = [
  [
    ModelConfigSchema,
    {
      name: true,
      platform: true,
      backend: true,
      runtime: true,
      version_policy: true,
      max_batch_size: true,
      input: true,
      output: true,
      batch_input: true,
      batch_output: true,
      optimization: true,
      dynamic_batching: true,
      sequence_batching: true,
      ensemble_scheduling: true,
      instance_group: true,
      default_model_filename: true,
      cc_model_filenames: true,
      metric_tags: true,
      parameters: true,
      model_warmup: true,
      model_operations: true,
      model_transaction_policy: true,
      model_repository_agents: true,
      response_cache: true,
      model_metrics: true,
    } satisfies Keys<T.ModelConfig>,
  ],
  [
    sub(ModelConfigSchema, 'input'),
    {
      name: true,
      data_type: true,
      format: true,
      dims: true,
      reshape: true,
      is_shape_tensor: true,
      allow_ragged_batch: true,
      optional: true,
      is_non_linear_format_io: true,
    } satisfies Keys<T.ModelInput>,
  ],
  [
    sub(ModelConfigSchema, 'output'),
    {
      name: true,
      data_type: true,
      dims: true,
      reshape: true,
      label_filename: true,
      is_shape_tensor: true,
      is_non_linear_format_io: true,
    } satisfies Keys<T.ModelOutput>,
  ],
  [sub(ModelConfigSchema, 'input', 'reshape'), { shape: true } satisfies Keys<T.ModelTensorReshape>],
  [sub(ModelConfigSchema, 'batch_input'), { kind: true, target_name: true, data_type: true, source_input: true } satisfies Keys<T.BatchInput>],
  [sub(ModelConfigSchema, 'batch_output'), { target_name: true, kind: true, source_input: true } satisfies Keys<T.BatchOutput>],
  [sub(ModelConfigSchema, 'version_policy'), { latest: true, all: true, specific: true } satisfies Keys<T.ModelVersionPolicy>],
  [
    sub(ModelConfigSchema, 'instance_group'),
    {
      name: true,
      kind: true,
      count: true,
      rate_limiter: true,
      gpus: true,
      secondary_devices: true,
      profile: true,
      passive: true,
      host_policy: true,
    } satisfies Keys<T.ModelInstanceGroup>,
  ],
  [sub(ModelConfigSchema, 'instance_group', 'rate_limiter'), { resources: true, priority: true } satisfies Keys<T.ModelRateLimiter>],
  [sub(ModelConfigSchema, 'instance_group', 'rate_limiter', 'resources'), { name: true, global: true, count: true } satisfies Keys<T.ModelRateLimiterResource>],
  [sub(ModelConfigSchema, 'instance_group', 'secondary_devices'), { kind: true, device_id: true } satisfies Keys<T.ModelInstanceSecondaryDevice>],
  [
    opt(),
    {
      graph: true,
      priority: true,
      cuda: true,
      execution_accelerators: true,
      input_pinned_memory: true,
      output_pinned_memory: true,
      gather_kernel_buffer_threshold: true,
      eager_batching: true,
    } satisfies Keys<T.ModelOptimizationPolicy>,
  ],
  [opt('cuda'), { graphs: true, busy_wait_events: true, graph_spec: true, output_copy_stream: true } satisfies Keys<NonNullable<T.ModelOptimizationPolicy['cuda']>>],
  [opt('cuda', 'graph_spec'), { batch_size: true, input: true, graph_lower_bound: true } satisfies Keys<T.ModelOptimizationGraphSpec>],
  [opt('cuda', 'graph_spec', 'input'), { dim: true } satisfies Keys<T.ModelOptimizationGraphShape>],
  [opt('execution_accelerators', 'cpu_execution_accelerator'), { name: true, parameters: true } satisfies Keys<T.ModelOptimizationAccelerator>],
  [
    sub(ModelConfigSchema, 'dynamic_batching'),
    {
      preferred_batch_size: true,
      max_queue_delay_microseconds: true,
      preserve_ordering: true,
      priority_levels: true,
      default_priority_level: true,
      default_queue_policy: true,
      priority_queue_policy: true,
    } satisfies Keys<T.ModelDynamicBatching>,
  ],
  [
    sub(ModelConfigSchema, 'dynamic_batching', 'default_queue_policy'),
    {
      timeout_action: true,
      default_timeout_microseconds: true,
      allow_timeout_override: true,
      max_queue_size: true,
    } satisfies Keys<T.ModelQueuePolicy>,
  ],
  [
    seq(),
    {
      direct: true,
      oldest: true,
      max_sequence_idle_microseconds: true,
      control_input: true,
      state: true,
      iterative_sequence: true,
    } satisfies Keys<T.ModelSequenceBatching>,
  ],
  [seq('control_input'), { name: true, control: true } satisfies Keys<T.ModelSequenceControlInput>],
  [
    seq('control_input', 'control'),
    {
      kind: true,
      int32_false_true: true,
      fp32_false_true: true,
      bool_false_true: true,
      data_type: true,
    } satisfies Keys<T.ModelSequenceControl>,
  ],
  [
    seq('state'),
    {
      input_name: true,
      output_name: true,
      data_type: true,
      dims: true,
      initial_state: true,
      use_same_buffer_for_input_output: true,
      use_growable_memory: true,
    } satisfies Keys<T.ModelSequenceState>,
  ],
  [seq('state', 'initial_state'), { data_type: true, dims: true, zero_data: true, data_file: true, name: true } satisfies Keys<T.ModelSequenceInitialState>],
  [seq('direct'), { max_queue_delay_microseconds: true, minimum_slot_utilization: true } satisfies Keys<T.ModelSequenceStrategyDirect>],
  [
    seq('oldest'),
    {
      max_candidate_sequences: true,
      preferred_batch_size: true,
      max_queue_delay_microseconds: true,
      preserve_ordering: true,
    } satisfies Keys<T.ModelSequenceStrategyOldest>,
  ],
  [sub(ModelConfigSchema, 'ensemble_scheduling'), { step: true, max_inflight_requests: true } satisfies Keys<T.ModelEnsembling>],
  [
    sub(ModelConfigSchema, 'ensemble_scheduling', 'step'),
    {
      model_name: true,
      model_version: true,
      input_map: true,
      output_map: true,
      model_namespace: true,
    } satisfies Keys<T.ModelEnsembleStep>,
  ],
  [sub(ModelConfigSchema, 'parameters'), { string_value: true } satisfies Keys<T.ModelParameter>],
  [sub(ModelConfigSchema, 'model_warmup'), { name: true, batch_size: true, inputs: true, count: true } satisfies Keys<T.ModelWarmup>],
  [
    sub(ModelConfigSchema, 'model_warmup', 'inputs'),
    {
      data_type: true,
      dims: true,
      zero_data: true,
      random_data: true,
      input_data_file: true,
    } satisfies Keys<T.ModelWarmupInput>,
  ],
  [sub(ModelConfigSchema, 'model_operations'), { op_library_filename: true } satisfies Keys<T.ModelOperations>],
  [sub(ModelConfigSchema, 'model_repository_agents', 'agents'), { name: true, parameters: true } satisfies Keys<T.ModelRepositoryAgent>],
  [sub(ModelConfigSchema, 'model_metrics', 'metric_control'), { metric_identifier: true, histogram_options: true } satisfies Keys<T.ModelMetricControl>],
];

describe('ModelConfig schema', () => {
  for (const [schema, keys] of pairs) {
    it(`${schema.name} has exactly the typed fields`, () => {
      assert.deepEqual(schema.fields.map((f) => f.name).sort(), Object.keys(keys).sort());
    });
  }

  it('numbers ModelConfig fields as model_config.proto does', () => {
    const numbers = Object.fromEntries(ModelConfigSchema.fields.map((f) => [f.name, f.number]));
    assert.deepEqual(numbers, {
      name: 1,
      platform: 2,
      backend: 17,
      runtime: 25,
      version_policy: 3,
      max_batch_size: 4,
      input: 5,
      output: 6,
      batch_input: 20,
      batch_output: 21,
      optimization: 12,
      dynamic_batching: 11,
      sequence_batching: 13,
      ensemble_scheduling: 15,
      instance_group: 7,
      default_model_filename: 8,
      cc_model_filenames: 9,
      metric_tags: 10,
      parameters: 14,
      model_warmup: 16,
      model_operations: 18,
      model_transaction_policy: 19,
      model_repository_agents: 23,
      response_cache: 24,
      model_metrics: 26,
    });
  });

  it('gives fields protobuf JSON names and maps protoc-style entry messages', () => {
    const m = defineMessage('M', { max_batch_size: scalarField('int32', 1), int32_false_true: scalarField('int32', 2) });
    assert.deepEqual(
      m.fields.map((f) => f.jsonName),
      ['maxBatchSize', 'int32FalseTrue'],
    );
    assert.equal(ModelConfigSchema.byName.get('parameters')?.entry?.name, 'ModelConfig.ParametersEntry');
  });
});
