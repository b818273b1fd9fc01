// Shared helpers for the onnxruntime backend tests: ModelConfig literals (no pbtxt parser needed),
// load contexts, requests, and the Triton test repository's configs written out by hand.
import { join } from 'node:path';
import type {
  ConfigDataType,
  ModelConfig,
  ModelInput,
  ModelOutput,
  ModelSequenceBatching,
  ModelSequenceControlInput,
  SequenceControlKind,
} from '../../../src/serving/model-config/model-config.ts';
import type { BackendLoadContext, InferenceRequest } from '../../../src/serving/backends/backend.ts';
import type { Tensor } from '../../../src/core/tensor.ts';
import { TRITON_MODEL_REPOSITORY } from '../../triton-testdata.ts';

export const TRITON_REPO = TRITON_MODEL_REPOSITORY;

export function createTestConfig(fields: Partial<ModelConfig> & { name: string }): ModelConfig {
  return {
    platform: 'onnxruntime_onnx',
    backend: '',
    runtime: '',
    version_policy: { latest: { num_versions: 1 } },
    max_batch_size: 0,
    input: [],
    output: [],
    batch_input: [],
    batch_output: [],
    instance_group: [],
    default_model_filename: '',
    cc_model_filenames: {},
    metric_tags: {},
    parameters: {},
    model_warmup: [],
    ...fields,
  };
}

export function configInput(name: string, data_type: ConfigDataType, dims: number[], extra: Partial<ModelInput> = {}): ModelInput {
  return {
    name,
    data_type,
    dims,
    format: 'FORMAT_NONE',
    is_shape_tensor: false,
    is_non_linear_format_io: false,
    allow_ragged_batch: false,
    optional: false,
    ...extra,
  };
}

export function configOutput(name: string, data_type: ConfigDataType, dims: number[], extra: Partial<ModelOutput> = {}): ModelOutput {
  return { name, data_type, dims, label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false, ...extra };
}

export function createLoadContext(config: ModelConfig, modelPath: string, kind: BackendLoadContext['instanceKind'] = 'KIND_CPU'): BackendLoadContext {
  return { config, modelPath, versionPath: join(modelPath, '1'), version: 1, instanceName: `${config.name}_0_0`, instanceKind: kind };
}

export function createRequest(modelName: string, inputs: Tensor[], requestedOutputs: string[] = []): InferenceRequest {
  return { id: '', modelName, modelVersion: 1, inputs, requestedOutputs, parameters: {} };
}

function intControl(name: string, kind: SequenceControlKind): ModelSequenceControlInput {
  return { name, control: [{ kind, int32_false_true: [0, 1], fp32_false_true: [], bool_false_true: [], data_type: 'TYPE_INVALID' }] };
}

function sequenceBatching(controls: ModelSequenceBatching['control_input']): ModelSequenceBatching {
  return { max_sequence_idle_microseconds: 1_000_000, control_input: controls, state: [], iterative_sequence: false };
}

function addSubConfig(name: string, type: ConfigDataType): ModelConfig {
  return createTestConfig({
    name,
    max_batch_size: 8,
    input: [configInput('INPUT0', type, [16]), configInput('INPUT1', type, [16])],
    output: [configOutput('OUTPUT0', type, [16]), configOutput('OUTPUT1', type, [16])],
  });
}

/** The configs of the Triton test repository's ONNX models, transcribed from their config.pbtxt. */
export function tritonTestConfigs(): Record<string, ModelConfig> {
  return {
    simple: addSubConfig('simple', 'TYPE_INT32'),
    simple_int8: addSubConfig('simple_int8', 'TYPE_INT8'),
    simple_string: addSubConfig('simple_string', 'TYPE_STRING'),
    simple_sequence: createTestConfig({
      name: 'simple_sequence',
      max_batch_size: 8,
      sequence_batching: sequenceBatching([intControl('START', 'CONTROL_SEQUENCE_START'), intControl('READY', 'CONTROL_SEQUENCE_READY')]),
      input: [configInput('INPUT', 'TYPE_INT32', [1])],
      output: [configOutput('OUTPUT', 'TYPE_INT32', [1])],
      instance_group: [{ name: '', kind: 'KIND_CPU', count: 1, gpus: [], secondary_devices: [], profile: [], passive: false, host_policy: '' }],
    }),
    simple_dyna_sequence: createTestConfig({
      name: 'simple_dyna_sequence',
      max_batch_size: 8,
      sequence_batching: sequenceBatching([
        intControl('START', 'CONTROL_SEQUENCE_START'),
        intControl('END', 'CONTROL_SEQUENCE_END'),
        intControl('READY', 'CONTROL_SEQUENCE_READY'),
        { name: 'CORRID', control: [{ kind: 'CONTROL_SEQUENCE_CORRID', int32_false_true: [], fp32_false_true: [], bool_false_true: [], data_type: 'TYPE_UINT64' }] },
      ]),
      input: [configInput('INPUT', 'TYPE_INT32', [1])],
      output: [configOutput('OUTPUT', 'TYPE_INT32', [1])],
      parameters: { execute_delay_ms: { string_value: '3' } },
    }),
  };
}
