// Turns config.pbtxt text, or the JSON config the load API accepts, into a complete ModelConfig:
// read against the schema, proto3 zero values filled, Triton's autofill and normalization applied,
// then validated. Errors say where: `file:line:column:` for pbtxt, the JSON path for JSON.
import { HerdError, invalidArg } from '../../core/errors.ts';
import type { ModelConfig, ModelInstanceGroup } from './model-config.ts';
import {
  type FieldSchema,
  type MessageSchema,
  type MessageValue,
  type SingleValue,
  checkIntegerRange,
  fillDefaults,
  indexPath,
  joinPath,
  keyPath,
  roundToFloat32,
  setMapEntry,
} from './message-schema.ts';
import { InstanceGroupSchema, ModelConfigSchema } from './model-config-schema.ts';
import { refuseUnhonouredFields } from './audit-model-config.ts';
import { type SourceLocation, parseTextFormat } from './pbtxt-parser.ts';
import { validateModelConfig } from './validate-model-config.ts';

export interface ParseModelConfigOptions {
  /** Entries of the model's first version folder: lets Triton's autofill find the backend from `model.onnx` etc. */
  versionDirectoryEntries?: readonly string[];
  /**
   * Check inputs/outputs now (default true). Pass false when a backend will auto-complete them, and
   * run validateModelConfig on the completed config afterwards (Triton validates I/O after auto-complete).
   */
  validateIO?: boolean;
  /** Lets ensemble validation check that each step's model exists in the repository. */
  modelExists?: (name: string) => boolean;
  /** Also refuse the fields Herd cannot honour (what loading a model needs; plain parsing keeps them). */
  refuseUnhonoured?: boolean;
}

/** config.pbtxt text -> ModelConfig. `expectedName` is the model's folder name: it fills an empty `name` and must equal it. */
export function parsePbtxtModelConfig(text: string, file: string, expectedName?: string, options: ParseModelConfigOptions = {}): ModelConfig {
  const { message, locations } = parseTextFormat(text, ModelConfigSchema, file);
  return completeModelConfig(message, expectedName, options, (err) => {
    const at = err.param === undefined ? undefined : findLocation(err.param, locations);
    return at ? `${file}:${at.line}:${at.column}` : file;
  });
}

/**
 * JSON config (Triton's GET /config shape, as the load API's `config` parameter) -> ModelConfig.
 * Takes JSON text or an already parsed value. Reads it as protobuf's JSON parser does for Triton:
 * proto or lowerCamel field names, enums by name (any case) or number, 64-bit integers as numbers
 * or strings, null as "not set", unknown fields rejected.
 */
export function parseJsonModelConfig(json: unknown, source: string, expectedName?: string, options: ParseModelConfigOptions = {}): ModelConfig {
  let value = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (err) {
      throw invalidArg(`${source}: invalid JSON: ${(err as Error).message}`);
    }
  }
  const message = readJsonMessage(value, ModelConfigSchema, '', source);
  return completeModelConfig(message, expectedName, options, () => source);
}

function completeModelConfig(message: MessageValue, expectedName: string | undefined, options: ParseModelConfigOptions, where: (err: HerdError) => string): ModelConfig {
  // The schema mirrors ModelConfig field by field (test/serving/model-config/model-config-schema.test.ts
  // keeps them in step), so after fillDefaults the object has exactly the typed shape.
  const config = fillDefaults(ModelConfigSchema, message) as unknown as ModelConfig;
  try {
    autoCompleteBackendFields(config, expectedName ?? config.name, options.versionDirectoryEntries);
    normalizeModelConfig(config);
    normalizeInstanceGroups(config);
    validateModelConfig(config, { expectedName, validateIO: options.validateIO, modelExists: options.modelExists });
    if (options.refuseUnhonoured) refuseUnhonouredFields(config);
  } catch (err) {
    if (!(err instanceof HerdError)) throw err;
    const path = err.param ? ` (${err.param})` : '';
    throw new HerdError(err.code, `${where(err)}: ${err.message}${path}`, { param: err.param, cause: err });
  }
  return config;
}

/**
 * `file:line:column` of a field path in config.pbtxt text (its nearest written ancestor), or just `file`:
 * for problems found after parsing, such as an ensemble step that does not fit its model.
 */
export function locateConfigField(text: string, file: string, path: string): string {
  try {
    const at = findLocation(path, parseTextFormat(text, ModelConfigSchema, file).locations);
    return at ? `${file}:${at.line}:${at.column}` : file;
  } catch {
    return file;
  }
}

/** Location of `path` or, when it was not written (a default), of its nearest written ancestor. */
function findLocation(path: string, locations: ReadonlyMap<string, SourceLocation>): SourceLocation | undefined {
  for (let p = path; p; p = p.replace(/(\[(\d+|"(?:[^"\\]|\\.)*")\]|\.?[A-Za-z0-9_]+)$/, '')) {
    const at = locations.get(p);
    if (at) return at;
  }
  return undefined;
}

// ---- Triton's autofill and normalization (core/src/model_config_utils.cc) ----

const TF_SAVEDMODEL = 'model.savedmodel';
const TF_GRAPHDEF = 'model.graphdef';

/**
 * AutoCompleteBackendFields: name from the folder; platform <-> backend and default_model_filename for
 * the backends Triton knows (onnxruntime_onnx <-> onnxruntime, model.onnx...), from the version folder's
 * files when the config names neither. Herd's own `js` backend is left alone: it picks model.mjs/model.js.
 */
export function autoCompleteBackendFields(config: ModelConfig, modelName: string, versionEntries?: readonly string[]): void {
  const has = (file: string) => versionEntries?.includes(file) ?? false;
  const unnamed = () => !config.platform && !config.default_model_filename && versionEntries !== undefined;
  if (!config.name) config.name = modelName;

  if (!config.platform && (!config.backend || config.backend === 'tensorflow')) {
    if (config.default_model_filename === TF_SAVEDMODEL) config.platform = 'tensorflow_savedmodel';
    else if (config.default_model_filename === TF_GRAPHDEF) config.platform = 'tensorflow_graphdef';
    else if (unnamed()) {
      if (has(TF_SAVEDMODEL)) config.platform = 'tensorflow_savedmodel';
      if (has(TF_GRAPHDEF)) config.platform = 'tensorflow_graphdef';
    }
  }
  if (config.platform === 'tensorflow_savedmodel' || config.platform === 'tensorflow_graphdef') {
    config.backend ||= 'tensorflow';
    config.default_model_filename ||= config.platform === 'tensorflow_savedmodel' ? TF_SAVEDMODEL : TF_GRAPHDEF;
    return;
  }
  const known: { backend: string; platform?: string; file: string }[] = [
    { backend: 'tensorrt', platform: 'tensorrt_plan', file: 'model.plan' },
    { backend: 'onnxruntime', platform: 'onnxruntime_onnx', file: 'model.onnx' },
    { backend: 'openvino', file: 'model.xml' },
  ];
  for (const { backend, platform, file } of known) {
    if (!config.backend && ((platform && config.platform === platform) || config.default_model_filename === file || (unnamed() && has(file)))) {
      config.backend = backend;
    }
    if (config.backend === backend) {
      if (platform) config.platform ||= platform;
      config.default_model_filename ||= file;
      return;
    }
  }
  if (!config.backend) {
    if (['pytorch_libtorch', 'libtorch', 'torch_aoti'].includes(config.platform) || ['model.pt', 'model.pt2'].includes(config.default_model_filename)) {
      config.backend = 'pytorch';
    } else if (unnamed() && (has('model.pt') || has('model.pt2'))) {
      config.backend = 'pytorch';
      config.platform = has('model.pt') ? 'pytorch_libtorch' : 'torch_aoti';
    }
  }
  if (config.backend === 'pytorch') {
    if (!config.platform) {
      config.platform = 'pytorch_libtorch';
      config.default_model_filename ||= 'model.pt';
    } else if (config.platform === 'torch_aoti') config.default_model_filename ||= 'model.pt2';
    return;
  }
  if (!config.backend && (config.default_model_filename === 'model.py' || (unnamed() && has('model.py')))) config.backend = 'python';
  if (config.backend === 'python') {
    config.default_model_filename ||= 'model.py';
    return;
  }
  // A custom backend named by the model itself: model name `model.<backend>`.
  if (!config.backend && !config.platform && !config.default_model_filename) {
    const dot = modelName.indexOf('.');
    if (dot < 0) {
      throw invalidArg(
        `Invalid model name: Could not determine backend for model '${modelName}' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'.`,
      );
    }
    config.backend = modelName.slice(dot + 1);
    config.default_model_filename = `model.${config.backend}`;
  }
}

/** Triton's sequence batcher idle timeout when the config gives none (SEQUENCE_IDLE_DEFAULT_MICROSECONDS). */
export const SEQUENCE_IDLE_DEFAULT_MICROSECONDS = 1_000_000;

/** NormalizeModelConfig: version policy, preferred batch sizes, sequence idle timeout, pinned memory. Idempotent. */
export function normalizeModelConfig(config: ModelConfig): void {
  if (!config.version_policy) config.version_policy = { latest: { num_versions: 1 } };
  const dynamic = config.dynamic_batching;
  if (dynamic && dynamic.preferred_batch_size.length === 0 && config.max_batch_size > 0) {
    dynamic.preferred_batch_size.push(config.max_batch_size);
  }
  const sequence = config.sequence_batching;
  if (sequence) {
    if (sequence.max_sequence_idle_microseconds === 0) sequence.max_sequence_idle_microseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS;
    if (sequence.oldest && sequence.oldest.preferred_batch_size.length === 0 && config.max_batch_size > 0) {
      sequence.oldest.preferred_batch_size.push(config.max_batch_size);
    }
  }
  // Ensembles get no optimization block: Triton rejects one written for an ensemble.
  if (!config.ensemble_scheduling) {
    config.optimization ??= { priority: 'PRIORITY_DEFAULT', gather_kernel_buffer_threshold: 0, eager_batching: false };
    config.optimization.input_pinned_memory ??= { enable: true };
    config.optimization.output_pinned_memory ??= { enable: true };
  }
}

/**
 * NormalizeInstanceGroup for a server without GPUs: one group named after the model when none is
 * written; unnamed groups become `<model>_<index>`; KIND_AUTO becomes KIND_CPU; an unset count (0)
 * becomes Triton's default, 2 for onnxruntime/tensorflow on CPU and 1 otherwise. Negative counts are
 * kept for validation to reject (Triton would silently replace them). Idempotent.
 */
export function normalizeInstanceGroups(config: ModelConfig): void {
  if (config.ensemble_scheduling) return;
  if (config.instance_group.length === 0) {
    config.instance_group.push(fillDefaults(InstanceGroupSchema, { name: config.name }) as unknown as ModelInstanceGroup);
  }
  config.instance_group.forEach((group, index) => {
    if (!group.name) group.name = `${config.name}_${index}`;
    if (group.kind === 'KIND_AUTO') group.kind = 'KIND_CPU';
    if (group.count === 0) group.count = group.kind === 'KIND_CPU' && ['tensorflow', 'onnxruntime'].includes(config.backend) ? 2 : 1;
  });
}

// ---- JSON reading (protobuf's JsonStringToMessage, as Triton configures it) ----

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

function jsonFail(source: string, message: string, path: string): never {
  throw invalidArg(`${source}: ${message}${path ? ` (${path})` : ''}`, path ? { param: path } : undefined);
}

function readJsonMessage(value: unknown, schema: MessageSchema, path: string, source: string): MessageValue {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) jsonFail(source, `expected an object for ${schema.name}, got ${kindOf(value)}`, path);
  const message: MessageValue = {};
  const spelled = new Map<string, string>();
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const field = schema.byName.get(key) ?? schema.fields.find((f) => f.jsonName === key);
    if (!field) return jsonFail(source, `unknown field '${key}' in ${schema.name}`, path);
    const fieldPath = joinPath(path, field.name);
    if (spelled.has(field.name)) jsonFail(source, `field '${field.name}' is given twice, as '${spelled.get(field.name)}' and '${key}'`, fieldPath);
    spelled.set(field.name, key);
    if (raw === null) continue; // protobuf JSON: null leaves the field unset
    const other = field.oneof === undefined ? undefined : schema.fields.find((f) => f.oneof === field.oneof && message[f.name] !== undefined);
    if (other) jsonFail(source, `field '${field.name}' is specified along with field '${other.name}', but only one member of oneof '${field.oneof}' may be set`, fieldPath);
    message[field.name] = readJsonField(field, raw, fieldPath, source);
  }
  return message;
}

function readJsonField(field: FieldSchema, raw: unknown, path: string, source: string): MessageValue[string] {
  const fail = (message: string) => jsonFail(source, message, path);
  if (field.label === 'repeated') {
    if (!Array.isArray(raw)) return fail(`expected an array for repeated field '${field.name}', got ${kindOf(raw)}`);
    return raw.map((item, i) => readJsonSingle(field, item, indexPath(path, i), source));
  }
  if (field.label !== 'map') return readJsonSingle(field, raw, path, source);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return fail(`expected an object for map field '${field.name}', got ${kindOf(raw)}`);
  const keyType = field.entry!.fields[0].type;
  const map: MessageValue = {};
  for (const [rawKey, item] of Object.entries(raw as Record<string, unknown>)) {
    let key = rawKey;
    // JSON object keys are strings; integer-keyed maps (priority_queue_policy) spell the number.
    if (keyType.kind === 'scalar' && keyType.scalar !== 'string' && keyType.scalar !== 'bool') {
      if (!/^-?\d+$/.test(rawKey)) fail(`map key '${rawKey}' of field '${field.name}' is not a ${keyType.scalar}`);
      const problem = checkIntegerRange(keyType.scalar, BigInt(rawKey));
      if (problem) fail(`map key of field '${field.name}': ${problem}`);
      key = String(BigInt(rawKey));
    }
    setMapEntry(map, key, readJsonSingle(field, item, keyPath(path, key), source));
  }
  return map;
}

function readJsonSingle(field: FieldSchema, raw: unknown, path: string, source: string): SingleValue {
  const fail = (message: string) => jsonFail(source, message, path);
  const type = field.type;
  if (type.kind === 'message') return readJsonMessage(raw, type.message, path, source);
  if (type.kind === 'enum') {
    const names = [...type.enum.byName.keys()];
    const valid = `valid values: ${names.join(', ')}`;
    if (typeof raw === 'string') {
      // Triton parses with case_insensitive_enum_parsing.
      return names.find((n) => n.toUpperCase() === raw.toUpperCase()) ?? fail(`invalid value '${raw}' for ${type.enum.name} field '${field.name}'; ${valid}`);
    }
    if (typeof raw === 'number') return type.enum.byNumber.get(raw) ?? fail(`invalid number ${raw} for ${type.enum.name} field '${field.name}'; ${valid}`);
    return fail(`expected a ${type.enum.name} name for field '${field.name}', got ${kindOf(raw)}; ${valid}`);
  }
  const scalar = type.scalar;
  if (scalar === 'string') return typeof raw === 'string' ? raw : fail(`expected a string for field '${field.name}', got ${kindOf(raw)}`);
  if (scalar === 'bool') return typeof raw === 'boolean' ? raw : fail(`expected true or false for bool field '${field.name}', got ${kindOf(raw)}`);
  if (scalar === 'float' || scalar === 'double') {
    const special: Record<string, number> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };
    const value =
      typeof raw === 'number'
        ? raw
        : typeof raw === 'string' && raw in special
          ? special[raw]
          : typeof raw === 'string' && raw.trim() !== '' && Number.isFinite(Number(raw))
            ? Number(raw)
            : fail(`expected a number for ${scalar} field '${field.name}', got ${kindOf(raw)}`);
    return scalar === 'float' ? roundToFloat32(value) : value;
  }
  // Integers: protobuf writes 64-bit ones as strings, so both spellings are accepted for every width.
  let value: bigint;
  if (typeof raw === 'number' && Number.isInteger(raw)) value = BigInt(raw);
  else if (typeof raw === 'string' && /^-?\d+$/.test(raw)) value = BigInt(raw);
  else return fail(`expected an integer for ${scalar} field '${field.name}', got ${kindOf(raw)}`);
  const problem = checkIntegerRange(scalar, value);
  return problem ? fail(`${problem} for field '${field.name}'`) : Number(value);
}
