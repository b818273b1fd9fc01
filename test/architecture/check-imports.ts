// The import rules of docs/architecture.md as a function of source texts, so the real tree and
// hand-written wrong-way fixtures go through the same checker (test/architecture.test.ts,
// test/architecture/check-imports.test.ts).
import { isBuiltin } from 'node:module';
import { posix } from 'node:path';
import { findImports, type ImportSite, type SourceText } from './find-imports.ts';

export interface ImportRules {
  /** Top-level folder of src/ (or `app.ts`) → the layers it may import. */
  layers: Record<string, readonly string[]>;
  /** Package (or `@scope/*`) → the only layers that may import it. Packages not listed are free. */
  packageOwners: Record<string, readonly string[]>;
  /** Layers that may import no package except those listed (Node's built-ins always). */
  closedLayers: Record<string, readonly string[]>;
  /** package.json `dependencies`: what src/ may import, since a production install has nothing else. */
  dependencies: readonly string[];
  /** Imports whose target is computed at run time on purpose: `path` and the argument as written. */
  computedImports: readonly { path: string; expression: string; reason: string }[];
}

/** The cli → app.ts → http|grpc → serving|gateway → core|config|metrics direction; client → core. */
export const LAYERS: ImportRules['layers'] = {
  core: ['core'],
  config: ['core', 'config'],
  metrics: ['core', 'metrics'],
  serving: ['core', 'config', 'metrics', 'serving'],
  gateway: ['core', 'config', 'metrics', 'gateway'],
  http: ['core', 'config', 'metrics', 'serving', 'gateway', 'http'],
  grpc: ['core', 'config', 'metrics', 'serving', 'gateway', 'grpc'],
  client: ['core', 'client'],
  'app.ts': ['core', 'config', 'metrics', 'serving', 'gateway', 'http', 'grpc'],
  cli: ['core', 'config', 'metrics', 'serving', 'gateway', 'http', 'grpc', 'app.ts', 'cli', 'client'],
};

/**
 * No framework type gets past a transport: the web framework lives in http/, gRPC in grpc/ (and the
 * gRPC client), the CLI parser in cli/; app.ts may name their types to wire them. The metrics library
 * stays behind metrics/ (http/ serves its text), the runtime behind serving/, storage drivers behind
 * the gateway's stores.
 */
export const PACKAGE_OWNERS: ImportRules['packageOwners'] = {
  fastify: ['http', 'app.ts'],
  '@fastify/*': ['http', 'app.ts'],
  '@grpc/*': ['grpc', 'client', 'app.ts'],
  commander: ['cli'],
  'prom-client': ['metrics', 'http', 'app.ts'],
  'onnxruntime-node': ['serving'],
  'better-sqlite3': ['gateway'],
  pg: ['gateway'],
  ioredis: ['gateway'],
};

/** core is the shared domain, plain TypeScript; client ships to users, so it carries only its wire. */
export const CLOSED_LAYERS: ImportRules['closedLayers'] = {
  core: [],
  client: ['undici', '@grpc/*', 'protobufjs'],
};

export const COMPUTED_IMPORTS: ImportRules['computedImports'] = [
  { path: 'src/serving/backends/js/load-js-model.ts', expression: 'url', reason: "a JS model's own file, from the model repository" },
  {
    path: 'src/serving/backends/onnxruntime/onnx-worker-bootstrap.mjs',
    expression: 'compiled.href',
    reason: "the URL of the compiled worker, itself a checked new URL('./…', import.meta.url)",
  },
];

export interface ImportViolation {
  path: string;
  line: number;
  message: string;
}

/** Every import in `files` (under src/) that breaks `rules`, as `path:line message`. */
export function checkImports(files: readonly SourceText[], rules: ImportRules): ImportViolation[] {
  const violations: ImportViolation[] = [];
  for (const file of files) {
    const from = layerOf(file.path);
    const allowed = from === undefined ? undefined : rules.layers[from];
    if (from === undefined || allowed === undefined) {
      violations.push({ path: file.path, line: 1, message: `unknown top-level folder src/${from ?? ''}: add it to docs/architecture.md and to LAYERS` });
      continue;
    }
    for (const site of findImports(file)) {
      const message = checkSite(file.path, from, allowed, site, rules);
      if (message !== undefined) violations.push({ path: file.path, line: site.line, message });
    }
  }
  return violations;
}

export const formatViolation = (v: ImportViolation) => `${v.path}:${v.line} ${v.message}`;

/** The layer of a src/ path: its top-level folder, or `app.ts` for the composition root itself. */
export function layerOf(path: string): string | undefined {
  const parts = posix.normalize(path).split('/');
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  return parts[1];
}

function checkSite(path: string, from: string, allowed: readonly string[], site: ImportSite, rules: ImportRules): string | undefined {
  const what = `${site.kind} ${site.partial ? site.expression : `'${site.specifier}'`}`;
  const { specifier } = site;
  if (specifier === undefined) {
    if (rules.computedImports.some((c) => c.path === path && c.expression === site.expression)) return undefined;
    return `${what}: the target is computed, so its layer cannot be checked (write the path, or list it in COMPUTED_IMPORTS with a reason)`;
  }
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    // A partial specifier is checked by the folder its static prefix names: `../http/${x}` is in http/,
    // `./convert-${x}` beside the importer; a prefix that stops above the layer folders names none.
    const target = posix.normalize(specifier.startsWith('/') ? specifier : posix.join(posix.dirname(path), specifier));
    const folder = (site.partial && !specifier.endsWith('/') ? posix.dirname(target) : target).replace(/\/+$/, '');
    if (!`${folder}/`.startsWith('src/')) return `${what} leaves src/ (${target}): dist/ ships only what src/ holds`;
    const to = site.partial ? (folder === 'src' ? undefined : layerOf(`${folder}/`)) : layerOf(target);
    if (to === undefined) return `${what}: the target is computed above the layer folders, so its layer cannot be checked`;
    if (to !== from && !allowed.includes(to)) return `${what} goes ${from} → ${to}, against the import direction`;
    return undefined;
  }
  if (specifier.startsWith('node:') || isBuiltin(specifier)) return undefined;
  const name = packageName(specifier, site.partial);
  if (name === undefined) return `${what}: the package is computed, so its owner cannot be checked`;
  if (!rules.dependencies.includes(name)) return `${what}: '${name}' is not in package.json dependencies (a production install would not have it)`;
  const closed = rules.closedLayers[from];
  if (closed !== undefined && !matchesAny(name, closed)) return `${what}: ${from}/ imports no package${closed.length > 0 ? ` but ${closed.join(', ')}` : ''}`;
  for (const [pattern, owners] of Object.entries(rules.packageOwners)) {
    if (matches(name, pattern) && !owners.includes(from)) return `${what}: '${name}' belongs to ${owners.join(', ')} only, not ${from}`;
  }
  return undefined;
}

/**
 * `fastify/types/x` → `fastify`, `@grpc/grpc-js` → `@grpc/grpc-js`. A partial specifier names its
 * package only when the static prefix goes past the name: `fastify/${x}` does, `fastify${x}` does not.
 */
function packageName(specifier: string, partial: boolean): string | undefined {
  const parts = specifier.split('/');
  const length = specifier.startsWith('@') ? 2 : 1;
  if (parts.length < length || parts.slice(0, length).some((p) => p === '')) return undefined;
  if (partial && parts.length === length) return undefined;
  return parts.slice(0, length).join('/');
}

const matches = (name: string, pattern: string) => (pattern.endsWith('/*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern);
const matchesAny = (name: string, patterns: readonly string[]) => patterns.some((p) => matches(name, p));
