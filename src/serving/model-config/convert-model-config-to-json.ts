// The body of GET /v2/models/{m}/config: a ModelConfig printed the way Triton prints it (core's
// ModelConfigToJson): protobuf JSON with proto field names, every field without presence printed (zero
// values, [] and {}), unset messages left out, enums by name, fields in .proto declaration order.
import type { ModelConfig } from './model-config.ts';
import { type FieldSchema, type MessageSchema, type MessageValue, type SingleValue, zeroValue } from './message-schema.ts';
import { ModelConfigSchema } from './model-config-schema.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/**
 * protobuf prints int64/uint64 as JSON strings; Triton rewrites these fields back to numbers
 * (FixInt/FixUInt/FixIntArray in ModelConfigToJson). The 64-bit fields it does not list stay strings:
 * instance_group.secondary_devices.device_id, optimization.cuda.graph_spec[...].dim, and
 * sequence_batching.state.initial_state.dims (Triton looks for `initial_state` on the batcher instead
 * of on each state, so it never converts them). Printing the same keeps byte-for-byte parity.
 */
const INT64_AS_NUMBER = new Set([
  'input.dims',
  'input.reshape.shape',
  'output.dims',
  'output.reshape.shape',
  'version_policy.specific.versions',
  'dynamic_batching.max_queue_delay_microseconds',
  'dynamic_batching.priority_levels',
  'dynamic_batching.default_priority_level',
  'dynamic_batching.default_queue_policy.default_timeout_microseconds',
  'dynamic_batching.priority_queue_policy.default_timeout_microseconds',
  'sequence_batching.max_sequence_idle_microseconds',
  'sequence_batching.oldest.max_queue_delay_microseconds',
  'sequence_batching.direct.max_queue_delay_microseconds',
  'sequence_batching.state.dims',
  'ensemble_scheduling.step.model_version',
  'model_warmup.inputs.dims',
]);

/** ModelConfig -> Triton's JSON; `JSON.stringify` of the result is byte-identical to Triton's body. */
export function convertModelConfigToJson(config: ModelConfig): JsonObject {
  // ModelConfig is the typed view of a ModelConfigSchema message (see model-config-schema.ts).
  return convertMessage(ModelConfigSchema, config as unknown as MessageValue, '');
}

/** `fieldPath` holds field names only (`input.reshape.shape`): the key into INT64_AS_NUMBER. */
function convertMessage(schema: MessageSchema, message: MessageValue, fieldPath: string): JsonObject {
  const out: JsonObject = {};
  for (const field of schema.fields) {
    const path = fieldPath ? `${fieldPath}.${field.name}` : field.name;
    const value = message[field.name];
    if (field.label === 'repeated') {
      out[field.name] = ((value ?? []) as SingleValue[]).map((item) => convertSingle(field, item, path));
    } else if (field.label === 'map') {
      const entries = Object.entries((value ?? {}) as MessageValue);
      out[field.name] = Object.fromEntries(entries.map(([key, item]) => [key, convertSingle(field, item as SingleValue, path)]));
    } else if (value !== undefined) {
      out[field.name] = convertSingle(field, value as SingleValue, path);
    } else if (field.type.kind !== 'message' && field.oneof === undefined) {
      // A hand-built config may leave a scalar out; Triton would print its zero value.
      out[field.name] = convertSingle(field, zeroValue(field.type), path);
    }
  }
  return out;
}

function convertSingle(field: FieldSchema, value: SingleValue, path: string): JsonValue {
  const type = field.type;
  if (type.kind === 'message') return convertMessage(type.message, value as MessageValue, path);
  if (type.kind === 'enum' || typeof value !== 'number') return value as JsonValue;
  switch (type.scalar) {
    case 'int64':
    case 'uint64':
      return INT64_AS_NUMBER.has(path) ? value : String(value);
    case 'float':
    case 'double':
      // JSON has no NaN/Infinity: protobuf writes them as these strings.
      if (Number.isNaN(value)) return 'NaN';
      if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
      return value;
    default:
      return value;
  }
}
