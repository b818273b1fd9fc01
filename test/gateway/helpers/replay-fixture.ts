// Recorded upstream answers (test/fixtures/<provider>/<case>.json|.sse) replayed through the mock upstream:
// the recorded status and headers (heads.json), then the body's exact bytes, written in pieces.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import type { MockHandler } from './mock-upstream.ts';

export type FixtureProvider = 'openai' | 'anthropic' | 'gemini' | 'triton';

export interface Fixture {
  /** `test/fixtures/<provider>/<file>`, for messages. */
  path: string;
  status: number;
  headers: Record<string, string>;
  /** The body as recorded: exactly these bytes go on the wire. */
  body: Buffer;
  /** The body as text (UTF-8). */
  text: string;
}

interface Head {
  status: number;
  headers: Record<string, string>;
}

const ROOT = resolve(import.meta.dirname, '../../fixtures');
const heads = new Map<FixtureProvider, Record<string, Head>>();

function readHeads(provider: FixtureProvider): Record<string, Head> {
  let known = heads.get(provider);
  if (known === undefined) {
    known = JSON.parse(readFileSync(resolve(ROOT, provider, 'heads.json'), 'utf8')) as Record<string, Head>;
    heads.set(provider, known);
  }
  return known;
}

/** A recorded answer; a file without an entry in its provider's heads.json was a 200. */
export function readFixture(provider: FixtureProvider, file: string): Fixture {
  const body = readFileSync(resolve(ROOT, provider, file));
  const head = readHeads(provider)[file];
  const contentType = file.endsWith('.sse') ? 'text/event-stream' : 'application/json';
  return {
    path: `test/fixtures/${provider}/${file}`,
    status: head?.status ?? 200,
    headers: { 'content-type': contentType, ...(contentType === 'text/event-stream' ? { 'cache-control': 'no-cache' } : {}), ...head?.headers },
    body,
    text: body.toString('utf8'),
  };
}

/** A recorded body's JSON, for tests that compare what came out with what was recorded. */
export function readFixtureJson(provider: FixtureProvider, file: string): unknown {
  return JSON.parse(readFixture(provider, file).text);
}

/** The `data:` payloads of a recorded SSE body, in order (comments and `event:` lines left out). */
export function readFixtureSseData(provider: FixtureProvider, file: string): string[] {
  return readFixture(provider, file)
    .text.split(/\r?\n/)
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length));
}

export interface ReplayOptions {
  /**
   * Bytes per write (default 61: cuts fall inside lines, JSON and multi-byte characters, as TCP may cut
   * them). 0 writes the body at once.
   */
  pieceBytes?: number;
  /** Destroy the socket after this many body bytes instead of ending the response (a connection reset). */
  resetAfterBytes?: number;
}

/** Writes a recorded answer: its status and headers, then its body in pieces, each written before the next. */
export async function replayFixture(res: ServerResponse, fixture: Fixture, options: ReplayOptions = {}): Promise<void> {
  const { body } = fixture;
  const headers: Record<string, string | number> = { ...fixture.headers };
  const streamed = fixture.headers['content-type'] === 'text/event-stream';
  if (!streamed) headers['content-length'] = body.length;
  res.writeHead(fixture.status, headers);
  const end = options.resetAfterBytes === undefined ? body.length : Math.min(options.resetAfterBytes, body.length);
  const size = options.pieceBytes === 0 ? body.length : (options.pieceBytes ?? 61);
  for (let at = 0; at < end; at += size) {
    const piece = body.subarray(at, Math.min(at + size, end));
    // A client that went away ends the replay; it is not the fixture's failure.
    const written = await new Promise<boolean>((done) => res.write(piece, (err) => done(!err)));
    if (!written || res.destroyed) return;
  }
  if (options.resetAfterBytes !== undefined) {
    res.socket?.destroy();
    return;
  }
  res.end();
}

/** A mock-upstream handler answering every request with one recorded answer. */
export function serveFixture(provider: FixtureProvider, file: string, options: ReplayOptions = {}): MockHandler {
  const fixture = readFixture(provider, file);
  return (_req, res) => replayFixture(res, fixture, options);
}

/** The byte offset just after the first `count` events of a recorded SSE body (for resetAfterBytes). */
export function offsetAfterEvents(fixture: Fixture, count: number): number {
  const text = fixture.text;
  let at = 0;
  for (let i = 0; i < count; i++) {
    const next = /\r?\n\r?\n/.exec(text.slice(at));
    if (next === null) throw new Error(`${fixture.path} has fewer than ${count} events`);
    at += next.index + next[0].length;
  }
  return Buffer.byteLength(text.slice(0, at));
}
