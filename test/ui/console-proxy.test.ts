// The console behind a real HAProxy that mounts Herd at the two-segment prefix /tools/herd/ (and terminates
// nothing): the /ui redirect, every page and link, the cookie's path, sign-in and sign-out all stay under it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { browserMissing, type BrowserHarness, launchBrowser, type WatchedPage } from '../helpers/browser.ts';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/console-fixture.ts';
import { alerts, CONSOLE_PAGES, openPage, signIn } from '../helpers/console-pages.ts';
import { pageFetch } from '../helpers/page-fetch.ts';
import { haproxyMissing, type PrefixProxy, startPrefixProxy } from '../helpers/prefix-proxy.ts';
import { unexpectedFailures } from './console-checks.ts';

const skip = browserMissing() ?? haproxyMissing();

describe('the console behind HAProxy at /tools/herd/', { skip }, () => {
  let fixture: ConsoleFixture;
  let proxy: PrefixProxy;
  let harness: BrowserHarness;
  let watched: WatchedPage;

  before(async () => {
    [fixture, harness] = await Promise.all([startConsoleFixture({ rows: 120 }), launchBrowser()]);
    proxy = await startPrefixProxy({ target: fixture.url, prefix: '/tools/herd' });
    watched = await harness.newPage();
  });
  after(async () => {
    await harness?.close();
    await proxy?.close();
    await fixture?.close();
  });

  it('GET /tools/herd/ui answers a relative redirect, and the browser lands on /tools/herd/ui/', async () => {
    const res = await fetch(`${proxy.url}/ui`, { redirect: 'manual' });
    assert.equal(res.status, 308);
    const location = res.headers.get('location') ?? '';
    assert.ok(!location.startsWith('/') && !/^https?:/.test(location), `a relative Location keeps the prefix: ${location}`);
    assert.equal(new URL(location, `${proxy.url}/ui`).href, `${proxy.url}/ui/`);
    await watched.page.goto(`${proxy.url}/ui`);
    await watched.page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    assert.ok(watched.page.url().startsWith(`${proxy.url}/ui/`), watched.page.url());
  });

  it('signs in through the proxy: the cookie is scoped to /tools/herd/, and every nav link stays under the prefix', async () => {
    const { page, context } = watched;
    await signIn(page, `${proxy.url}/ui/`, fixture.adminSecret);
    const cookie = (await context.cookies()).find((c) => c.name === 'herd_session');
    assert.equal(cookie?.path, '/tools/herd/', 'the cookie path comes from X-Forwarded-Prefix');
    assert.equal(cookie?.secure, false, 'plain http through the proxy: no Secure flag');
    const links = page.getByRole('navigation', { name: 'Console' }).getByRole('link');
    const hrefs: string[] = [];
    for (const link of await links.all()) hrefs.push(new URL((await link.getAttribute('href')) ?? '', page.url()).href);
    assert.equal(hrefs.length, CONSOLE_PAGES.length);
    for (const href of hrefs) assert.ok(href.startsWith(`${proxy.url}/ui/#/`), href);
  });

  it('every page loads with its data through the proxy', async () => {
    const { page } = watched;
    for (const target of CONSOLE_PAGES) {
      await openPage(page, target);
      assert.deepEqual(await alerts(page), [], `${target.nav}: no error note`);
      assert.ok(page.url().startsWith(`${proxy.url}/ui/#/${target.path}`), page.url());
    }
  });

  it('the playground chats through the proxy with the session cookie', async () => {
    const { page } = watched;
    await openPage(page, CONSOLE_PAGES.find((p) => p.path === 'playground')!);
    await page.getByLabel('Message').fill('hello through the proxy');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Hello from the fake upstream').first().waitFor();
    assert.deepEqual(await alerts(page), []);
  });

  it('signs out and in again through the proxy', async () => {
    const { page } = watched;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    assert.equal((await pageFetch(page, './api/session')).status, 401);
    assert.ok(page.url().startsWith(`${proxy.url}/ui/`), page.url());
    await signIn(page, `${proxy.url}/ui/`, fixture.viewerSecret);
    assert.match((await page.locator('header').textContent()) ?? '', /console-viewer[\s\S]*viewer/);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  });

  it('every request went to the proxy under /tools/herd/, none answered 404, nothing left 127.0.0.1, no console error', () => {
    const outside = watched.requested.filter((url) => !url.startsWith(`${proxy.url}/`));
    assert.deepEqual(outside, [], 'the browser asked for nothing outside the prefix');
    const seen = proxy.requests();
    assert.ok(seen.length > CONSOLE_PAGES.length, `the proxy logged ${seen.length} requests`);
    assert.deepEqual(
      seen.filter((r) => !r.uri.startsWith('/tools/herd/')),
      [],
    );
    assert.deepEqual(
      seen.filter((r) => r.status === 404),
      [],
    );
    assert.deepEqual(watched.blocked, []);
    assert.deepEqual(watched.pageErrors, []);
    assert.deepEqual(watched.consoleErrors, []);
    assert.deepEqual(unexpectedFailures(watched.resourceFailures), []);
  });
});
