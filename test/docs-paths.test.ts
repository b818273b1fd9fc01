// The maps a maintainer reads (docs/architecture.md, AGENTS.md) name files that exist: a path that moved
// or was deleted fails here, not in a newcomer's first hour.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOTS = ['src/', 'test/', 'docs/', 'bench/', 'scripts/', 'examples/', 'bin/', '.ci/'];
/** Names the docs mention as things that must not exist, or as placeholders. */
const NOT_FILES = new Set(['utils.ts']);

function listFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) listFiles(path, out);
    else out.push(path.split('\\').join('/'));
  }
  return out;
}

const sources = listFiles('src');

/** Backticked file paths: a root-relative path must exist as written; a shorter one must end some file under src/. */
function missingPaths(doc: string): string[] {
  const text = readFileSync(doc, 'utf8');
  const named = [...text.matchAll(/`([A-Za-z0-9_.\-/]+\.(?:ts|mjs|md|json|yaml|sh))`/g)].map((m) => m[1] as string);
  return [...new Set(named)].filter((path) => {
    if (NOT_FILES.has(path)) return false;
    if (ROOTS.some((root) => path.startsWith(root)) || !path.includes('/')) {
      return !(existsSync(path) || (!path.includes('/') && sources.some((s) => s.endsWith(`/${path}`))));
    }
    return !sources.some((s) => s.endsWith(`/${path}`));
  });
}

for (const doc of ['docs/architecture.md', 'AGENTS.md']) {
  test(`every file ${doc} names exists`, () => {
    assert.deepEqual(missingPaths(doc), []);
  });
}
