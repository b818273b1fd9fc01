// kubernetes-models' validators accept fields the API does not have (its schemas allow extra properties), so a
// misspelt `readinessprobe` would pass. This walks an object along the interfaces in kubernetes-models' .d.ts
// files and names every key none of them declares: the API server's strict field validation, offline.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const MODULES = resolve('node_modules');
type Field = { ref?: string; array: boolean };
const cache = new Map<string, Map<string, Field> | undefined>();

/** The fields of a .d.ts file's first interface, each with the .d.ts of its own type when that is an interface. */
function fieldsOf(file: string): Map<string, Field> | undefined {
  if (cache.has(file)) return cache.get(file);
  const text = readFileSync(file, 'utf8');
  const imports = new Map([...text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)].map((m) => [m[1] as string, m[2] as string]));
  const body = /^export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/m.exec(text)?.[1];
  let fields: Map<string, Field> | undefined;
  if (body !== undefined) {
    fields = new Map();
    for (const m of body.matchAll(/^ {4}"([^"]+)"\??: (Array<)?(\w+)?/gm)) {
      const from = m[3] ? imports.get(m[3]) : undefined;
      const ref = from === undefined ? undefined : from.startsWith('.') ? join(dirname(file), `${from}.d.ts`) : join(MODULES, `${from}.d.ts`);
      fields.set(m[1] as string, { ref, array: m[2] !== undefined });
    }
  }
  cache.set(file, fields);
  return fields;
}

function walk(value: unknown, file: string, path: string, out: string[]): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const fields = fieldsOf(file);
  if (!fields) return; // an alias (IntOrString, Quantity, Time): no fields to check
  for (const [key, child] of Object.entries(value)) {
    const field = fields.get(key);
    if (!field) {
      out.push(`${path}.${key}`);
      continue;
    }
    if (!field.ref) continue;
    if (!(field.array && Array.isArray(child))) walk(child, field.ref, `${path}.${key}`, out);
    else for (const [i, item] of child.entries()) walk(item, field.ref, `${path}.${key}[${i}]`, out);
  }
}

/** The paths of keys that `apiVersion` `kind` does not declare (status and other read-only fields included). */
export function unknownFields(apiVersion: string, kind: string, value: object): string[] {
  const out: string[] = [];
  walk(value, join(MODULES, 'kubernetes-models', apiVersion, `${kind}.d.ts`), kind, out);
  return out;
}
