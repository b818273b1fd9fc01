// ModelConfig: Triton's model_config.proto (triton-inference-server/common) as typed objects.
// Field names follow the protobuf (snake_case) on purpose: the same object is parsed from config.pbtxt,
// printed by GET /config and accepted as a JSON config override, so one spelling serves all three.
//
// Presence follows proto3: scalars, repeated fields and maps are always there (zero values when not
// written); a nested message is `undefined` until written, because Triton prints and checks message
// presence (`has_reshape()`, `has_dynamic_batching()`...). Members of a `oneof` are optional too.
// int64/uint64 fields are plain numbers; the parsers reject values outside the safe-integer range.
// model-config-schema.ts mirrors these types field by field (a test keeps the two in step).

export type ConfigDataType =
  | 'TYPE_INVALID'
  | 'TYPE_BOOL'
  | 'TYPE_UINT8'
  | 'TYPE_UINT16'
  | 'TYPE_UINT32'
  | 'TYPE_UINT64'
  | 'TYPE_INT8'
  | 'TYPE_INT16'
  | 'TYPE_INT32'
  | 'TYPE_INT64'
  | 'TYPE_FP16'
  | 'TYPE_FP32'
  | 'TYPE_FP64'
  | 'TYPE_STRING'
  | 'TYPE_BF16';

export type InstanceKind = 'KIND_AUTO' | 'KIND_GPU' | 'KIND_CPU' | 'KIND_MODEL';
export type SecondaryDeviceKind = 'KIND_NVDLA';
export type TimeoutAction = 'REJECT' | 'DELAY';
export type TensorFormat = 'FORMAT_NONE' | 'FORMAT_NHWC' | 'FORMAT_NCHW';
export type BatchInputKind =
  | 'BATCH_ELEMENT_COUNT'
  | 'BATCH_ACCUMULATED_ELEMENT_COUNT'
  | 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO'
  | 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE'
  | 'BATCH_ITEM_SHAPE'
  | 'BATCH_ITEM_SHAPE_FLATTEN';
export type BatchOutputKind = 'BATCH_SCATTER_WITH_INPUT_SHAPE';
export type ModelPriority = 'PRIORITY_DEFAULT' | 'PRIORITY_MAX' | 'PRIORITY_MIN';
export type SequenceControlKind = 'CONTROL_SEQUENCE_START' | 'CONTROL_SEQUENCE_READY' | 'CONTROL_SEQUENCE_END' | 'CONTROL_SEQUENCE_CORRID';

export interface ModelRateLimiterResource {
  name: string;
  global: boolean;
  count: number;
}
export interface ModelRateLimiter {
  resources: ModelRateLimiterResource[];
  priority: number;
}

export interface ModelInstanceSecondaryDevice {
  kind: SecondaryDeviceKind;
  device_id: number;
}

export interface ModelInstanceGroup {
  name: string;
  kind: InstanceKind;
  count: number;
  rate_limiter?: ModelRateLimiter;
  gpus: number[];
  secondary_devices: ModelInstanceSecondaryDevice[];
  profile: string[];
  passive: boolean;
  host_policy: string;
}

export interface ModelTensorReshape {
  shape: number[];
}

export interface ModelInput {
  name: string;
  data_type: ConfigDataType;
  format: TensorFormat;
  dims: number[];
  reshape?: ModelTensorReshape;
  is_shape_tensor: boolean;
  allow_ragged_batch: boolean;
  optional: boolean;
  is_non_linear_format_io: boolean;
}

export interface ModelOutput {
  name: string;
  data_type: ConfigDataType;
  dims: number[];
  reshape?: ModelTensorReshape;
  label_filename: string;
  is_shape_tensor: boolean;
  is_non_linear_format_io: boolean;
}

export interface BatchInput {
  kind: BatchInputKind;
  target_name: string[];
  data_type: ConfigDataType;
  source_input: string[];
}

export interface BatchOutput {
  target_name: string[];
  kind: BatchOutputKind;
  source_input: string[];
}

/** oneof policy_choice: exactly one member is set once the config is normalized. */
export interface ModelVersionPolicy {
  latest?: { num_versions: number };
  all?: Record<string, never>;
  specific?: { versions: number[] };
}

export interface ModelOptimizationGraphShape {
  dim: number[];
}
export interface ModelOptimizationGraphSpec {
  batch_size: number;
  input: Record<string, ModelOptimizationGraphShape>;
  graph_lower_bound?: { batch_size: number; input: Record<string, ModelOptimizationGraphShape> };
}
export interface ModelOptimizationAccelerator {
  name: string;
  parameters: Record<string, string>;
}

export interface ModelOptimizationPolicy {
  graph?: { level: number };
  priority: ModelPriority;
  cuda?: { graphs: boolean; busy_wait_events: boolean; graph_spec: ModelOptimizationGraphSpec[]; output_copy_stream: boolean };
  execution_accelerators?: {
    gpu_execution_accelerator: ModelOptimizationAccelerator[];
    cpu_execution_accelerator: ModelOptimizationAccelerator[];
  };
  input_pinned_memory?: { enable: boolean };
  output_pinned_memory?: { enable: boolean };
  gather_kernel_buffer_threshold: number;
  eager_batching: boolean;
}

export interface ModelQueuePolicy {
  timeout_action: TimeoutAction;
  default_timeout_microseconds: number;
  allow_timeout_override: boolean;
  max_queue_size: number;
}

export interface ModelDynamicBatching {
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  preserve_ordering: boolean;
  priority_levels: number;
  default_priority_level: number;
  /** Absent unless written; Triton then queues with ModelQueuePolicy's zero values (REJECT, no timeout). */
  default_queue_policy?: ModelQueuePolicy;
  /** Keyed by priority level (a uint64 written as a decimal string, as JSON map keys are). */
  priority_queue_policy: Record<string, ModelQueuePolicy>;
}

export interface ModelSequenceControl {
  kind: SequenceControlKind;
  int32_false_true: number[];
  fp32_false_true: number[];
  bool_false_true: boolean[];
  data_type: ConfigDataType;
}
export interface ModelSequenceControlInput {
  name: string;
  control: ModelSequenceControl[];
}

export interface ModelSequenceInitialState {
  data_type: ConfigDataType;
  dims: number[];
  /** oneof state_data */
  zero_data?: boolean;
  data_file?: string;
  name: string;
}

export interface ModelSequenceState {
  input_name: string;
  output_name: string;
  data_type: ConfigDataType;
  dims: number[];
  initial_state: ModelSequenceInitialState[];
  use_same_buffer_for_input_output: boolean;
  use_growable_memory: boolean;
}

export interface ModelSequenceStrategyDirect {
  max_queue_delay_microseconds: number;
  minimum_slot_utilization: number;
}
export interface ModelSequenceStrategyOldest {
  max_candidate_sequences: number;
  preferred_batch_size: number[];
  max_queue_delay_microseconds: number;
  preserve_ordering: boolean;
}

export interface ModelSequenceBatching {
  /** oneof strategy_choice */
  direct?: ModelSequenceStrategyDirect;
  oldest?: ModelSequenceStrategyOldest;
  max_sequence_idle_microseconds: number;
  control_input: ModelSequenceControlInput[];
  state: ModelSequenceState[];
  iterative_sequence: boolean;
}

export interface ModelEnsembleStep {
  model_name: string;
  /** -1 means the latest version. */
  model_version: number;
  /** model input name -> ensemble tensor name */
  input_map: Record<string, string>;
  /** model output name -> ensemble tensor name */
  output_map: Record<string, string>;
  model_namespace: string;
}

export interface ModelEnsembling {
  step: ModelEnsembleStep[];
  max_inflight_requests: number;
}

export interface ModelParameter {
  string_value: string;
}

export interface ModelWarmupInput {
  data_type: ConfigDataType;
  dims: number[];
  /** oneof input_data_type */
  zero_data?: boolean;
  random_data?: boolean;
  input_data_file?: string;
}

export interface ModelWarmup {
  name: string;
  batch_size: number;
  inputs: Record<string, ModelWarmupInput>;
  count: number;
}

export interface ModelOperations {
  op_library_filename: string[];
}
export interface ModelTransactionPolicy {
  decoupled: boolean;
}
export interface ModelRepositoryAgent {
  name: string;
  parameters: Record<string, string>;
}
export interface ModelRepositoryAgents {
  agents: ModelRepositoryAgent[];
}
export interface ModelResponseCache {
  enable: boolean;
}

export interface ModelMetricControl {
  metric_identifier?: { family: string };
  /** oneof metric_options */
  histogram_options?: { buckets: number[] };
}
export interface ModelMetrics {
  metric_control: ModelMetricControl[];
}

export interface ModelConfig {
  name: string;
  platform: string;
  backend: string;
  runtime: string;
  /** Always set once parsed: Triton's normalization defaults it to latest { num_versions: 1 }. */
  version_policy: ModelVersionPolicy;
  max_batch_size: number;
  input: ModelInput[];
  output: ModelOutput[];
  batch_input: BatchInput[];
  batch_output: BatchOutput[];
  optimization?: ModelOptimizationPolicy;
  /** oneof scheduling_choice: at most one of the three. */
  dynamic_batching?: ModelDynamicBatching;
  sequence_batching?: ModelSequenceBatching;
  ensemble_scheduling?: ModelEnsembling;
  instance_group: ModelInstanceGroup[];
  default_model_filename: string;
  cc_model_filenames: Record<string, string>;
  metric_tags: Record<string, string>;
  parameters: Record<string, ModelParameter>;
  model_warmup: ModelWarmup[];
  model_operations?: ModelOperations;
  model_transaction_policy?: ModelTransactionPolicy;
  model_repository_agents?: ModelRepositoryAgents;
  response_cache?: ModelResponseCache;
  model_metrics?: ModelMetrics;
}
