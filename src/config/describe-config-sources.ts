// The Settings page's data: every leaf of the effective configuration and where it came from (herd.yaml's
// line and column, a ${VAR}, a CLI flag, or the schema's default), secrets masked. Pure: reads only its input.
import { basename } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { HerdConfig } from './herd-config-schema.ts';
import { maskConfigValue } from './mask-config-secrets.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface ConfigSourceEntry {
  /** `server.http_port`, `models.gpt-4o.deployments[0].provider`. */
  path: string;
  /** Secrets masked as "••••". */
  value: JsonValue;
  /** `herd.yaml:12:3`, `env NAME`, `flag --http-port` or `default`. */
  source: string;
}

export interface ConfigSources {
  /** The herd.yaml that was loaded, null for built-in defaults. */
  configFile: string | null;
  entries: ConfigSourceEntry[];
}

export interface ConfigFileText {
  path: string;
  text: string;
  /** Path (as in entries) → the variables `${NAME}` substituted there; names only, never their values. */
  envNames?: Readonly<Record<string, readonly string[]>> | undefined;
}

export interface ConfigSourcesInput {
  /** The configuration in effect, after the file, its defaults and the flags. */
  config: HerdConfig;
  /** The herd.yaml it was read from; absent when built-in defaults were used. */
  file?: ConfigFileText | undefined;
  /** Path → the CLI flag that set it; the flag is the source of everything under that path. */
  flags?: Readonly<Record<string, string>> | undefined;
}

type Segment = string | number;

export function describeConfigSources(input: ConfigSourcesInput): ConfigSources {
  const locate = input.file ? createLocator(input.file) : () => undefined;
  const flags = Object.entries(input.flags ?? {});
  const env = Object.entries(input.file?.envNames ?? {});
  const entries: ConfigSourceEntry[] = [];
  for (const [segments, value] of listLeaves(input.config as unknown, [])) {
    const path = formatPath(segments);
    const keys = segments.filter((s): s is string => typeof s === 'string');
    const source = sourceOf(path, segments, flags, env, locate);
    const variables = source.startsWith('env ') ? source.slice('env '.length).split(', ') : [];
    entries.push({ path, value: maskConfigValue(keys, keys.join('.'), value, variables), source });
  }
  return { configFile: input.file?.path ?? null, entries };
}

function sourceOf(
  path: string,
  segments: readonly Segment[],
  flags: readonly [string, string][],
  env: readonly [string, readonly string[]][],
  locate: (segments: readonly Segment[]) => string | undefined,
): string {
  // The longest flag path at or above this one: --backend-config sets one key, --cache-config the whole cache.
  const flag = flags.filter(([p]) => contains(p, path)).sort((a, b) => b[0].length - a[0].length)[0];
  if (flag) return `flag ${flag[1]}`;
  const where = locate(segments);
  if (where === undefined) return 'default';
  // Above: a whole value from a variable (serving.identity: ${WHO} becomes serving.identity.name); below: array items.
  const names = new Set(env.filter(([p]) => contains(p, path) || contains(path, p)).flatMap(([, n]) => n));
  return names.size > 0 ? `env ${[...names].join(', ')}` : where;
}

/** Whether `inner` is `outer` or a path under it. */
function contains(outer: string, inner: string): boolean {
  return inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
}

/**
 * Leaves in document order: scalars, empty objects and arrays, and arrays of scalars whole (one entry
 * for `trusted_proxies: [a, b]`); an array holding objects has an entry per item's leaves.
 */
function listLeaves(value: unknown, path: Segment[]): [Segment[], JsonValue][] {
  if (value === undefined || typeof value === 'function') return [];
  if (Array.isArray(value)) {
    if (value.every((v) => !isContainer(v))) return [[path, value.filter((v) => v !== undefined).map(toJson)]];
    return value.flatMap((v, i) => listLeaves(v, [...path, i]));
  }
  if (isContainer(value)) {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined);
    if (fields.length === 0) return [[path, {}]];
    return fields.flatMap(([k, v]) => listLeaves(v, [...path, k]));
  }
  return [[path, toJson(value)]];
}

function isContainer(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

function toJson(value: unknown): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return String(value);
  return JSON.parse(JSON.stringify(value) ?? 'null') as JsonValue;
}

/** `server.http_port`, `models.gpt-4o.deployments[0]`: as load-herd-config.ts names a field in its errors. */
export function formatPath(path: readonly Segment[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** `herd.yaml:line:col` of the node holding a path's value, or undefined when the file does not set it. */
function createLocator(file: ConfigFileText): (segments: readonly Segment[]) => string | undefined {
  const lines = new LineCounter();
  const doc = parseDocument(file.text, { lineCounter: lines, prettyErrors: false });
  const name = basename(file.path);
  return (segments) => {
    const offset = findOffset(doc, segments);
    if (offset === undefined) return undefined;
    const pos = lines.linePos(offset);
    return `${name}:${pos.line}:${pos.col}`;
  };
}

/**
 * Where the value of `segments` starts in the document. A scalar met before the path ends is the value it
 * was derived from (`serving.identity: alice` becomes `serving.identity.name`); a missing key means a default.
 */
function findOffset(doc: Document, segments: readonly Segment[]): number | undefined {
  let node: Node | null = doc.contents;
  let offset = node?.range?.[0];
  for (const segment of segments) {
    if (isAlias(node)) node = (node.resolve(doc) as Node | undefined) ?? null;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) return undefined;
      node = (pair.value as Node | null) ?? null;
      offset = node?.range?.[0] ?? (pair.key as Node).range?.[0];
    } else if (isSeq(node) && typeof segment === 'number') {
      node = (node.items[segment] as Node | undefined) ?? null;
      if (!node) return undefined;
      offset = node.range?.[0];
    } else if ((isScalar(node) && node.value !== null) || isAlias(node)) {
      return offset;
    } else return undefined;
  }
  return offset;
}
