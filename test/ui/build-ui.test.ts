// The console's build (scripts/build-ui.mjs) into a temporary folder: the first page's JavaScript within
// its gzipped budget, manifest.json true to the files, every asset URL in index.html relative (a proxy's
// path prefix holds), and nothing in the bundle that would fetch from the network at run time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_GZIP_BYTES = 300 * 1000;
/** URLs a bundle may name without fetching them: the XML namespaces Preact creates SVG and MathML elements in. */
const ALLOWED_URLS = new Set(['http://www.w3.org/2000/svg', 'http://www.w3.org/1999/xhtml', 'http://www.w3.org/1998/Math/MathML', 'http://www.w3.org/1999/xlink']);

interface Manifest {
  js: string[];
  css: string[];
  gzipBytes: Record<string, number>;
}

const out = mkdtempSync(join(tmpdir(), 'herd-ui-build-'));
const built = spawnSync(process.execPath, ['scripts/build-ui.mjs', '--out', out, '--quiet'], { encoding: 'utf8' });
test.after(() => rmSync(out, { recursive: true, force: true }));

const manifest = (): Manifest => JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
const html = () => readFileSync(join(out, 'index.html'), 'utf8');

test('the build succeeds and writes index.html, one hashed .js and .css, and manifest.json', () => {
  assert.equal(built.status, 0, built.stderr);
  const { js, css } = manifest();
  assert.equal(js.length, 1);
  assert.equal(css.length, 1);
  assert.match(js[0], /^assets\/app-[A-Z0-9]+\.js$/);
  assert.match(css[0], /^assets\/app-[A-Z0-9]+\.css$/);
  for (const file of [...js, ...css]) assert.ok(existsSync(join(out, file)), file);
  assert.ok(!existsSync(join(out, `${js[0]}.map`)), 'no source map is shipped');
});

test(`the first page's JavaScript is at most ${BUDGET_GZIP_BYTES / 1000} KB gzipped, and gzipBytes is true to the files`, () => {
  const { js, gzipBytes } = manifest();
  for (const [file, bytes] of Object.entries(gzipBytes)) assert.equal(bytes, gzipSync(readFileSync(join(out, file)), { level: 9 }).length, file);
  const total = js.reduce((sum, file) => sum + gzipBytes[file], 0);
  assert.ok(total <= BUDGET_GZIP_BYTES, `${total} bytes gzipped`);
});

test('index.html names its assets by relative URLs only, and they are the built files', () => {
  const page = html();
  const urls = [...page.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
  const { js, css } = manifest();
  assert.deepEqual(urls.filter((u) => u.startsWith('./assets/')).sort(), [...js, ...css].map((f) => `./${f}`).sort());
  for (const url of urls) assert.ok(url.startsWith('./') || url.startsWith('data:'), `${url} is not relative`);
  assert.doesNotMatch(page, /<base\b/i, 'a <base href> would break behind a path prefix');
});

test('index.html has no inline script or style (the console is served with script-src and style-src self)', () => {
  const page = html();
  for (const tag of page.match(/<script\b[^>]*>/gi) ?? []) assert.match(tag, /\ssrc="/, tag);
  assert.doesNotMatch(page, /<style\b/i);
  assert.doesNotMatch(page, /\sstyle="/i);
});

test('the bundle fetches nothing from the network: no http(s) URL but XML namespaces, no web font, no CSS import', () => {
  const { js, css } = manifest();
  const script = readFileSync(join(out, js[0]), 'utf8');
  const urls = [...script.matchAll(/https?:\/\/[^\s"'`)\\]+/g)].map((m) => m[0]);
  assert.deepEqual(
    urls.filter((u) => !ALLOWED_URLS.has(u)),
    [],
  );
  const style = readFileSync(join(out, css[0]), 'utf8');
  assert.doesNotMatch(style, /https?:\/\//);
  assert.doesNotMatch(style, /@import|@font-face|url\(/);
  // Every API path the console calls is relative: no absolute path to the server's root.
  assert.doesNotMatch(script, /["'`]\/(admin|v1|v2|ui)\//);
});
