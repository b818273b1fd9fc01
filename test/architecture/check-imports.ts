// The import rules of docs/architecture.md as a function of source texts, so the real tree and
// hand-written wrong-way fixtures go through the same checker (test/architecture.test.ts,
// test/architecture/check-imports.test.ts): the layer direction, each big folder's own layer table,
// package owners, and no import circles.
import { isBuiltin } from 'node:module';
import { posix } from 'node:path';
import { findImportCycles, formatCycle } from './find-import-cycles.ts';
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
  /**
   * Inside a layer folder (`serving`), which part may import which: a part is a subfolder (`scheduler/`)
   * or a file at the folder's root (`stats.ts`); a part imports itself freely. A folder not listed has
   * no rule inside it; a file of a listed folder whose part is not in its table is itself a violation.
   */
  folderLayers: Record<string, Record<string, readonly string[]>>;
  /** Import circles kept on purpose: exactly these files (the whole circle), and why. */
  allowedCycles: readonly { files: readonly string[]; reason: string }[];
}

/** The cli → app.ts → http|grpc → serving|gateway → tracing → core|config|metrics direction; client → core. */
export const LAYERS: ImportRules['layers'] = {
  core: ['core'],
  config: ['core', 'config'],
  metrics: ['core', 'metrics'],
  // Tracing sits beside core: both halves and the transports start spans through its small interface.
  tracing: ['core', 'config', 'metrics', 'tracing'],
  serving: ['core', 'config', 'metrics', 'tracing', 'serving'],
  gateway: ['core', 'config', 'metrics', 'tracing', 'gateway'],
  http: ['core', 'config', 'metrics', 'tracing', 'serving', 'gateway', 'http'],
  grpc: ['core', 'config', 'metrics', 'tracing', 'serving', 'gateway', 'grpc'],
  client: ['core', 'client'],
  'app.ts': ['core', 'config', 'metrics', 'tracing', 'serving', 'gateway', 'http', 'grpc', 'start-gateway.ts'],
  'start-gateway.ts': ['core', 'config', 'metrics', 'tracing', 'serving', 'gateway', 'http', 'start-batch.ts'],
  'start-batch.ts': ['core', 'config', 'gateway', 'http'],
  cli: ['core', 'config', 'metrics', 'serving', 'gateway', 'http', 'grpc', 'app.ts', 'cli', 'client'],
};

/**
 * No framework type gets past a transport: the web framework lives in http/, gRPC in grpc/ (and the
 * gRPC client), the CLI parser in cli/; app.ts may name their types to wire them. The metrics library
 * stays behind metrics/ (http/ serves its text), the runtime behind serving/, storage drivers behind
 * the gateway's stores, OpenTelemetry behind tracing/.
 */
export const PACKAGE_OWNERS: ImportRules['packageOwners'] = {
  fastify: ['http', 'app.ts'],
  '@fastify/*': ['http', 'app.ts'],
  '@grpc/*': ['grpc', 'client', 'app.ts'],
  commander: ['cli'],
  'prom-client': ['metrics', 'http', 'app.ts', 'start-gateway.ts'],
  'onnxruntime-node': ['serving'],
  'better-sqlite3': ['gateway'],
  pg: ['gateway'],
  ioredis: ['gateway', 'serving'],
  // Herd code elsewhere sees src/tracing/tracer.ts, never OpenTelemetry's types.
  '@opentelemetry/*': ['tracing'],
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

/**
 * serving/'s own layers. model-config/ is the ground everyone reads (ModelConfig, the pbtxt parser,
 * validation); backends/ sit on it; the scheduler, warmup and ensembles run backends; repository/ is the
 * roof that builds them all; inference-service.ts resolves through the repository, and the inference
 * port wraps the service. Plain data modules (stats, infer-call, response-stream) sit low.
 */
const CONFIG = 'model-config/';
export const SERVING_LAYERS: Record<string, readonly string[]> = {
  // The ground: plain config, data and settings, importing nothing else of serving/.
  [CONFIG]: [],
  'stats.ts': [],
  'response-cache/': [],
  'shared-memory/': [],
  'log-settings.ts': [],
  'trace-sampler.ts': [],
  'triton-trace-file.ts': [],
  'trace-settings.ts': ['trace-sampler.ts', 'triton-trace-file.ts'],
  'trace-tensor.ts': ['triton-trace-file.ts'],
  'trace-responses.ts': ['triton-trace-file.ts'],
  // One traced inference (spans or trace-file records): what a request carries down to its backend.
  'infer-trace.ts': ['trace-settings.ts', 'triton-trace-file.ts', 'trace-tensor.ts', 'trace-responses.ts'],
  'server-metadata.ts': [],
  // Read the config.
  'backends/': [CONFIG, 'infer-trace.ts'],
  'classification.ts': [CONFIG],
  'model-metadata.ts': [CONFIG],
  'validate-infer-request.ts': [CONFIG],
  'infer-call.ts': ['backends/', 'infer-trace.ts'],
  'response-stream.ts': ['backends/'],
  // A traced request handed to its scheduler: its tensors and a decoupled model's responses reported to its trace.
  'trace-submit.ts': ['backends/', 'infer-trace.ts'],
  // Run backends.
  'scheduler/': [CONFIG, 'backends/', 'stats.ts'],
  'warmup/': [CONFIG, 'backends/', 'scheduler/', 'validate-infer-request.ts'],
  'ensemble/': [CONFIG, 'backends/', 'scheduler/', 'stats.ts', 'infer-call.ts', 'response-stream.ts'],
  // The roof: builds every model.
  'repository/': [CONFIG, 'backends/', 'scheduler/', 'ensemble/', 'warmup/', 'stats.ts', 'classification.ts'],
  // The transports' entry point, and the port the gateway calls it through.
  'inference-service.ts': [
    CONFIG,
    'backends/',
    'classification.ts',
    'infer-call.ts',
    'infer-trace.ts',
    'model-metadata.ts',
    'repository/',
    'response-cache/',
    'response-stream.ts',
    'scheduler/',
    'stats.ts',
    'trace-submit.ts',
    'validate-infer-request.ts',
  ],
  'serving-inference-port.ts': ['infer-call.ts', 'inference-service.ts'],
};

/**
 * gateway/'s own layers, bottom up: protocol/ (the canonical types every part speaks) ← wire/ (pure parse
 * and encode of each wire format) ← providers/ (HTTP to an upstream) ← resilience/ ← router/ (routes,
 * attempts, deployments) ← billing/ and cache/; ingress/ (one codec per client dialect) sits on wire/ only;
 * flow/ runs an operation end to end over all of them. limits/ and storage/ are leaves; keys/ names a key's priority.
 */
const GATEWAY_BASE = ['protocol/'];
export const GATEWAY_LAYERS: Record<string, readonly string[]> = {
  'protocol/': [],
  'limits/': [],
  // storage/: SQLite and PostgreSQL plumbing (migrations, pools, drivers) shared by keys/ and billing/; a leaf.
  'storage/': [],
  'keys/': ['limits/', 'storage/'],
  'wire/': GATEWAY_BASE,
  'ingress/': ['wire/', ...GATEWAY_BASE],
  'providers/': ['wire/', ...GATEWAY_BASE],
  'resilience/': ['providers/', 'wire/', ...GATEWAY_BASE],
  'router/': ['limits/', 'resilience/', 'providers/', 'wire/', ...GATEWAY_BASE],
  // cache/ and router/ wait for Redis as limits/ does.
  'billing/': ['keys/', 'storage/', 'router/', 'resilience/', 'providers/', 'wire/', ...GATEWAY_BASE],
  'cache/': ['limits/', 'router/', 'providers/', 'wire/', ...GATEWAY_BASE],
  'flow/': ['billing/', 'cache/', 'keys/', 'limits/', 'router/', 'resilience/', 'providers/', 'wire/', ...GATEWAY_BASE],
  // admin/ is an application layer over the stores: the admin API's and the CLI's one service (roles, audit, spend).
  'admin/': ['billing/', 'keys/', 'limits/', 'router/', 'resilience/', 'providers/', 'wire/', ...GATEWAY_BASE],
  // batch/ runs batch lines the way flow/ runs a realtime request, over the ledger's database; only http/ and the
  // composition root import it.
  'batch/': ['flow/', 'billing/', 'cache/', 'keys/', 'limits/', 'router/', 'storage/', 'resilience/', 'providers/', 'wire/', ...GATEWAY_BASE],
};

export const FOLDER_LAYERS: ImportRules['folderLayers'] = { serving: SERVING_LAYERS, gateway: GATEWAY_LAYERS };

/**
 * Circles that stay because breaking them means editing a file another change owns right now; each
 * names the one-line fix. The cycle check fails when a listed circle is gone, so the list cannot go stale.
 */
export const ALLOWED_CYCLES: ImportRules['allowedCycles'] = [];

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
    const table = rules.folderLayers[from];
    const part = table === undefined ? undefined : partOf(file.path);
    if (table !== undefined && (part === undefined || table[part] === undefined)) {
      violations.push({ path: file.path, line: 1, message: `${part ?? file.path} is not in ${from}'s layer table: add it to FOLDER_LAYERS and to docs/architecture.md` });
      continue;
    }
    for (const site of findImports(file)) {
      const message = checkSite(file.path, from, allowed, site, rules) ?? (table && part ? checkPart(file.path, from, part, table, site) : undefined);
      if (message !== undefined) violations.push({ path: file.path, line: site.line, message });
    }
  }
  return violations;
}

export const formatViolation = (v: ImportViolation) => `${v.path}:${v.line} ${v.message}`;

/**
 * Every import circle in `files` (file-level, type-only imports included: a type circle ties two modules
 * together for a reader and a refactor as surely as a value one), but the allowed ones; and every allowed
 * circle that no longer exists as listed.
 */
export function checkImportCycles(files: readonly SourceText[], rules: Pick<ImportRules, 'allowedCycles'>): ImportViolation[] {
  const found = findImportCycles(files);
  const key = (paths: readonly string[]) => [...paths].sort().join('\n');
  const allowed = new Set(rules.allowedCycles.map((c) => key(c.files)));
  const present = new Set(found.map((c) => key(c.files)));
  const violations: ImportViolation[] = found
    .filter((c) => !allowed.has(key(c.files)))
    .map((c) => ({
      path: c.cycle[0] as string,
      line: 1,
      message: `import circle ${formatCycle(c.cycle)}${c.files.length > c.cycle.length - 1 ? ` (${c.files.length} files in the circle: ${c.files.join(', ')})` : ''}: move what both need into a module of its own`,
    }));
  for (const c of rules.allowedCycles) {
    if (!present.has(key(c.files)))
      violations.push({ path: c.files[0] as string, line: 1, message: `allowed circle ${c.files.join(' ↔ ')} no longer exists as listed: update ALLOWED_CYCLES` });
  }
  return violations;
}

/** The layer of a src/ path: its top-level folder, or `app.ts` for the composition root itself. */
export function layerOf(path: string): string | undefined {
  const parts = posix.normalize(path).split('/');
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  return parts[1];
}

/** The part of a layer a src/ path belongs to: `scheduler/` for src/serving/scheduler/x.ts, `stats.ts` for src/serving/stats.ts. */
export function partOf(path: string): string | undefined {
  const parts = posix.normalize(path).split('/');
  if (parts[0] !== 'src' || parts.length < 3) return undefined;
  return parts.length === 3 ? parts[2] : `${parts[2]}/`;
}

/** An import inside `layer` checked against the layer's own table (its direction was checked already). */
function checkPart(path: string, layer: string, from: string, table: Record<string, readonly string[]>, site: ImportSite): string | undefined {
  const { specifier } = site;
  if (specifier === undefined || !specifier.startsWith('.')) return undefined;
  const target = posix.normalize(posix.join(posix.dirname(path), specifier));
  if (layerOf(target) !== layer) return undefined;
  const what = `${site.kind} ${site.partial ? site.expression : `'${specifier}'`}`;
  // A template is checked by the folder its prefix names; one that stops at the layer's root names no part.
  const folder = (site.partial && !specifier.endsWith('/') ? posix.dirname(target) : target).replace(/\/+$/, '');
  const to = site.partial ? (folder === `src/${layer}` ? undefined : partOf(`${folder}/`)) : partOf(target);
  if (to === undefined) return `${what}: the target is computed at ${layer}/'s root, so its part cannot be checked`;
  if (to === from || (table[from] ?? []).includes(to)) return undefined;
  return `${what} goes ${layer}/${from} → ${layer}/${to}, against ${layer}'s layer table`;
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
