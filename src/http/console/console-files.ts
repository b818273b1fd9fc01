// The console's built files (dist/ui of the package, found from this module's own location whether it runs
// from src/ or dist/), read by a name checked segment by segment so nothing outside the root can be named.
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** A safe relative name: segments of letters, digits, `_`, `-` and `.`, none starting with a dot. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/** `<package>/dist/ui`: the nearest package.json named herd above this module; undefined when there is none. */
export function findConsoleRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = from;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && readPackageName(manifest) === 'herd') return join(dir, 'dist', 'ui');
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function readPackageName(file: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name;
  } catch {
    return undefined;
  }
}

export interface ConsoleFile {
  body: Buffer;
  contentType: string;
}

/** Whether the console was built there (its index.html exists). */
export function isConsoleBuilt(root: string | undefined): root is string {
  return root !== undefined && existsSync(join(root, 'index.html'));
}

/** The file `name` under `root`, or undefined when the name is not a safe one or no such file exists. */
export async function readConsoleFile(root: string, name: string): Promise<ConsoleFile | undefined> {
  if (!SAFE_NAME.test(name)) return undefined;
  const base = resolve(root);
  const path = resolve(base, name);
  if (!path.startsWith(base + sep)) return undefined;
  try {
    const body = await readFile(path);
    return { body, contentType: CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream' };
  } catch {
    // A directory, or a file that vanished: not found either way.
    return undefined;
  }
}
