// `npm run docs:screenshots`: one 1280x800 PNG per console page into docs/console/, taken in Debian's Chromium
// from the browser tests' fixture (a real Herd, a fake upstream, 30 days of seeded ledger rows, live traffic).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { browserMissing, launchBrowser } from '../test/helpers/browser.ts';
import { type ConsoleFixture, startConsoleFixture } from '../test/helpers/console-fixture.ts';
import { CONSOLE_PAGES, openPage, settled, signIn } from '../test/helpers/console-pages.ts';

const OUT = resolve('docs/console');

/** Some traffic of the last minute, so the Overview's rates, latencies and chart are not all zero. */
async function liveTraffic(fixture: ConsoleFixture): Promise<void> {
  const client = fixture.openai(fixture.clientSecret);
  const models = ['gpt-4.1', 'deepseek-v3.2', 'gpt-4.1-mini', 'gpt4'];
  for (let round = 0; round < 6; round++) {
    await Promise.all(models.map((model, i) => client.chat.completions.create({ model, messages: [{ role: 'user', content: `round ${round} ${i}` }] })));
    await new Promise((r) => setTimeout(r, 400));
  }
  const infer = { inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })) };
  for (let i = 0; i < 20; i++) {
    await fetch(`${fixture.url}/v2/models/simple/infer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(infer) });
  }
}

async function shoot(page: Page, name: string): Promise<void> {
  // Let polled pages (Overview, Models: every 5 s) and CSS settle; the caret would blink into the picture.
  await page.evaluate('document.activeElement instanceof HTMLElement && document.activeElement.blur()');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: false });
  process.stdout.write(`docs/console/${name}.png\n`);
}

async function main(): Promise<void> {
  const missing = browserMissing();
  if (missing) throw new Error(missing);
  mkdirSync(OUT, { recursive: true });
  const [fixture, harness] = await Promise.all([startConsoleFixture(), launchBrowser()]);
  try {
    await liveTraffic(fixture);
    const { page } = await harness.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    await page.goto(fixture.consoleUrl);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await shoot(page, 'sign-in');
    await signIn(page, fixture.consoleUrl, fixture.adminSecret);
    for (const target of CONSOLE_PAGES) {
      await openPage(page, target);
      await shoot(page, target.path);
      if (target.path === 'requests') {
        await page.locator('main table tbody th a').first().click();
        await page.getByRole('table', { name: /Attempts/ }).waitFor();
        await settled(page);
        await shoot(page, 'request-detail');
      }
    }
  } finally {
    await harness.close();
    await fixture.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
