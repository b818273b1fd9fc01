// fetch() run inside the console's page (its origin, its cookie): what a script on the page, or a forged
// call from it, gets from the server.
import type { Page } from 'playwright-core';

export interface PageAnswer {
  status: number;
  text: string;
  headers: Record<string, string>;
}

/** `url` is resolved against the page's location, as the console's own relative URLs are. */
export function pageFetch(page: Page, url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<PageAnswer> {
  return page.evaluate(
    async ([target, options]) => {
      const res = await fetch(target, { ...options, credentials: 'same-origin' });
      return { status: res.status, text: await res.text(), headers: Object.fromEntries(res.headers) };
    },
    [url, init] as const,
  );
}

/** The session's CSRF token, as the console reads it (GET ./api/session). */
export async function csrfTokenOf(page: Page): Promise<string> {
  const answer = await pageFetch(page, './api/session');
  if (answer.status !== 200) throw new Error(`GET ./api/session answered ${answer.status}: ${answer.text}`);
  return (JSON.parse(answer.text) as { csrf_token: string }).csrf_token;
}
