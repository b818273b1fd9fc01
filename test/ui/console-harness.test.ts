// The browser tests' own tools, proven on small local pages: HAProxy mounts a server under the prefix with the
// forwarding headers, the browser refuses and records every request not to 127.0.0.1, errors are collected, axe runs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { axeViolations, browserMissing, type BrowserHarness, isLocalUrl, launchBrowser } from '../helpers/browser.ts';
import { haproxyMissing, startPrefixProxy } from '../helpers/prefix-proxy.ts';

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

const PAGES: Record<string, string> = {
  '/page': `<!doctype html><html lang="en"><head><title>t</title><script src="./app.js"></script></head><body><main><h1>Page</h1>
<form><input id="unlabelled"></form><img src="https://cdn.example.invalid/logo.png" alt="logo"></main></body></html>`,
  '/app.js': `console.error('from the page'); fetch('./missing'); setTimeout(() => { throw new Error('uncaught in the page'); });`,
};

async function startEcho(): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const page = PAGES[path];
    if (page === undefined) {
      res.writeHead(404).end();
      return;
    }
    const type = path.endsWith('.js') ? 'text/javascript' : 'text/html';
    res.writeHead(200, { 'content-type': type, 'content-security-policy': "script-src 'self'" }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('the console test harness', () => {
  let echo: Awaited<ReturnType<typeof startEcho>>;
  before(async () => {
    echo = await startEcho();
  });
  after(() => echo.server.close());

  it('HAProxy mounts the server at /tools/herd: prefix stripped, X-Forwarded-* set by the proxy, anything else 404 at the proxy', async (t) => {
    const missing = haproxyMissing();
    if (missing) return t.skip(missing);
    const proxy = await startPrefixProxy({ target: echo.url });
    try {
      echo.seen.length = 0;
      const ok = await fetch(`${proxy.url}/page?x=1`, { headers: { 'x-forwarded-prefix': '/forged', 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(ok.status, 200);
      await ok.arrayBuffer();
      assert.equal(echo.seen[0]?.url, '/page?x=1');
      assert.equal(echo.seen[0]?.headers['x-forwarded-prefix'], '/tools/herd', "the client's own header is replaced");
      assert.equal(echo.seen[0]?.headers['x-forwarded-for'], '127.0.0.1');
      assert.equal(echo.seen[0]?.headers['x-forwarded-proto'], 'http');
      for (const outside of ['/page', '/tools/herdx/page', '/tools/page']) {
        const res = await fetch(`${proxy.origin}${outside}`);
        await res.arrayBuffer();
        assert.equal(res.status, 404, outside);
      }
      assert.equal(echo.seen.length, 1, 'nothing outside the prefix reached the server');
      const logged = proxy.requests().map((r) => `${r.method} ${r.uri} ${r.status}`);
      assert.deepEqual(logged.slice(0, 2), ['GET /tools/herd/page?x=1 200', 'GET /page 404']);
    } finally {
      await proxy.close();
    }
  });

  it('the browser refuses requests not to 127.0.0.1, and collects console errors, failed loads, uncaught errors and axe violations', async (t) => {
    const missing = browserMissing();
    if (missing) return t.skip(missing);
    const harness: BrowserHarness = await launchBrowser();
    try {
      const watched = await harness.newPage();
      await watched.page.goto(`${echo.url}/page`);
      await watched.page.waitForLoadState('load');
      // The page's script throws from a timer and fetches after load: wait until both were seen (bounded), not a fixed time.
      for (let i = 0; i < 200 && !(watched.pageErrors.length > 0 && watched.resourceFailures.some((f) => f.url.endsWith('/missing'))); i++) await watched.page.waitForTimeout(25);
      assert.deepEqual(watched.blocked, ['https://cdn.example.invalid/logo.png']);
      assert.ok(
        watched.consoleErrors.some((line) => line.startsWith('from the page')),
        watched.consoleErrors.join('\n'),
      );
      assert.ok(
        watched.pageErrors.some((line) => line.includes('uncaught in the page')),
        `page errors: ${watched.pageErrors.join(' | ')}`,
      );
      assert.ok(
        watched.resourceFailures.some((f) => f.url === `${echo.url}/missing` && f.status === 404),
        `failed loads: ${JSON.stringify(watched.resourceFailures)}`,
      );
      const violations = await axeViolations(watched.page);
      assert.ok(
        violations.some((v) => v.id === 'label' && v.targets.includes('#unlabelled')),
        'axe runs under a strict CSP and finds the unlabelled input',
      );
      await watched.close();
    } finally {
      await harness.close();
    }
  });

  it('only loopback URLs count as local', () => {
    assert.ok(isLocalUrl('http://127.0.0.1:8000/ui/'));
    assert.ok(isLocalUrl('data:image/png;base64,AAAA'));
    assert.ok(!isLocalUrl('http://localhost:8000/'));
    assert.ok(!isLocalUrl('https://fonts.googleapis.com/css'));
    assert.ok(!isLocalUrl('http://127.0.0.2/'));
  });
});
