// The console in Debian's Chromium against a real Herd (fake upstream, seeded ledger): sign-in by keyboard,
// every page's data, axe, keys created and rotated then used with the openai SDK, the live tail, CSV = API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { axeViolations, browserMissing, type BrowserHarness, describeViolations, launchBrowser, type ResourceFailure, type WatchedPage } from '../helpers/browser.ts';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/console-fixture.ts';
import { alerts, CONSOLE_PAGES, openPage, settled, signIn } from '../helpers/console-pages.ts';
import { csrfTokenOf, pageFetch } from '../helpers/page-fetch.ts';
import { unexpectedFailures } from './console-checks.ts';

const skip = browserMissing();

describe('the console in a real browser', { skip }, () => {
  let fixture: ConsoleFixture;
  let harness: BrowserHarness;
  let admin: WatchedPage;
  let viewer: WatchedPage;
  /** Refusals the tests provoke on purpose (Chromium logs each as a failed load). */
  const provoked: ResourceFailure[] = [];

  before(async () => {
    [fixture, harness] = await Promise.all([startConsoleFixture(), launchBrowser()]);
    admin = await harness.newPage();
  });
  after(async () => {
    await harness?.close();
    await fixture?.close();
  });

  it('signs in from the keyboard: Tab reaches the Key field, Enter submits, then Tab reaches the nav', async () => {
    const { page } = admin;
    await page.goto(fixture.consoleUrl);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    assert.deepEqual(await axeViolations(page).then(describeViolations), '', 'the sign-in page has no serious axe violation');
    assert.ok(await tabUntil(page, (focus) => focus.id === 'sign-in-key'), 'Tab reaches the Key field');
    await page.keyboard.type(fixture.adminSecret);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.match((await page.locator('header').textContent()) ?? '', /console-admin[\s\S]*admin/);
    assert.ok(await tabUntil(page, (focus) => focus.inNav), 'Tab reaches a link of the nav');
  });

  it('every page shows the fixture data, with no error note and no serious or critical axe violation', async () => {
    const { page } = admin;
    const violations: string[] = [];
    for (const target of CONSOLE_PAGES) {
      await openPage(page, target);
      assert.deepEqual(await alerts(page), [], `${target.nav}: no error note`);
      const found = await axeViolations(page);
      if (found.length > 0) violations.push(`${target.nav}:\n${describeViolations(found)}`);
    }
    assert.equal(violations.join('\n'), '', 'axe: zero serious or critical violations');
  });

  it("a request's detail page shows its attempts", async () => {
    const { page } = admin;
    await openPage(page, CONSOLE_PAGES.find((p) => p.path === 'requests')!);
    const first = page.locator('main table tbody th a').first();
    const id = ((await first.textContent()) ?? '').trim();
    await first.click();
    await page.waitForURL((url) => url.hash === `#/requests/${encodeURIComponent(id)}`);
    await page.getByRole('table', { name: /Attempts/ }).waitFor();
    await settled(page);
    assert.ok(((await page.locator('main').textContent()) ?? '').includes(id));
    assert.deepEqual(await alerts(page), []);
  });

  it('creates a key on the Keys page, calls the gateway with its secret through the openai SDK, and the live tail shows that request', async () => {
    const { page } = admin;
    const created = await createKey(page, 'browser-made');
    // The live tail runs in a second tab of the same session, as a user would keep one open.
    const tail = await admin.context.newPage();
    await tail.goto(`${fixture.consoleUrl}#/requests`);
    await tail.getByLabel('Live tail').check();
    await tail.getByText(/^Live: /).waitFor();
    const { response } = await fixture
      .openai(created)
      .chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello from the browser test' }] })
      .withResponse();
    const requestId = response.headers.get('x-request-id');
    assert.ok(requestId, 'the gateway names its request');
    // The tail is fed before the ledger's ~1 s flush; the wait here is only a generous upper bound.
    await tail
      .getByRole('table', { name: /Live tail/ })
      .getByRole('link', { name: requestId })
      .waitFor({ timeout: 10_000 });
    const row = tail.getByRole('row').filter({ has: tail.getByRole('link', { name: requestId }) });
    assert.match((await row.textContent()) ?? '', /browser-made[\s\S]*gpt-4\.1/);
    await tail.close();
  });

  it('rotates that key on the Keys page: the new secret works with the openai SDK', async () => {
    const { page } = admin;
    await openPage(page, CONSOLE_PAGES.find((p) => p.path === 'keys')!);
    await page.getByRole('button', { name: 'Rotate browser-made' }).click();
    const rotated = await secretShown(page, /New secret of the key browser-made/);
    const answer = await fixture.openai(rotated).chat.completions.create({ model: 'deepseek-v3.2', messages: [{ role: 'user', content: 'rotated' }] });
    assert.equal(answer.choices[0]?.message.content, 'Hello from the fake upstream');
    await page.getByRole('button', { name: 'Done, hide the secret' }).click();
    assert.equal(await page.locator('#secret-value').count(), 0, 'the secret is gone once dismissed');
  });

  it('the CSV download has the same rows as the spend API for the same query', async () => {
    const { page } = admin;
    await openPage(page, CONSOLE_PAGES.find((p) => p.path === 'spend')!);
    await page.getByLabel('Group by').selectOption('model');
    await settled(page);
    const link = page.getByRole('link', { name: 'Download CSV' });
    const href = new URL((await link.getAttribute('href')) ?? '', page.url());
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const csv = await readFile((await download.path()) ?? '', 'utf8');
    const json = (await (await fetch(`${fixture.url}/admin/v1/spend${href.search}`, { headers: { authorization: `Bearer ${fixture.adminSecret}` } })).json()) as {
      by: string;
      data: Record<string, string | number | null>[];
    };
    assert.equal(json.by, 'model');
    const lines = csv.trim().split(/\r?\n/);
    const header = (lines[0] ?? '').split(',');
    // The first column is named for the grouping (`model` here), as a spreadsheet user reads it; the others
    // are the JSON's fields, money in decimal units (`cost` = cost_micros / 1e6).
    assert.equal(header[0], 'model', `CSV header: ${lines[0]}`);
    assert.ok(
      ['requests', 'cost', 'usd', 'list_usd', 'prompt_tokens'].every((name) => header.includes(name)),
      `CSV header: ${lines[0]}`,
    );
    const rows = lines.slice(1).map((line) => line.split(','));
    const expected = json.data.map((row) =>
      header.map((name, i) => {
        const value = i === 0 ? row.group : name in row ? row[name] : row[`${name}_micros`];
        if (i > 0 && !(name in row) && typeof value === 'number') return (value / 1e6).toFixed(6);
        return value === null || value === undefined ? '' : String(value);
      }),
    );
    assert.deepEqual(rows, expected, 'every cell of every row');
    assert.ok(rows.length >= 3, 'the seeded ledger has several models');
  });

  it('a viewer sees every page but no mutating button, and a mutating call forged from its page is refused', async () => {
    viewer = await harness.newPage();
    const { page } = viewer;
    await signIn(page, fixture.consoleUrl, fixture.viewerSecret);
    for (const target of CONSOLE_PAGES) {
      await openPage(page, target);
      assert.deepEqual(
        (await buttonNames(page)).filter((name) => MUTATING.test(name)),
        [],
        `${target.nav}: no mutating button for a viewer`,
      );
    }
    const token = await csrfTokenOf(page);
    const json = { 'content-type': 'application/json', 'x-csrf-token': token };
    const forged = [
      await pageFetch(page, '../admin/v1/keys', { method: 'POST', headers: { ...json, 'idempotency-key': 'forged-by-a-viewer' }, body: JSON.stringify({ name: 'forged' }) }),
      await pageFetch(page, '../admin/v1/serving/models/simple/unload', { method: 'POST', headers: json, body: '{}' }),
      await pageFetch(page, '../v1/chat/completions', { method: 'POST', headers: json, body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'x' }] }) }),
    ];
    assert.deepEqual(
      forged.map((answer) => answer.status),
      [403, 403, 403],
    );
    for (const path of ['admin/v1/keys', 'admin/v1/serving/models/simple/unload', 'v1/chat/completions']) provoked.push({ url: `${fixture.url}/${path}`, status: 403 });
    const keys = await fetch(`${fixture.url}/admin/v1/keys?search=forged`, { headers: { authorization: `Bearer ${fixture.adminSecret}` } });
    assert.deepEqual(((await keys.json()) as { data: unknown[] }).data, [], 'no key was made');
    const models = await fetch(`${fixture.url}/v2/models/simple/ready`);
    assert.equal(models.status, 200, 'simple is still loaded');
  });

  it('signing out returns to sign-in and the old cookie stops working', async () => {
    const { page, context } = admin;
    const cookie = (await context.cookies()).find((c) => c.name === 'herd_session');
    assert.ok(cookie, 'signed in with a herd_session cookie');
    assert.ok(cookie.httpOnly && cookie.sameSite === 'Strict' && cookie.path === '/', JSON.stringify(cookie));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    assert.equal((await pageFetch(page, './api/session')).status, 401);
    const replayed = await fetch(`${fixture.url}/admin/v1/keys`, { headers: { cookie: `herd_session=${cookie.value}` } });
    assert.equal(replayed.status, 401, 'the session is revoked on the server, not only forgotten by the page');
  });

  it('no console error, no uncaught error, no failed load but the signed-out session probe, no request off 127.0.0.1', () => {
    for (const [who, watched] of [
      ['admin', admin],
      ['viewer', viewer],
    ] as const) {
      assert.deepEqual(watched.blocked, [], who);
      assert.deepEqual(watched.pageErrors, [], who);
      assert.deepEqual(watched.consoleErrors, [], who);
      assert.deepEqual(unexpectedFailures(watched.resourceFailures, provoked), [], who);
    }
  });
});

/** Buttons a viewer must not see (admin actions); Sign out, filters and pagers are fine. */
const MUTATING = /^(create|rotate|revoke|confirm|block|unblock|delete|load|unload|edit|save|send|stop|infer|copy)\b/i;

/** The accessible names of the page's buttons (aria-label, else text). */
async function buttonNames(page: Page): Promise<string[]> {
  const names: string[] = [];
  for (const button of await page.getByRole('button').all()) names.push((await button.getAttribute('aria-label')) ?? ((await button.textContent()) ?? '').trim());
  return names;
}

interface Focus {
  id: string;
  inNav: boolean;
}

/** Presses Tab (at most 40 times) until the focused element satisfies `done`. */
async function tabUntil(page: Page, done: (focus: Focus) => boolean): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    const focus = (await page.evaluate("({ id: document.activeElement?.id ?? '', inNav: !!document.activeElement?.closest('nav') })")) as Focus;
    if (done(focus)) return true;
  }
  return false;
}

/** The secret the page shows once under a heading matching `title`. */
async function secretShown(page: Page, title: RegExp): Promise<string> {
  await page.getByRole('heading', { name: title }).waitFor();
  const secret = ((await page.locator('#secret-value').textContent()) ?? '').trim();
  assert.match(secret, /^sk-herd-/);
  return secret;
}

/** Creates a client key from the Keys page's form; its secret. */
async function createKey(page: Page, name: string): Promise<string> {
  await openPage(page, CONSOLE_PAGES.find((p) => p.path === 'keys')!);
  await page.getByLabel('Key name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = await secretShown(page, new RegExp(`Secret of the new key ${name}`));
  await page.getByRole('row').filter({ hasText: name }).first().waitFor();
  return secret;
}
