// Debian's Chromium driven by playwright-core for the console's browser tests: headless, no downloads, every
// request that is not to 127.0.0.1 failed and recorded, console and page errors collected, axe-core on demand.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser suites cannot run here (they skip with it), or undefined when they can. */
export function browserMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (Debian: apt-get install -y chromium; .ci/run installs it)`;
}

// Quiet, offline, reproducible: no GPU, no QUIC, no background fetches (updates, sync, field trials)
// that would show up as requests leaving the machine.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A browser-generated console line for an HTTP error answer or a failed load (not a script's error). */
const RESOURCE_FAILURE = /^Failed to load resource: (?:the server responded with a status of (\d+)|(net::\S+))/;

export interface ResourceFailure {
  url: string;
  /** The HTTP status, or the network error (net::ERR_…). */
  status: number | string;
}

/** A page whose traffic and errors are being recorded. */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Every request the page made (URL), allowed or not. */
  requested: string[];
  /** Requests refused because they were not to 127.0.0.1 (URL). */
  blocked: string[];
  /** console.error / console.assert lines of the page's scripts. */
  consoleErrors: string[];
  /** Uncaught exceptions and unhandled rejections. */
  pageErrors: string[];
  /** Chromium's own "Failed to load resource" lines: the URL and the status it logged. */
  resourceFailures: ResourceFailure[];
  close(): Promise<void>;
}

export interface BrowserHarness {
  browser: Browser;
  /** A fresh context (its own cookies) with one page, watched. */
  newPage(options?: BrowserContextOptions): Promise<WatchedPage>;
  close(): Promise<void>;
}

/** Only loopback HTTP(S) leaves the browser; data:/blob: URLs never reach the network. */
export function isLocalUrl(url: string): boolean {
  const parsed = new URL(url);
  if (parsed.protocol === 'data:' || parsed.protocol === 'blob:' || url === 'about:blank') return true;
  return (parsed.protocol === 'http:' || parsed.protocol === 'https:' || parsed.protocol === 'ws:') && parsed.hostname === '127.0.0.1';
}

/**
 * Launches /usr/bin/chromium headless. playwright's launch() gives the browser a fresh temporary user-data-dir
 * (removed at close), so no profile, cache or cookie survives from one run to the next; downloads go to our
 * own temp folder.
 */
export async function launchBrowser(): Promise<BrowserHarness> {
  const downloads = mkdtempSync(join(tmpdir(), 'herd-browser-downloads-'));
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, downloadsPath: downloads });
  return {
    browser,
    newPage: (options) => watchedPage(browser, options),
    close: async () => {
      await browser.close();
      rmSync(downloads, { recursive: true, force: true });
    },
  };
}

async function watchedPage(browser: Browser, options: BrowserContextOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true, ...options });
  const watched: WatchedPage = {
    page: undefined as unknown as Page,
    context,
    requested: [],
    blocked: [],
    consoleErrors: [],
    pageErrors: [],
    resourceFailures: [],
    close: () => context.close(),
  };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    watched.requested.push(url);
    if (isLocalUrl(url)) return route.continue();
    watched.blocked.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('websocket', (socket) => {
    if (!isLocalUrl(socket.url())) watched.blocked.push(socket.url());
  });
  page.on('pageerror', (error) => watched.pageErrors.push(String(error.stack ?? error)));
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'assert') return;
    const failure = RESOURCE_FAILURE.exec(message.text());
    if (failure) {
      const status = failure[1] !== undefined ? Number(failure[1]) : (failure[2] ?? 'unknown');
      watched.resourceFailures.push({ url: message.location().url, status });
    } else {
      watched.consoleErrors.push(`${message.text()} (${message.location().url}:${message.location().lineNumber})`);
    }
  });
  watched.page = page;
  return watched;
}

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  /** CSS targets of the offending nodes (first few). */
  targets: string[];
}

interface AxeResultsJson {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
}

let axeSource: string | undefined;

/**
 * Runs axe-core (node_modules/axe-core/axe.min.js: no CDN) on the page; its serious and critical violations.
 * Evaluated over the DevTools protocol rather than added as a <script>: the console's CSP refuses inline scripts.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Strings, not functions: the page's globals (window, axe) are not in this project's TypeScript lib.
  const injected = await page.evaluate("typeof window.axe === 'object'");
  if (!injected) await page.evaluate(axeSource);
  const results = (await page.evaluate("window.axe.run(document, { resultTypes: ['violations'] })")) as AxeResultsJson;
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact ?? '', help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.map(String).join(' ')) }));
}

/** One line per violation, for an assertion message. */
export function describeViolations(violations: readonly AxeViolation[]): string {
  return violations.map((v) => `${v.impact} ${v.id}: ${v.help} [${v.targets.join(', ')}]`).join('\n');
}
