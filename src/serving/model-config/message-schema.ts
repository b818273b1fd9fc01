// The small schema language that drives the pbtxt and JSON readers and the JSON printer: messages,
// fields and enums as protobuf declares them, field paths, defaults, integer ranges.

export type ScalarType = 'string' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'double';
export type MapKeyType = 'string' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64';

export interface EnumSchema {
  readonly name: string;
  readonly byName: ReadonlyMap<string, number>;
  readonly byNumber: ReadonlyMap<number, string>;
}

export type FieldType =
  | { readonly kind: 'scalar'; readonly scalar: ScalarType }
  | { readonly kind: 'enum'; readonly enum: EnumSchema }
  | { readonly kind: 'message'; readonly message: MessageSchema };

export interface FieldSchema {
  readonly name: string;
  /** protobuf's JSON name (lowerCamelCase), accepted besides `name` when reading JSON. */
  readonly jsonName: string;
  readonly number: number;
  /** For a map this is the value type. */
  readonly type: FieldType;
  readonly label: 'singular' | 'repeated' | 'map';
  readonly oneof?: string;
  /** A map's synthetic entry message `{ key = 1; value = 2 }`, as the text format writes it. */
  readonly entry?: MessageSchema;
}

export interface MessageSchema {
  readonly name: string;
  readonly fields: readonly FieldSchema[];
  readonly byName: ReadonlyMap<string, FieldSchema>;
}

/** Parsed values: enums by name, 64-bit integers as numbers, maps as objects keyed by the key's text. */
export type ScalarValue = string | number | boolean;
export type SingleValue = ScalarValue | MessageValue;
export type FieldValue = SingleValue | SingleValue[];
export interface MessageValue {
  [field: string]: FieldValue | undefined;
}

export interface FieldSpec {
  number: number;
  type: FieldType;
  label?: 'repeated' | 'map';
  mapKey?: MapKeyType;
  oneof?: string;
}

export const scalarField = (scalar: ScalarType, number: number): FieldSpec => ({ number, type: { kind: 'scalar', scalar } });
export const enumField = (schema: EnumSchema, number: number): FieldSpec => ({ number, type: { kind: 'enum', enum: schema } });
export const messageField = (schema: MessageSchema, number: number): FieldSpec => ({ number, type: { kind: 'message', message: schema } });
export const repeated = (spec: FieldSpec): FieldSpec => ({ ...spec, label: 'repeated' });
export const mapOf = (key: MapKeyType, value: FieldSpec): FieldSpec => ({ ...value, label: 'map', mapKey: key });
export const inOneof = (oneof: string, spec: FieldSpec): FieldSpec => ({ ...spec, oneof });

export function defineEnum(name: string, values: readonly string[]): EnumSchema {
  // Every enum of model_config.proto numbers its values 0, 1, 2... in declaration order.
  return { name, byName: new Map(values.map((v, i) => [v, i])), byNumber: new Map(values.map((v, i) => [i, v])) };
}

/** protoc's name for a map's entry message: `parameters` -> `ParametersEntry`. */
const entryName = (field: string) =>
  `${field
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Entry`;

/** Object key order is the proto's declaration order, which is also the order Triton prints JSON in. */
export function defineMessage(name: string, specs: Record<string, FieldSpec>): MessageSchema {
  const fields = Object.entries(specs).map(
    ([fieldName, spec]): FieldSchema => ({
      name: fieldName,
      jsonName: fieldName.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
      number: spec.number,
      type: spec.type,
      label: spec.label ?? 'singular',
      ...(spec.oneof === undefined ? {} : { oneof: spec.oneof }),
      ...(spec.label === 'map'
        ? { entry: defineMessage(`${name}.${entryName(fieldName)}`, { key: scalarField(spec.mapKey ?? 'string', 1), value: { number: 2, type: spec.type } }) }
        : {}),
    }),
  );
  return { name, fields, byName: new Map(fields.map((f) => [f.name, f])) };
}

// Field paths name a value in messages: `input[0].dims[1]`, `parameters["key"].string_value`.
export const joinPath = (parent: string, name: string) => (parent ? `${parent}.${name}` : name);
export const indexPath = (path: string, index: number) => `${path}[${index}]`;
export const keyPath = (path: string, key: string) => `${path}[${JSON.stringify(key)}]`;

/** Sets a map entry as an own property, so a key such as `__proto__` is data, not the object's prototype. */
export function setMapEntry(map: MessageValue, key: string, value: SingleValue): void {
  Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
}

/** proto3 zero value of a non-message type: enums take their value numbered 0. */
export function zeroValue(type: FieldType): ScalarValue {
  if (type.kind === 'enum') return type.enum.byNumber.get(0) ?? '';
  if (type.kind === 'message') throw new Error('messages have no zero value');
  return type.scalar === 'string' ? '' : type.scalar === 'bool' ? false : 0;
}

/**
 * Gives every present message its proto3 zero values (scalars, [] and {}), recursively, so the
 * object has every field Triton's JSON printer shows. Unset messages and oneof members stay unset.
 */
export function fillDefaults(schema: MessageSchema, message: MessageValue): MessageValue {
  for (const field of schema.fields) {
    const value = message[field.name];
    if (value === undefined) {
      if (field.label === 'repeated') message[field.name] = [];
      else if (field.label === 'map') message[field.name] = {};
      else if (field.oneof === undefined && field.type.kind !== 'message') message[field.name] = zeroValue(field.type);
      continue;
    }
    if (field.type.kind !== 'message') continue;
    const inner = field.type.message;
    if (field.label === 'repeated') for (const item of value as MessageValue[]) fillDefaults(inner, item);
    else if (field.label === 'map') for (const item of Object.values(value as MessageValue)) fillDefaults(inner, item as MessageValue);
    else fillDefaults(inner, value as MessageValue);
  }
  return message;
}

const INTEGER_RANGES: Record<string, readonly [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Why `value` cannot be stored in a field of `type`, or undefined when it can. */
export function checkIntegerRange(type: ScalarType | MapKeyType, value: bigint): string | undefined {
  const range = INTEGER_RANGES[type];
  if (!range) return undefined;
  if (value < range[0] || value > range[1]) return `value ${value} is out of range for ${type}`;
  // 64-bit fields are JS numbers: refuse what a double cannot hold exactly instead of rounding it.
  if (value > MAX_SAFE || value < -MAX_SAFE) return `value ${value} is outside the safe integer range (±${MAX_SAFE}) Herd supports for ${type}`;
  return undefined;
}

/**
 * A float field's value as protobuf prints it: a float32 written with 6 significant digits when
 * those read back to the same float32, else 9 (SimpleFtoa). Keeping that number makes GET /config
 * show the digits Triton shows (0.1, not 0.10000000149011612).
 */
export function roundToFloat32(value: number): number {
  if (!Number.isFinite(value)) return value;
  const single = Math.fround(value);
  const short = Number(single.toPrecision(6));
  return Math.fround(short) === single ? short : Number(single.toPrecision(9));
}
