// After `tsc -p tsconfig.build.json`: copies the files tsc does not emit (plain .mjs entry files, the
// python backend's stub scripts, the vendored .proto files) from src/ to dist/, so the compiled tree runs on its own.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
for (const file of walk(join(root, 'src')).filter((f) => f.endsWith('.mjs') || f.endsWith('.py') || f.endsWith('.proto'))) {
  const target = join(root, 'dist', relative(join(root, 'src'), file));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(file, target);
}
