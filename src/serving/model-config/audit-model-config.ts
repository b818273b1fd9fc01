// Which config.pbtxt fields Herd cannot honour: refused at load (Triton would act on them and Herd
// cannot), or accepted with a warning (Triton ignores them for a CPU-only server or for this backend too).
// docs/serving.md "Model configuration fields" is the full table; a test keeps the two in step.
import { invalidArg } from '../../core/errors.ts';
import type { ModelConfig } from './model-config.ts';
import { zeroValue, type FieldSchema, type MessageSchema, type MessageValue } from './message-schema.ts';
import { ModelConfigSchema } from './model-config-schema.ts';

export interface FieldRule {
  /** Dotted field path without indexes, e.g. `optimization.cuda.graphs`. */
  path: string;
  /** Why Herd does not act on the field. */
  reason: string;
  /** Restricts the rule to some configs (e.g. one backend); default: every config setting the field. */
  when?: (config: ModelConfig) => boolean;
  /**
   * The value Triton's normalization gives the field when the config leaves it out: such a value is not
   * the user's choice and gets no warning (every model has input_pinned_memory { enable: true }).
   */
  normalized?: boolean | number | string;
}

const isJs = (config: ModelConfig) => config.backend === 'js';

/** Set and refused: loading would mean doing something else than what the config asks. */
export const REFUSED_FIELDS: readonly FieldRule[] = [
  {
    path: 'batch_input',
    reason:
      "ragged batching's batch inputs are not supported: Herd does not build the BATCH_* tensors; remove batch_input (requests with allow_ragged_batch inputs are then executed one by one)",
  },
  { path: 'batch_output', reason: 'batch outputs (BATCH_SCATTER_WITH_INPUT_SHAPE) are not supported: Herd does not scatter a ragged batch output' },
  { path: 'optimization.cuda.graphs', reason: 'CUDA graphs need a GPU; Herd runs on the CPU only' },
  { path: 'optimization.cuda.graph_spec', reason: 'CUDA graphs need a GPU; Herd runs on the CPU only' },
  { path: 'optimization.cuda.busy_wait_events', reason: 'CUDA events need a GPU; Herd runs on the CPU only' },
  { path: 'optimization.cuda.output_copy_stream', reason: 'CUDA streams need a GPU; Herd runs on the CPU only' },
  {
    path: 'optimization.execution_accelerators.gpu_execution_accelerator',
    reason: 'GPU execution accelerators (TensorRT, CUDA) need a GPU; Herd runs ONNX Runtime on the CPU execution provider only',
  },
  { path: 'optimization.execution_accelerators.cpu_execution_accelerator', reason: "CPU execution accelerators (OpenVINO) are not available in Herd's ONNX Runtime build" },
  { path: 'instance_group.secondary_devices', reason: 'secondary devices (NVDLA) are not available; Herd runs on the CPU only' },
  { path: 'model_operations.op_library_filename', reason: 'custom operation libraries cannot be loaded: onnxruntime-node registers no custom op libraries' },
  { path: 'model_repository_agents.agents', reason: 'repository agents (e.g. checksum) are not supported; Triton refuses an agent it cannot find too' },
  { path: 'sequence_batching.state', reason: 'implicit state is not supported: Herd feeds sequence control tensors but carries no state between requests' },
  { path: 'sequence_batching.iterative_sequence', reason: 'iterative sequences are not supported: Herd does not re-enqueue a request for its next iteration' },
];

/** Set, accepted and warned about: no effect in Herd, and none in Triton on a CPU-only server for these backends. */
export const IGNORED_FIELDS: readonly FieldRule[] = [
  { path: 'runtime', reason: "Herd's backends are built in: no runtime library is chosen" },
  { path: 'optimization.priority', reason: 'model priority sets GPU stream priorities (TensorFlow/TensorRT backends); it has no effect on the CPU' },
  { path: 'optimization.input_pinned_memory.enable', reason: 'pinned memory only speeds up CPU-GPU copies; there are none on a CPU-only server', normalized: true },
  { path: 'optimization.output_pinned_memory.enable', reason: 'pinned memory only speeds up CPU-GPU copies; there are none on a CPU-only server', normalized: true },
  { path: 'optimization.gather_kernel_buffer_threshold', reason: 'the gather kernel is a GPU kernel; it has no effect on the CPU' },
  { path: 'optimization.eager_batching', reason: 'eager batching is a TensorRT backend option' },
  { path: 'optimization.graph.level', reason: 'graph optimization levels apply to ONNX Runtime and TensorFlow models; a js model has no graph', when: isJs },
  { path: 'instance_group.host_policy', reason: 'host policies (NUMA placement) need --host-policy settings, which Herd does not have' },
  { path: 'cc_model_filenames', reason: 'per-compute-capability model files are chosen on GPUs only (TensorRT)' },
  {
    path: 'model_metrics.metric_control',
    reason: "Herd reports latencies as counters; the histograms these options shape (Triton's --metrics-config histogram_latencies=true) are not offered",
  },
  { path: 'sequence_batching.direct', reason: 'sequences are not pinned to batch slots: requests of a sequence are scheduled like any other (one instance keeps them in order)' },
  { path: 'sequence_batching.oldest', reason: 'sequences are not pinned to batch slots: requests of a sequence are scheduled like any other (one instance keeps them in order)' },
  // 1 s is Triton's SEQUENCE_IDLE_DEFAULT_MICROSECONDS, which normalization fills in (parse-model-config.ts).
  {
    path: 'sequence_batching.max_sequence_idle_microseconds',
    reason: 'Herd keeps no per-sequence slot, so there is nothing to release when a sequence is idle',
    normalized: 1_000_000,
  },
];

export interface FieldWarning {
  path: string;
  message: string;
}

/** Throws INVALID_ARG (param = the field's path, so pbtxt errors carry file:line:column) for the first refused field set. */
export function refuseUnhonouredFields(config: ModelConfig): void {
  for (const rule of REFUSED_FIELDS) {
    if (rule.when && !rule.when(config)) continue;
    const where = findSetField(config, rule.path);
    if (where !== undefined) throw invalidArg(`model '${config.name}': '${rule.path}' is set but ${rule.reason}`, { param: where });
  }
  // Each tag becomes the Prometheus label `_<key>`, which allows letters, digits and underscores only.
  for (const key of Object.keys(config.metric_tags)) {
    if (!/^[A-Za-z0-9_]+$/.test(key)) {
      throw invalidArg(`model '${config.name}': metric tag '${key}' cannot be a metrics label ('_${key}'): use letters, digits and '_'`, {
        param: `metric_tags[${JSON.stringify(key)}]`,
      });
    }
  }
}

/** One warning per ignored field that is set; `hasResponseCache` tells whether response_cache can act. */
export function listIgnoredFields(config: ModelConfig, options: { hasResponseCache: boolean }): FieldWarning[] {
  const warnings: FieldWarning[] = [];
  for (const rule of IGNORED_FIELDS) {
    if (rule.when && !rule.when(config)) continue;
    if (findSetField(config, rule.path, rule.normalized) !== undefined) warnings.push({ path: rule.path, message: `'${rule.path}' is set and ignored: ${rule.reason}` });
  }
  if (config.response_cache?.enable && !options.hasResponseCache) {
    warnings.push({
      path: 'response_cache.enable',
      message:
        "'response_cache.enable' is set but the server has no response cache (--cache-config local,size=BYTES, or serving.cache in herd.yaml): responses are not cached, as in Triton",
    });
  }
  return warnings;
}

/**
 * The indexed path (`instance_group[1].passive`) of the first place `path` is set, or undefined. Set means
 * what protobuf's text format would print: a present message, a non-empty list or map, a non-zero scalar.
 */
export function findSetField(config: ModelConfig, path: string, normalized?: boolean | number | string): string | undefined {
  return findIn(ModelConfigSchema, config as unknown as MessageValue, path.split('.'), '', normalized);
}

function findIn(schema: MessageSchema, message: MessageValue, names: readonly string[], prefix: string, normalized: unknown): string | undefined {
  const [name, ...rest] = names;
  const field = name === undefined ? undefined : schema.byName.get(name);
  if (!field || name === undefined) return undefined;
  const here = prefix ? `${prefix}.${name}` : name;
  const value = message[name];
  if (value === undefined) return undefined;
  if (rest.length === 0) {
    const set = normalized === undefined ? isSet(field, value) : value !== normalized;
    return set ? here : undefined;
  }
  if (field.type.kind !== 'message') return undefined;
  const inner = field.type.message;
  if (field.label === 'repeated') {
    const items = value as MessageValue[];
    for (let i = 0; i < items.length; i++) {
      const found = findIn(inner, items[i] as MessageValue, rest, `${here}[${i}]`, normalized);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (field.label === 'map') {
    for (const [key, item] of Object.entries(value as MessageValue)) {
      const found = findIn(inner, item as MessageValue, rest, `${here}[${JSON.stringify(key)}]`, normalized);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return findIn(inner, value as MessageValue, rest, here, normalized);
}

function isSet(field: FieldSchema, value: unknown): boolean {
  if (field.label === 'repeated') return (value as unknown[]).length > 0;
  if (field.label === 'map') return Object.keys(value as object).length > 0;
  if (field.type.kind === 'message') return true;
  // A oneof member is set by being present, whatever its value.
  if (field.oneof !== undefined) return true;
  return value !== zeroValue(field.type);
}
