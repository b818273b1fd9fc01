// docs/architecture.md's import rule, checked on the real tree: cli → app.ts → http|grpc → serving|gateway →
// core|config|metrics, client → core, each big folder's own layer table, which layer may import which
// package, and no import circle. The checker itself is proven on wrong-way fixtures in
// test/architecture/check-imports.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ALLOWED_CYCLES,
  CLOSED_LAYERS,
  checkImportCycles,
  checkImports,
  COMPUTED_IMPORTS,
  FOLDER_LAYERS,
  formatViolation,
  type ImportRules,
  LAYERS,
  layerOf,
  PACKAGE_OWNERS,
} from './architecture/check-imports.ts';
import { findImports, type SourceText } from './architecture/find-imports.ts';

const SOURCE_FILE = /\.(?:[cm]?[jt]s)$/;

function readTree(dir: string): SourceText[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return readTree(path);
      return SOURCE_FILE.test(name) ? [{ path: path.split('\\').join('/'), text: readFileSync(path, 'utf8') }] : [];
    });
}

const tree = readTree('src');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies?: Record<string, string> };
const rules: ImportRules = {
  layers: LAYERS,
  packageOwners: PACKAGE_OWNERS,
  closedLayers: CLOSED_LAYERS,
  dependencies: Object.keys(pkg.dependencies ?? {}),
  computedImports: COMPUTED_IMPORTS,
  folderLayers: FOLDER_LAYERS,
  allowedCycles: ALLOWED_CYCLES,
};

test('every import in src/ (.ts, .mjs, .js) follows the layer direction and the package owners', () => {
  assert.ok(
    tree.some((f) => f.path.endsWith('.mjs')),
    'the scan reads .mjs files too (onnx-worker-bootstrap.mjs)',
  );
  assert.deepEqual(checkImports(tree, rules).map(formatViolation), []);
});

test('no import circle in src/ (type-only imports count), but the listed ones', () => {
  assert.deepEqual(checkImportCycles(tree, rules).map(formatViolation), []);
});

test('serving and gateway never import each other, in the imports src/ really has', () => {
  const edges = new Map<string, number>();
  for (const file of tree) {
    for (const site of findImports(file)) {
      if (site.specifier === undefined || !site.specifier.startsWith('.')) continue;
      const to = layerOf(join(file.path, '..', site.specifier).split('\\').join('/'));
      const edge = `${layerOf(file.path)} → ${to}`;
      edges.set(edge, (edges.get(edge) ?? 0) + 1);
    }
  }
  // The scan must have seen both sides importing, or the assertions below prove nothing.
  assert.ok((edges.get('serving → core') ?? 0) > 0 && (edges.get('gateway → core') ?? 0) > 0, [...edges.keys()].join(', '));
  assert.ok((edges.get('app.ts → serving') ?? 0) > 0 && (edges.get('app.ts → gateway') ?? 0) > 0, 'app.ts wires both halves');
  assert.equal(edges.get('serving → gateway'), undefined);
  assert.equal(edges.get('gateway → serving'), undefined);
  for (const transport of ['http', 'grpc', 'cli', 'app.ts']) {
    assert.equal(edges.get(`serving → ${transport}`), undefined, `serving → ${transport}`);
    assert.equal(edges.get(`gateway → ${transport}`), undefined, `gateway → ${transport}`);
  }
});

test('fastify and gRPC types stay in their transports', () => {
  const users = (prefix: string) =>
    new Set(
      tree.flatMap((file) =>
        findImports(file).some((site) => site.specifier !== undefined && (site.specifier === prefix || site.specifier.startsWith(`${prefix}/`))) ? [layerOf(file.path)] : [],
      ),
    );
  const fastify = users('fastify');
  assert.ok(fastify.has('http'), 'http/ imports fastify (else this test checks nothing)');
  assert.deepEqual(
    [...fastify].filter((layer) => layer !== 'http' && layer !== 'app.ts'),
    [],
  );
  assert.deepEqual(
    [...users('@grpc')].filter((layer) => layer !== 'grpc' && layer !== 'client' && layer !== 'app.ts'),
    [],
  );
});
