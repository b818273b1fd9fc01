// ONNX Runtime session options from a model config, honouring Triton's onnxruntime backend parameter keys
// (intra_op_thread_count, inter_op_thread_count, execution_mode, enable_mem_arena, enable_mem_pattern,
// session.* config entries) and optimization { graph { level } }.
import type { InferenceSession } from 'onnxruntime-node';
import { invalidArg } from '../../../core/errors.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';

// Defaults that differ from ORT's own, for a server sharing a few cores with the Node event loop:
// ORT's default intra-op pool takes every core and spins between ops, which starves the event loop on a
// small machine: one thread per instance and no spinning unless the config asks otherwise
// (docs/decisions/onnx-session-threads.md).
const DEFAULT_INTRA_OP_THREADS = 1;
const DEFAULT_CONFIG_ENTRIES: Readonly<Record<string, string>> = {
  'session.intra_op.allow_spinning': '0',
  'session.inter_op.allow_spinning': '0',
};

type GraphOptimizationLevel = NonNullable<InferenceSession.SessionOptions['graphOptimizationLevel']>;

function parameter(config: ModelConfig, key: string): string | undefined {
  return config.parameters?.[key]?.string_value;
}

function parseCount(config: ModelConfig, key: string): number | undefined {
  const raw = parameter(config, key);
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (!/^\d+$/.test(value)) {
    throw invalidArg(`model '${config.name}': parameter '${key}' must be a non-negative integer, got '${raw}'`);
  }
  return Number(value);
}

function parseBool(config: ModelConfig, key: string): boolean | undefined {
  const raw = parameter(config, key);
  if (raw === undefined) return undefined;
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(value)) return true;
  if (['false', '0', 'no', 'off'].includes(value)) return false;
  throw invalidArg(`model '${config.name}': parameter '${key}' must be true or false, got '${raw}'`);
}

/** Triton's levels: -1 basic, 1 extended, 2 disabled, anything else (0, absent) all. */
export function mapGraphOptimizationLevel(config: ModelConfig): GraphOptimizationLevel {
  const level = config.optimization?.graph?.level;
  if (level === -1) return 'basic';
  if (level === 1) return 'extended';
  if (level === 2) return 'disabled';
  return 'all';
}

/** Session options for one instance; throws INVALID_ARG naming the parameter when a value is malformed. */
export function createSessionOptions(config: ModelConfig): InferenceSession.SessionOptions {
  const options: InferenceSession.SessionOptions = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: mapGraphOptimizationLevel(config),
  };

  // 0 keeps Triton's meaning: let ORT choose (one thread per core).
  const intra = parseCount(config, 'intra_op_thread_count') ?? DEFAULT_INTRA_OP_THREADS;
  if (intra > 0) options.intraOpNumThreads = intra;
  const inter = parseCount(config, 'inter_op_thread_count');
  if (inter !== undefined && inter > 0) options.interOpNumThreads = inter;

  const mode = parameter(config, 'execution_mode');
  if (mode !== undefined) {
    if (mode.trim() !== '0' && mode.trim() !== '1') {
      throw invalidArg(`model '${config.name}': parameter 'execution_mode' must be 0 (sequential) or 1 (parallel), got '${mode}'`);
    }
    options.executionMode = mode.trim() === '0' ? 'sequential' : 'parallel';
  }
  const arena = parseBool(config, 'enable_mem_arena');
  if (arena !== undefined) options.enableCpuMemArena = arena;
  const pattern = parseBool(config, 'enable_mem_pattern');
  if (pattern !== undefined) options.enableMemPattern = pattern;

  // Every `session.*` parameter is an ORT session config entry (onnxruntime_session_options_config_keys.h);
  // the Node binding takes them flat through `extra`, values as strings.
  const entries: Record<string, string> = { ...DEFAULT_CONFIG_ENTRIES };
  for (const [key, value] of Object.entries(config.parameters ?? {})) {
    if (key.startsWith('session.')) entries[key] = value.string_value;
  }
  options.extra = entries;
  return options;
}
