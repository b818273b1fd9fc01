// The unknown-member fuzz targets' walk over a request body: every object a client could add a member to,
// and the value at a key path. Members named in `verbatim` (JSON Schemas, free maps) are not walked into.
import { isJsonObject, type JsonObject } from '../../src/gateway/protocol/check-json-value.ts';

export interface JsonObjectNode {
  object: JsonObject;
  /** The keys from the body down to it (a key may itself hold a dot). */
  keys: string[];
}

export function listJsonObjects(value: unknown, verbatim: ReadonlySet<string>, keys: string[] = [], out: JsonObjectNode[] = []): JsonObjectNode[] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      listJsonObjects(item, verbatim, [...keys, String(i)], out);
    });
  } else if (isJsonObject(value)) {
    out.push({ object: value, keys });
    for (const [key, inner] of Object.entries(value)) if (!verbatim.has(key)) listJsonObjects(inner, verbatim, [...keys, key], out);
  }
  return out;
}

export function valueAt(body: unknown, keys: readonly string[]): unknown {
  return keys.reduce<unknown>((node, key) => (isJsonObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined), body);
}
