// ModelConfig in the schema language of message-schema.ts: every message, field and enum of Triton's
// model_config.proto (triton-inference-server/common, protobuf/model_config.proto), fields in declaration order.
import { scalarField, enumField, messageField, repeated, mapOf, inOneof, defineEnum, defineMessage } from './message-schema.ts';

const s = scalarField;

export const DataTypeEnum = defineEnum('DataType', [
  'TYPE_INVALID',
  'TYPE_BOOL',
  'TYPE_UINT8',
  'TYPE_UINT16',
  'TYPE_UINT32',
  'TYPE_UINT64',
  'TYPE_INT8',
  'TYPE_INT16',
  'TYPE_INT32',
  'TYPE_INT64',
  'TYPE_FP16',
  'TYPE_FP32',
  'TYPE_FP64',
  'TYPE_STRING',
  'TYPE_BF16',
]);
const dataType = (number: number) => enumField(DataTypeEnum, number);

const RateLimiterResource = defineMessage('ModelRateLimiter.Resource', { name: s('string', 1), global: s('bool', 2), count: s('uint32', 3) });
const RateLimiter = defineMessage('ModelRateLimiter', { resources: repeated(messageField(RateLimiterResource, 1)), priority: s('uint32', 2) });

export const InstanceKindEnum = defineEnum('ModelInstanceGroup.Kind', ['KIND_AUTO', 'KIND_GPU', 'KIND_CPU', 'KIND_MODEL']);
const SecondaryDevice = defineMessage('ModelInstanceGroup.SecondaryDevice', {
  kind: enumField(defineEnum('ModelInstanceGroup.SecondaryDevice.SecondaryDeviceKind', ['KIND_NVDLA']), 1),
  device_id: s('int64', 2),
});
export const InstanceGroupSchema = defineMessage('ModelInstanceGroup', {
  name: s('string', 1),
  kind: enumField(InstanceKindEnum, 4),
  count: s('int32', 2),
  rate_limiter: messageField(RateLimiter, 6),
  gpus: repeated(s('int32', 3)),
  secondary_devices: repeated(messageField(SecondaryDevice, 8)),
  profile: repeated(s('string', 5)),
  passive: s('bool', 7),
  host_policy: s('string', 9),
});

const TensorReshape = defineMessage('ModelTensorReshape', { shape: repeated(s('int64', 1)) });

export const InputSchema = defineMessage('ModelInput', {
  name: s('string', 1),
  data_type: dataType(2),
  format: enumField(defineEnum('ModelInput.Format', ['FORMAT_NONE', 'FORMAT_NHWC', 'FORMAT_NCHW']), 3),
  dims: repeated(s('int64', 4)),
  reshape: messageField(TensorReshape, 5),
  is_shape_tensor: s('bool', 6),
  allow_ragged_batch: s('bool', 7),
  optional: s('bool', 8),
  is_non_linear_format_io: s('bool', 9),
});

export const OutputSchema = defineMessage('ModelOutput', {
  name: s('string', 1),
  data_type: dataType(2),
  dims: repeated(s('int64', 3)),
  reshape: messageField(TensorReshape, 5),
  label_filename: s('string', 4),
  is_shape_tensor: s('bool', 6),
  is_non_linear_format_io: s('bool', 7),
});

const BatchInput = defineMessage('BatchInput', {
  kind: enumField(
    defineEnum('BatchInput.Kind', [
      'BATCH_ELEMENT_COUNT',
      'BATCH_ACCUMULATED_ELEMENT_COUNT',
      'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO',
      'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE',
      'BATCH_ITEM_SHAPE',
      'BATCH_ITEM_SHAPE_FLATTEN',
    ]),
    1,
  ),
  target_name: repeated(s('string', 2)),
  data_type: dataType(3),
  source_input: repeated(s('string', 4)),
});

const BatchOutput = defineMessage('BatchOutput', {
  target_name: repeated(s('string', 1)),
  kind: enumField(defineEnum('BatchOutput.Kind', ['BATCH_SCATTER_WITH_INPUT_SHAPE']), 2),
  source_input: repeated(s('string', 3)),
});

const VersionPolicy = defineMessage('ModelVersionPolicy', {
  latest: inOneof('policy_choice', messageField(defineMessage('ModelVersionPolicy.Latest', { num_versions: s('uint32', 1) }), 1)),
  all: inOneof('policy_choice', messageField(defineMessage('ModelVersionPolicy.All', {}), 2)),
  specific: inOneof('policy_choice', messageField(defineMessage('ModelVersionPolicy.Specific', { versions: repeated(s('int64', 1)) }), 3)),
});

const GraphShape = defineMessage('ModelOptimizationPolicy.Cuda.GraphSpec.Shape', { dim: repeated(s('int64', 1)) });
const GraphSpec = defineMessage('ModelOptimizationPolicy.Cuda.GraphSpec', {
  batch_size: s('int32', 1),
  input: mapOf('string', messageField(GraphShape, 2)),
  graph_lower_bound: messageField(
    defineMessage('ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound', {
      batch_size: s('int32', 1),
      input: mapOf('string', messageField(GraphShape, 2)),
    }),
    3,
  ),
});
const Accelerator = defineMessage('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator', {
  name: s('string', 1),
  parameters: mapOf('string', s('string', 2)),
});
const PinnedMemoryBuffer = defineMessage('ModelOptimizationPolicy.PinnedMemoryBuffer', { enable: s('bool', 1) });
const OptimizationPolicy = defineMessage('ModelOptimizationPolicy', {
  graph: messageField(defineMessage('ModelOptimizationPolicy.Graph', { level: s('int32', 1) }), 1),
  priority: enumField(defineEnum('ModelOptimizationPolicy.ModelPriority', ['PRIORITY_DEFAULT', 'PRIORITY_MAX', 'PRIORITY_MIN']), 2),
  cuda: messageField(
    defineMessage('ModelOptimizationPolicy.Cuda', {
      graphs: s('bool', 1),
      busy_wait_events: s('bool', 2),
      graph_spec: repeated(messageField(GraphSpec, 3)),
      output_copy_stream: s('bool', 4),
    }),
    3,
  ),
  execution_accelerators: messageField(
    defineMessage('ModelOptimizationPolicy.ExecutionAccelerators', {
      gpu_execution_accelerator: repeated(messageField(Accelerator, 1)),
      cpu_execution_accelerator: repeated(messageField(Accelerator, 2)),
    }),
    4,
  ),
  input_pinned_memory: messageField(PinnedMemoryBuffer, 5),
  output_pinned_memory: messageField(PinnedMemoryBuffer, 6),
  gather_kernel_buffer_threshold: s('uint32', 7),
  eager_batching: s('bool', 8),
});

const QueuePolicy = defineMessage('ModelQueuePolicy', {
  timeout_action: enumField(defineEnum('ModelQueuePolicy.TimeoutAction', ['REJECT', 'DELAY']), 1),
  default_timeout_microseconds: s('uint64', 2),
  allow_timeout_override: s('bool', 3),
  max_queue_size: s('uint32', 4),
});

const DynamicBatching = defineMessage('ModelDynamicBatching', {
  preferred_batch_size: repeated(s('int32', 1)),
  max_queue_delay_microseconds: s('uint64', 2),
  preserve_ordering: s('bool', 3),
  priority_levels: s('uint64', 4),
  default_priority_level: s('uint64', 5),
  default_queue_policy: messageField(QueuePolicy, 6),
  priority_queue_policy: mapOf('uint64', messageField(QueuePolicy, 7)),
});

const SequenceControl = defineMessage('ModelSequenceBatching.Control', {
  kind: enumField(defineEnum('ModelSequenceBatching.Control.Kind', ['CONTROL_SEQUENCE_START', 'CONTROL_SEQUENCE_READY', 'CONTROL_SEQUENCE_END', 'CONTROL_SEQUENCE_CORRID']), 1),
  int32_false_true: repeated(s('int32', 2)),
  fp32_false_true: repeated(s('float', 3)),
  bool_false_true: repeated(s('bool', 5)),
  data_type: dataType(4),
});
const InitialState = defineMessage('ModelSequenceBatching.InitialState', {
  data_type: dataType(1),
  dims: repeated(s('int64', 2)),
  zero_data: inOneof('state_data', s('bool', 3)),
  data_file: inOneof('state_data', s('string', 4)),
  name: s('string', 5),
});
const SequenceBatching = defineMessage('ModelSequenceBatching', {
  direct: inOneof(
    'strategy_choice',
    messageField(
      defineMessage('ModelSequenceBatching.StrategyDirect', {
        max_queue_delay_microseconds: s('uint64', 1),
        minimum_slot_utilization: s('float', 2),
      }),
      3,
    ),
  ),
  oldest: inOneof(
    'strategy_choice',
    messageField(
      defineMessage('ModelSequenceBatching.StrategyOldest', {
        max_candidate_sequences: s('int32', 1),
        preferred_batch_size: repeated(s('int32', 2)),
        max_queue_delay_microseconds: s('uint64', 3),
        preserve_ordering: s('bool', 4),
      }),
      4,
    ),
  ),
  max_sequence_idle_microseconds: s('uint64', 1),
  control_input: repeated(
    messageField(
      defineMessage('ModelSequenceBatching.ControlInput', {
        name: s('string', 1),
        control: repeated(messageField(SequenceControl, 2)),
      }),
      2,
    ),
  ),
  state: repeated(
    messageField(
      defineMessage('ModelSequenceBatching.State', {
        input_name: s('string', 1),
        output_name: s('string', 2),
        data_type: dataType(3),
        dims: repeated(s('int64', 4)),
        initial_state: repeated(messageField(InitialState, 5)),
        use_same_buffer_for_input_output: s('bool', 6),
        use_growable_memory: s('bool', 7),
      }),
      5,
    ),
  ),
  iterative_sequence: s('bool', 6),
});

const Ensembling = defineMessage('ModelEnsembling', {
  step: repeated(
    messageField(
      defineMessage('ModelEnsembling.Step', {
        model_name: s('string', 1),
        model_version: s('int64', 2),
        input_map: mapOf('string', s('string', 3)),
        output_map: mapOf('string', s('string', 4)),
        model_namespace: s('string', 5),
      }),
      1,
    ),
  ),
  max_inflight_requests: s('uint32', 2),
});

const Parameter = defineMessage('ModelParameter', { string_value: s('string', 1) });

const WarmupInput = defineMessage('ModelWarmup.Input', {
  data_type: dataType(1),
  dims: repeated(s('int64', 2)),
  zero_data: inOneof('input_data_type', s('bool', 3)),
  random_data: inOneof('input_data_type', s('bool', 4)),
  input_data_file: inOneof('input_data_type', s('string', 5)),
});
const Warmup = defineMessage('ModelWarmup', {
  name: s('string', 1),
  batch_size: s('uint32', 2),
  inputs: mapOf('string', messageField(WarmupInput, 3)),
  count: s('uint32', 4),
});

const MetricControl = defineMessage('ModelMetrics.MetricControl', {
  metric_identifier: messageField(defineMessage('ModelMetrics.MetricControl.MetricIdentifier', { family: s('string', 1) }), 1),
  histogram_options: inOneof('metric_options', messageField(defineMessage('ModelMetrics.MetricControl.HistogramOptions', { buckets: repeated(s('double', 1)) }), 2)),
});

export const ModelConfigSchema = defineMessage('ModelConfig', {
  name: s('string', 1),
  platform: s('string', 2),
  backend: s('string', 17),
  runtime: s('string', 25),
  version_policy: messageField(VersionPolicy, 3),
  max_batch_size: s('int32', 4),
  input: repeated(messageField(InputSchema, 5)),
  output: repeated(messageField(OutputSchema, 6)),
  batch_input: repeated(messageField(BatchInput, 20)),
  batch_output: repeated(messageField(BatchOutput, 21)),
  optimization: messageField(OptimizationPolicy, 12),
  dynamic_batching: inOneof('scheduling_choice', messageField(DynamicBatching, 11)),
  sequence_batching: inOneof('scheduling_choice', messageField(SequenceBatching, 13)),
  ensemble_scheduling: inOneof('scheduling_choice', messageField(Ensembling, 15)),
  instance_group: repeated(messageField(InstanceGroupSchema, 7)),
  default_model_filename: s('string', 8),
  cc_model_filenames: mapOf('string', s('string', 9)),
  metric_tags: mapOf('string', s('string', 10)),
  parameters: mapOf('string', messageField(Parameter, 14)),
  model_warmup: repeated(messageField(Warmup, 16)),
  model_operations: messageField(defineMessage('ModelOperations', { op_library_filename: repeated(s('string', 1)) }), 18),
  model_transaction_policy: messageField(defineMessage('ModelTransactionPolicy', { decoupled: s('bool', 1) }), 19),
  model_repository_agents: messageField(
    defineMessage('ModelRepositoryAgents', {
      agents: repeated(
        messageField(
          defineMessage('ModelRepositoryAgents.Agent', {
            name: s('string', 1),
            parameters: mapOf('string', s('string', 2)),
          }),
          1,
        ),
      ),
    }),
    23,
  ),
  response_cache: messageField(defineMessage('ModelResponseCache', { enable: s('bool', 1) }), 24),
  model_metrics: messageField(defineMessage('ModelMetrics', { metric_control: repeated(messageField(MetricControl, 1)) }), 26),
});
