// Small checks for untrusted JSON used by the request validators. Each failure is an INVALID_ARG
// HerdError whose `param` is the OpenAI-style path of the offending field (e.g. `messages[2].role`).
import { HerdError } from '../../core/errors.ts';

export type JsonObject = Record<string, unknown>;

export function invalidParam(param: string, message: string): HerdError {
  return new HerdError('INVALID_ARG', `Invalid '${param}': ${message}`, { param });
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short rendering of a bad value for an error message (never the whole payload). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  return String(value);
}

export function expectObject(value: unknown, param: string): JsonObject {
  if (!isJsonObject(value)) throw invalidParam(param, `expected an object, got ${describeValue(value)}`);
  return value;
}

export function expectArray(value: unknown, param: string): unknown[] {
  if (!Array.isArray(value)) throw invalidParam(param, `expected an array, got ${describeValue(value)}`);
  return value;
}

export function expectString(value: unknown, param: string, options: { nonEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') throw invalidParam(param, `expected a string, got ${describeValue(value)}`);
  if (options.nonEmpty && value.length === 0) throw invalidParam(param, 'expected a non-empty string');
  return value;
}

export function expectBoolean(value: unknown, param: string): boolean {
  if (typeof value !== 'boolean') throw invalidParam(param, `expected a boolean, got ${describeValue(value)}`);
  return value;
}

/** A finite number within [min, max]; out-of-range values are rejected, never clamped. */
export function expectNumber(value: unknown, param: string, range: { min?: number; max?: number } = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalidParam(param, `expected a number, got ${describeValue(value)}`);
  }
  const { min, max } = range;
  if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
    const bounds = min !== undefined && max !== undefined ? `between ${min} and ${max}` : min !== undefined ? `>= ${min}` : `<= ${max}`;
    throw invalidParam(param, `expected a number ${bounds}, got ${value}`);
  }
  return value;
}

export function expectInteger(value: unknown, param: string, range: { min?: number; max?: number } = {}): number {
  const n = expectNumber(value, param, range);
  if (!Number.isInteger(n)) throw invalidParam(param, `expected an integer, got ${n}`);
  return n;
}

export function expectOneOf<T extends string>(value: unknown, param: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalidParam(param, `expected one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describeValue(value)}`);
  }
  return value as T;
}

/** Rejects keys outside `known` whose value is not null (SDKs echo back null-valued extras). */
export function rejectUnknownKeys(object: JsonObject, known: ReadonlySet<string>, path: string): void {
  for (const key of Object.keys(object)) {
    if (!known.has(key) && object[key] !== null) {
      const param = path === '' ? key : `${path}.${key}`;
      throw new HerdError('INVALID_ARG', `Unrecognized argument '${param}'`, { param });
    }
  }
}
