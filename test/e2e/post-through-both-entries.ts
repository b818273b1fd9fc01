// One gateway POST sent three ways: a plain body (the framework-free fast path), gzipped and chunked (both
// left to the Fastify route). Each dialect's e2e test checks the three answers are the same.
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';

export interface EntryAnswer {
  entry: 'plain' | 'gzip' | 'chunked';
  status: number;
  contentType: string | null;
  text: string;
}

export async function postThroughBothEntries(url: string, headers: Record<string, string>, body: string): Promise<EntryAnswer[]> {
  const plain = await fetch(url, { method: 'POST', headers, body });
  const gzip = await fetch(url, { method: 'POST', headers: { ...headers, 'content-encoding': 'gzip' }, body: gzipSync(body) });
  const chunked = await fetch(url, {
    method: 'POST',
    headers,
    body: Readable.toWeb(Readable.from([body.slice(0, 10), body.slice(10)])) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const answers: EntryAnswer[] = [];
  for (const [entry, res] of [
    ['plain', plain],
    ['gzip', gzip],
    ['chunked', chunked],
  ] as const) {
    answers.push({ entry, status: res.status, contentType: res.headers.get('content-type'), text: await res.text() });
  }
  return answers;
}

/** The answer's text with the fields that differ per request (ids, timestamps) blanked. */
export function withoutRequestIds(text: string): string {
  return text
    .replace(/"id":"[^"]*"/g, '"id":"-"')
    .replace(/"(created|created_at|completed_at)":\d+/g, '"$1":0')
    .replace(/"(msg|resp|item|call|rs)_[A-Za-z0-9_-]+"/g, '"$1_-"');
}
