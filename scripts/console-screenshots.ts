// `npm run docs:screenshots`: one 1280x800 PNG per console page into docs/console/, taken in Debian's Chromium
// from the browser tests' fixture (a real Herd, a fake upstream, 30 days of seeded ledger rows, live traffic).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { browserMissing, launchBrowser } from '../test/helpers/browser.ts';
import { type ConsoleFixture, startConsoleFixture } from '../test/helpers/console-fixture.ts';
import { CONSOLE_PAGES, openPage, settled, signIn } from '../test/helpers/console-pages.ts';

const OUT = resolve('docs/console');

/**
 * Traffic while the pictures are taken (a chat request every 300 ms, an inference every 200 ms), so the
 * Overview's rates, latencies and chart and the Models page's statistics are not all zero. Stops when told.
 */
function liveTraffic(fixture: ConsoleFixture): () => Promise<void> {
  const client = fixture.openai(fixture.clientSecret);
  const models = ['gpt-4.1', 'deepseek-v3.2', 'gpt-4.1-mini', 'gpt4', 'fast'];
  const infer = JSON.stringify({ inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })) });
  let running = true;
  const loop = async (every: number, work: (n: number) => Promise<unknown>) => {
    for (let n = 0; running; n++) {
      await work(n).catch(() => undefined);
      await new Promise((r) => setTimeout(r, every));
    }
  };
  const loops = [
    loop(300, (n) => client.chat.completions.create({ model: models[n % models.length] ?? 'gpt-4.1', messages: [{ role: 'user', content: `request ${n}` }] })),
    loop(200, () => fetch(`${fixture.url}/v2/models/simple/infer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: infer }).then((r) => r.arrayBuffer())),
  ];
  return async () => {
    running = false;
    await Promise.all(loops);
  };
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
  const stopTraffic = liveTraffic(fixture);
  try {
    const { page } = await harness.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    await page.goto(fixture.consoleUrl);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await shoot(page, 'sign-in');
    await signIn(page, fixture.consoleUrl, fixture.adminSecret);
    // The Overview last: by then it has a quarter of a minute of traffic to draw.
    for (const target of [...CONSOLE_PAGES.filter((p) => p.path !== 'overview'), ...CONSOLE_PAGES.filter((p) => p.path === 'overview')]) {
      await openPage(page, target);
      await staged[target.path]?.(page);
      await shoot(page, target.path);
      if (target.path === 'requests') {
        await page.locator('main table tbody th a').first().click();
        await page.getByRole('table', { name: /Attempts/ }).waitFor();
        await settled(page);
        await shoot(page, 'request-detail');
      }
    }
  } finally {
    await stopTraffic();
    await harness.close();
    await fixture.close();
  }
}

/** What a page does before its picture: the state a user would be looking at. */
const staged: Record<string, (page: Page) => Promise<void>> = {
  // Two polls, so the statistics chart has a line.
  models: (page) => page.waitForTimeout(10_500),
  playground: async (page) => {
    await page.getByLabel('Message').fill('Say hello to the console.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('heading', { name: 'Last answer' }).waitFor();
  },
  overview: (page) => page.waitForTimeout(5_500),
};

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
