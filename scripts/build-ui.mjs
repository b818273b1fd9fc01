// Bundles the web console (ui/) with esbuild into dist/ui/ (or --out <dir>): index.html naming the hashed
// assets/app-<hash>.js and .css, minified, no source maps, and manifest.json with each file's gzipped size.
import { readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const outFlag = process.argv.indexOf('--out');
const out = resolve(outFlag >= 0 ? process.argv[outFlag + 1] : join(root, 'dist', 'ui'));

// Hashed names change with every edit: start from an empty folder so stale bundles are not shipped.
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: [
    { in: 'ui/src/main.tsx', out: 'app' },
    { in: 'ui/styles.css', out: 'app' },
  ],
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  tsconfig: 'ui/tsconfig.json',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  sourcemap: false,
  // Preact's MIT notice is in the package; the bundle carries no comments (and so no URLs in them).
  legalComments: 'none',
  charset: 'utf8',
  metafile: true,
  logLevel: 'warning',
});

const files = Object.keys(result.metafile.outputs).map((path) => basename(path));
const js = files.filter((f) => f.endsWith('.js'));
const css = files.filter((f) => f.endsWith('.css'));
if (js.length !== 1 || css.length !== 1) throw new Error(`expected one .js and one .css bundle, got ${files.join(', ')}`);

const html = readFileSync(join(root, 'ui', 'index.html'), 'utf8')
  .replace('./assets/app.css', `./assets/${css[0]}`)
  .replace('./assets/app.js', `./assets/${js[0]}`);
writeFileSync(join(out, 'index.html'), html);

const gzipBytes = {};
for (const name of ['index.html', ...files.map((f) => `assets/${f}`)]) gzipBytes[name] = gzipSync(readFileSync(join(out, name)), { level: 9 }).length;
const manifest = { js: js.map((f) => `assets/${f}`), css: css.map((f) => `assets/${f}`), gzipBytes };
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
if (!process.argv.includes('--quiet'))
  process.stdout.write(
    `console built in ${out}: ${Object.entries(gzipBytes)
      .map(([f, n]) => `${f} ${n} B gzipped`)
      .join(', ')}\n`,
  );
