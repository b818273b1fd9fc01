// Driving the console's pages the way a user does (by role and label; names from the UI's selector list),
// shared by the browser tests and the screenshot script.
import type { Page } from 'playwright-core';

export interface ConsolePage {
  /** The hash route (`#/<path>`) and the nav link's name. */
  path: string;
  nav: string;
  /** The page's h1. */
  heading: string;
  /** Texts that show the page rendered the fixture's data (not an empty shell): each must appear in main. */
  shows: readonly string[];
}

/** Every page of the nav, in its order, with what the fixture puts on it. */
export const CONSOLE_PAGES: readonly ConsolePage[] = [
  // The ledger's currency, not a model: just after midnight UTC today's top lists may still be empty.
  { path: 'overview', nav: 'Overview', heading: 'Overview', shows: ['Spend in CNY'] },
  { path: 'models', nav: 'Models', heading: 'Models', shows: ['simple', 'deepseek-v3.2'] },
  { path: 'keys', nav: 'Keys', heading: 'Keys', shows: ['research-notebooks', 'console-viewer'] },
  { path: 'teams', nav: 'Teams', heading: 'Teams', shows: ['research', 'platform'] },
  { path: 'spend', nav: 'Spend', heading: 'Spend', shows: ['research-notebooks'] },
  { path: 'requests', nav: 'Requests', heading: 'Requests', shows: ['deepseek-v3.2'] },
  { path: 'audit', nav: 'Audit', heading: 'Audit', shows: ['key.create'] },
  { path: 'playground', nav: 'Playground', heading: 'Playground', shows: ['gpt-4.1'] },
  { path: 'settings', nav: 'Settings', heading: 'Settings', shows: ['server.http_port'] },
];

/** Waits until no "Loading …" note is left on the page. */
export async function settled(page: Page): Promise<void> {
  await page
    .getByText(/^Loading .*…$/)
    .first()
    .waitFor({ state: 'detached', timeout: 15_000 });
}

/** Opens the console's URL and signs in with the key: fill the Key field, press Enter. */
export async function signIn(page: Page, consoleUrl: string, secret: string): Promise<void> {
  await page.goto(consoleUrl);
  await page.getByLabel('Key', { exact: true }).fill(secret);
  await page.getByLabel('Key', { exact: true }).press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Follows the nav link to a page and waits for its heading and data. */
export async function openPage(page: Page, target: ConsolePage): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: target.nav, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: target.heading, exact: true }).waitFor();
  await settled(page);
  for (const text of target.shows) await page.locator('main').getByText(text).first().waitFor({ timeout: 15_000 });
}

/** The words of any error note on the page (role=alert): the console shows API failures this way. */
export async function alerts(page: Page): Promise<string[]> {
  return (await page.getByRole('alert').allTextContents()).map((text) => text.trim()).filter((text) => text !== '');
}
