// DESIGN.md's import direction, checked: cli → app.ts → http|grpc → serving|gateway → core|config|metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = resolve('src');
const ALLOWED: Record<string, string[]> = {
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

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const layerOf = (file: string) => relative(SRC, file).split('/')[0] as string;

test('every import in src/ follows the layer direction', () => {
  const wrong: string[] = [];
  for (const file of files(SRC)) {
    const from = layerOf(file);
    const allowed = ALLOWED[from];
    assert.ok(allowed, `unknown top-level folder src/${from}: add it to DESIGN.md and this test`);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.[^'"]+)['"]/g)) {
      const target = resolve(dirname(file), match[1] as string);
      if (!target.startsWith(SRC)) continue;
      const to = layerOf(target);
      if (to !== from && !allowed.includes(to)) wrong.push(`${relative(SRC, file)} imports ${relative(SRC, target)} (${from} → ${to})`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('serving and gateway never import each other', () => {
  assert.ok(!ALLOWED.serving?.includes('gateway'));
  assert.ok(!ALLOWED.gateway?.includes('serving'));
});
