// The console's page on the real server: /ui redirects relatively to ui/, index.html and hashed assets with
// their cache and security headers, 404 for unknown files and path traversal, 503 when the console is not built.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HerdServer, startHerd } from '../../../src/app.ts';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { APP_JS, type Answer, type ConsoleTestServer, INDEX_HTML, send, startConsoleTestServer, writeConsoleFixture } from './console-test-server.ts';

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function assertConsoleHeaders(answer: Answer): void {
  assert.equal(answer.headers['content-security-policy'], CSP);
  assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  assert.equal(answer.headers['referrer-policy'], 'no-referrer');
}

describe('the console page', () => {
  let server: ConsoleTestServer;
  before(async () => {
    server = await startConsoleTestServer();
  });
  after(async () => server?.close());

  it('GET /ui answers 308 to the relative ui/', async () => {
    const answer = await send(server.url, '/ui');
    assert.equal(answer.status, 308);
    assert.equal(answer.headers.location, 'ui/');
    assertConsoleHeaders(answer);
  });

  it('serves index.html at /ui/ and /ui/index.html, not cached without revalidation', async () => {
    for (const path of ['/ui/', '/ui/index.html', '/ui/?from=bookmark']) {
      const answer = await send(server.url, path);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.text, INDEX_HTML);
      assert.match(String(answer.headers['content-type']), /^text\/html/);
      assert.equal(answer.headers['cache-control'], 'no-cache');
      assertConsoleHeaders(answer);
    }
  });

  it('serves assets as immutable', async () => {
    const answer = await send(server.url, '/ui/assets/app-x.js');
    assert.equal(answer.status, 200);
    assert.equal(answer.text, APP_JS);
    assert.match(String(answer.headers['content-type']), /^text\/javascript/);
    assert.equal(answer.headers['cache-control'], 'public, max-age=31536000, immutable');
    assertConsoleHeaders(answer);
  });

  it('answers 404 for unknown files and for paths that climb out of the root', async () => {
    for (const path of [
      '/ui/assets/nope.js',
      '/ui/nope.html',
      '/ui/assets/..%2f..%2fpackage.json',
      '/ui/assets/../../package.json',
      '/ui/assets/%2e%2e/%2e%2e/package.json',
      '/ui/assets/.hidden',
      '/ui/api/other',
    ]) {
      const answer = await send(server.url, path);
      assert.equal(answer.status, 404, path);
      assert.doesNotMatch(answer.text, /"name"/, path);
      assertConsoleHeaders(answer);
    }
  });
});

describe('a Herd without a built console and without a gateway', () => {
  let herd: HerdServer;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-console-bare-'));
    const yaml = 'server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, allow_grpc: false }\n';
    herd = await startHerd(parseHerdConfig(yaml, join(dir, 'herd.yaml')), { consoleRoot: join(dir, 'no-such-dir') });
  });
  after(async () => herd?.close());

  it('GET /ui/ answers 503 saying to run npm run build', async () => {
    const answer = await send(herd.httpUrl, '/ui/');
    assert.equal(answer.status, 503);
    assert.match(answer.text, /npm run build/);
  });

  it('sign-in answers 503: sessions need the gateway key store', async () => {
    const answer = await send(herd.httpUrl, '/ui/api/session', { method: 'POST', body: { key: 'x' } });
    assert.equal(answer.status, 503);
    assert.match(String((answer.json().error as { message: string }).message), /gateway/);
  });
});

describe('server.ui.enabled: false (--no-ui)', () => {
  let herd: HerdServer;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-console-off-'));
    const yaml = 'server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, allow_grpc: false, ui: { enabled: false } }\n';
    herd = await startHerd(parseHerdConfig(yaml, join(dir, 'herd.yaml')), { consoleRoot: writeConsoleFixture() });
  });
  after(async () => herd?.close());

  it('serves no console', async () => {
    assert.equal((await send(herd.httpUrl, '/ui/')).status, 404);
    assert.equal((await send(herd.httpUrl, '/ui')).status, 404);
  });
});
