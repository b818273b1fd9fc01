// ModelConfig: Triton's model_config.proto as a typed object. Field names follow the protobuf
// (snake_case) on purpose: the same object is parsed from config.pbtxt, printed by GET /config
// and accepted as a JSON config override, so one spelling serves all three.

export type ConfigDataType =
  | 'TYPE_INVALID' | 'TYPE_BOOL' | 'TYPE_UINT8' | 'TYPE_UINT16' | 'TYPE_UINT32' | 'TYPE_UINT64'
  | 'TYPE_INT8' | 'TYPE_INT16' | 'TYPE_INT32' | 'TYPE_INT64'
  | 'TYPE_FP16' | 'TYPE_FP32' | 'TYPE_FP64' | 'TYPE_STRING' | 'TYPE_BF16';

export type InstanceKind = 'KIND_AUTO' | 'KIND_GPU' | 'KIND_CPU' | 'KIND_MODEL';
export type TimeoutAction = 'REJECT' | 'DELAY';
export type TensorFormat = 'FORMAT_NONE' | 'FORMAT_NHWC' | 'FORMAT_NCHW';

export interface ModelTensorReshape { shape: number[] }

export interface ModelInput {
  name: string;
  data_type: ConfigDataType;
  format: TensorFormat;
  dims: number[];
  reshape?: ModelTensorReshape;
  is_shape_tensor: boolean;
  is_non_linear_format_io: boolean;
  allow_ragged_batch: boolean;
  optional: boolean;
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

export interface ModelVersionPolicy {
  latest?: { num_versions: number };
  all?: Record<string, never>;
  specific?: { versions: number[] };
}

export interface ModelRateLimiterResource { name: string; global: boolean; count: number }
export interface ModelRateLimiter { resources: ModelRateLimiterResource[]; priority: number }

export interface ModelInstanceGroup {
  name: string;
  kind: InstanceKind;
  count: number;
  rate_limiter?: ModelRateLimiter;
  gpus: number[];
  secondary_devices: { kind: string; device_id: number }[];
  profile: string[];
  passive: boolean;
  host_policy: string;
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
  default_queue_policy?: ModelQueuePolicy;
  priority_queue_policy: Record<string, ModelQueuePolicy>;
}

/** Sequence batching is kept as parsed data; its scheduler comes with the batching work. */
export interface ModelSequenceBatching {
  max_sequence_idle_microseconds: number;
  control_input: {
    name: string;
    control: { kind: string; int32_false_true: number[]; fp32_false_true: number[]; bool_false_true: boolean[]; data_type: ConfigDataType }[];
  }[];
  direct?: { max_queue_delay_microseconds: number; minimum_slot_utilization: number };
  oldest?: { max_candidate_sequences: number; preferred_batch_size: number[]; max_queue_delay_microseconds: number; preserve_ordering: boolean };
  state: unknown[];
  iterative_sequence: boolean;
}

export interface ModelEnsembleStep {
  model_name: string;
  model_version: number;
  input_map: Record<string, string>;
  output_map: Record<string, string>;
  model_namespace: string;
}

export interface ModelParameter { string_value: string }

export interface ModelConfig {
  name: string;
  platform: string;
  backend: string;
  runtime: string;
  version_policy: ModelVersionPolicy;
  max_batch_size: number;
  input: ModelInput[];
  output: ModelOutput[];
  batch_input: unknown[];
  batch_output: unknown[];
  optimization?: Record<string, unknown>;
  dynamic_batching?: ModelDynamicBatching;
  sequence_batching?: ModelSequenceBatching;
  ensemble_scheduling?: { step: ModelEnsembleStep[] };
  instance_group: ModelInstanceGroup[];
  default_model_filename: string;
  cc_model_filenames: Record<string, string>;
  metric_tags: Record<string, string>;
  parameters: Record<string, ModelParameter>;
  model_warmup: unknown[];
  model_operations?: Record<string, unknown>;
  model_transaction_policy?: { decoupled: boolean };
  model_repository_agents?: Record<string, unknown>;
  response_cache?: { enable: boolean };
}
