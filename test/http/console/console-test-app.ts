// A Fastify app with the admin API and the console's routes over a RequestFeed (no gateway), listening on
// a free port, with synthetic admin, viewer and client keys; and a raw SSE reader for the tail tests.
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { HerdError } from '../../../src/core/errors.ts';
import { AdminService } from '../../../src/gateway/admin/admin-service.ts';
import { ConsoleReads } from '../../../src/gateway/admin/console-reads.ts';
import { RecentTraffic } from '../../../src/gateway/billing/recent-traffic.ts';
import { RequestFeed } from '../../../src/gateway/billing/request-feed.ts';
import { parseBearerToken } from '../../../src/gateway/keys/authenticator.ts';
import type { KeyInfo, KeyStore } from '../../../src/gateway/keys/key-store.ts';
import { openKeyStore } from '../../../src/gateway/keys/open-key-store.ts';
import { createSyntheticKey } from '../../../src/gateway/keys/synthetic-key.ts';
import { createConsoleApi } from '../../../src/http/admin-console-routes.ts';
import { registerAdminRoutes } from '../../../src/http/admin-routes.ts';
import type { RequestTails, TailLimits } from '../../../src/http/console/requests-tail-route.ts';

export const TOKENS = { admin: 'tok-admin', viewer: 'tok-viewer', viewer2: 'tok-viewer-2', client: 'tok-client' } as const;
const KEYS: Record<string, KeyInfo> = {
  [TOKENS.admin]: createSyntheticKey({ id: 'key-admin', name: 'admin', role: 'admin' }),
  [TOKENS.viewer]: createSyntheticKey({ id: 'key-viewer', name: 'viewer', role: 'viewer' }),
  [TOKENS.viewer2]: createSyntheticKey({ id: 'key-viewer-2', name: 'viewer 2', role: 'viewer' }),
  [TOKENS.client]: createSyntheticKey({ id: 'key-client', name: 'client', role: 'client' }),
};

export interface ConsoleTestApp {
  app: FastifyInstance;
  url: string;
  feed: RequestFeed;
  tails: RequestTails;
  store: KeyStore;
  close(): Promise<void>;
}

export async function startConsoleTestApp(limits: TailLimits = {}): Promise<ConsoleTestApp> {
  const store = await openKeyStore(join(mkdtempSync(join(tmpdir(), 'herd-console-app-')), 'keys.db'));
  const feed = new RequestFeed();
  const traffic = new RecentTraffic();
  traffic.attach(feed);
  const reads = new ConsoleReads({ feed, traffic });
  const authenticator = {
    authenticate(header: string | undefined) {
      const key = KEYS[parseBearerToken(header) ?? ''];
      return key ? { key } : new HerdError('UNAUTHENTICATED', 'Incorrect API key provided.', { reason: 'invalid_api_key' });
    },
  };
  const app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const api = createConsoleApi({ feed, reads }, undefined, undefined, limits);
  registerAdminRoutes(app, { authenticator, service: new AdminService({ store }), console: api }, () => undefined);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    url,
    feed,
    tails: api.tails,
    store,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

export interface SseReader {
  status: number;
  headers: http.IncomingHttpHeaders;
  response: http.IncomingMessage;
  /** Everything received so far. */
  text(): string;
  /** Resolves once the received text satisfies `test`. */
  until(test: (text: string) => boolean): Promise<string>;
  ended: Promise<void>;
  close(): void;
}

/** Opens a tail with plain http.get, so a test can pause the socket (a slow reader) or close it. */
export function openSse(url: string, token: string): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      let text = '';
      const waiters: (() => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const w of [...waiters]) w();
      });
      const ended = new Promise<void>((done) => {
        res.once('end', done);
        res.once('close', done);
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        response: res,
        text: () => text,
        until: (test) =>
          new Promise((done, fail) => {
            const check = () => {
              if (test(text)) {
                waiters.splice(waiters.indexOf(check), 1);
                done(text);
              }
            };
            waiters.push(check);
            void ended.then(() => (test(text) ? done(text) : fail(new Error(`stream ended without the expected text; got: ${text.slice(-300)}`))));
            check();
          }),
        ended,
        close: () => req.destroy(),
      });
    });
    req.once('error', reject);
  });
}
