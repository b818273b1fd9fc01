// Reads herd.yaml: YAML syntax errors and schema errors both come back as `file:line:column: path: message`.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { ZodError } from 'zod';
import { HerdError } from '../core/errors.ts';
import { DEFAULT_KEY_STORE } from './gateway-config-schema.ts';
import { herdConfigSchema, type HerdConfig } from './herd-config-schema.ts';
import { interpolateEnv, redactSubstitutions, type Substitutions } from './interpolate-env.ts';

export interface LoadedConfig {
  config: HerdConfig;
  /** The file it came from, or undefined for built-in defaults. */
  file: string | undefined;
  /** The file's text, for the Settings page's line and column of each value (describe-config-sources.ts). */
  text?: string;
  /** Path → the variables `${NAME}` substituted there: names only, never their values. */
  envNames?: Record<string, string[]>;
}

export function defaultHerdConfig(): HerdConfig {
  const config = herdConfigSchema.parse({});
  // As a file would: the key store resolved here, relative to the working directory.
  return { ...config, auth: { ...config.auth, db: config.auth.db ?? defaultKeyStore(config.billing.ledger) } };
}

export function loadHerdConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new HerdError('INVALID_ARG', `cannot read config file ${file}: ${(err as Error).message}`);
  }
  const { config, envNames } = parseHerdConfigText(text, file, env);
  return { config, file, text, envNames };
}

export function parseHerdConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): HerdConfig {
  return parseHerdConfigText(text, file, env).config;
}

function parseHerdConfigText(text: string, file: string, env: NodeJS.ProcessEnv): { config: HerdConfig; envNames: Record<string, string[]> } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const problem = doc.errors[0];
  if (problem) {
    const pos = lines.linePos(problem.pos[0]);
    throw new HerdError('INVALID_ARG', `${file}:${pos.line}:${pos.col}: ${problem.message.split('\n')[0]}`);
  }
  const substituted: SubstitutionsByPath = new Map();
  const raw = interpolateTree(readYamlValue(doc, file) ?? {}, env, file, doc, lines, [], substituted);
  const parsed = herdConfigSchema.safeParse(raw);
  if (!parsed.success) throw new HerdError('INVALID_ARG', formatZodError(parsed.error, file, doc, lines, substituted));
  const envNames = Object.fromEntries([...substituted].map(([path, here]) => [path, [...new Set(here.values())]]));
  return { config: resolvePaths(parsed.data, dirname(resolve(file))), envNames };
}

/**
 * The document as plain values. The yaml library reports an alias without its anchor, and an alias
 * count that looks like a billion-laughs bomb, by throwing a ReferenceError, not as a document error.
 */
function readYamlValue(doc: Document, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new HerdError('INVALID_ARG', `${file}: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** Where environment values went: the formatted path of each field → what was substituted into it. */
type SubstitutionsByPath = Map<string, Substitutions>;

function interpolateTree(
  value: unknown,
  env: NodeJS.ProcessEnv,
  file: string,
  doc: Document,
  lines: LineCounter,
  path: (string | number)[],
  substituted: SubstitutionsByPath,
): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    const here: Substitutions = new Map();
    const out = interpolateEnv(value, env, locate(file, doc, lines, path), here);
    if (here.size > 0) substituted.set(formatPath(path), here);
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateTree(v, env, file, doc, lines, [...path, i], substituted));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateTree(v, env, file, doc, lines, [...path, k], substituted)]));
  }
  return value;
}

/**
 * Schema errors name the field and the variable, never an environment value: a value is redacted in every
 * message, and even a short one in the messages about the field it was written into (or a field inside it).
 */
function formatZodError(error: ZodError, file: string, doc: Document, lines: LineCounter, substituted: SubstitutionsByPath): string {
  const all: Substitutions = new Map();
  for (const here of substituted.values()) for (const [value, name] of here) all.set(value, name);
  return error.issues
    .map((issue) => {
      const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      const field = formatPath(path);
      let message = redactSubstitutions(issue.message, all);
      const names = new Set<string>();
      for (const [where, here] of substituted) {
        if (where !== field && !where.startsWith(`${field}.`) && !where.startsWith(`${field}[`)) continue;
        message = redactSubstitutions(message, here, true);
        for (const name of here.values()) names.add(name);
      }
      if (names.size > 0 && ![...names].every((name) => message.includes(`$${name}`))) {
        message += ` (the value comes from ${[...names].map((name) => `$${name}`).join(', ')})`;
      }
      return `${locate(file, doc, lines, path)}: ${message}`;
    })
    .join('\n');
}

/** `file:line:col: a.b[2].c` for the deepest node of `path` that exists in the document. */
function locate(file: string, doc: Document, lines: LineCounter, path: (string | number)[]): string {
  let node: Node | null = doc.contents;
  let offset = node?.range?.[0] ?? 0;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
      if (!pair) break;
      node = (pair.value as Node | null) ?? null;
      offset = node?.range?.[0] ?? (pair.key as Node).range?.[0] ?? offset;
    } else if (isSeq(node) && typeof key === 'number') {
      node = (node.items[key] as Node | undefined) ?? null;
      if (!node) break;
      offset = node.range?.[0] ?? offset;
    } else break;
  }
  const pos = lines.linePos(offset);
  return `${file}:${pos.line}:${pos.col}: ${formatPath(path)}`;
}

function formatPath(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(top level)';
}

/** Paths in herd.yaml (repositories, the SQLite file) are relative to the file, as a user reading it expects. */
function resolvePaths(config: HerdConfig, base: string): HerdConfig {
  return {
    ...config,
    serving: { ...config.serving, model_repository: config.serving.model_repository.map((p) => resolve(base, p)) },
    auth: { ...config.auth, db: resolveStorePath(config.auth.db ?? defaultKeyStore(config.billing.ledger), base) },
    billing: {
      ...config.billing,
      ledger: resolveStorePath(config.billing.ledger, base),
      ...(config.billing.spool_dir !== undefined ? { spool_dir: resolve(base, config.billing.spool_dir) } : {}),
    },
    batch: { ...config.batch, files: { ...config.batch.files, ...(config.batch.files.dir !== undefined ? { dir: resolve(base, config.batch.files.dir) } : {}) } },
  };
}

/** Keys live beside a PostgreSQL ledger, so replicas sharing the ledger share the keys; else in the SQLite file. */
function defaultKeyStore(ledger: string): string {
  return /^postgres(?:ql)?:\/\//i.test(ledger.trim()) ? ledger.trim() : DEFAULT_KEY_STORE;
}

/** `./x.db`, `x.db` and `sqlite:./x.db` are files next to herd.yaml; URLs (postgres://…) stay as written. */
function resolveStorePath(db: string, base: string): string {
  if (db === 'off') return db;
  if (db.startsWith('sqlite:')) return `sqlite:${resolve(base, db.slice('sqlite:'.length))}`;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(db)) return db;
  return resolve(base, db);
}
