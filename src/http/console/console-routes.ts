// The web console on the HTTP port: GET /ui (a relative redirect to ui/), the built page and its hashed assets
// under /ui/, and the session API at /ui/api/session (session-routes.ts), every answer with the console's
// security headers. Hash routing: the server only ever serves index.html and assets/*.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { findConsoleRoot, isConsoleBuilt, readConsoleFile } from './console-files.ts';
import { RequestOrigin } from './request-origin.ts';
import type { ConsoleOptions } from './console-options.ts';
import { registerSessionRoutes } from './session-routes.ts';

export type { ConsoleOptions } from './console-options.ts';

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const INDEX_CACHE = 'no-cache';
const ASSET_CACHE = 'public, max-age=31536000, immutable';
const NOT_BUILT = 'The Herd console is not built: run `npm run build` (or `npm run build:ui`) in the Herd package, then restart.\n';

export function registerConsoleRoutes(app: FastifyInstance, options: ConsoleOptions, trustedProxies: readonly string[], allow: (url: string, methods: string[]) => void): void {
  const origin = new RequestOrigin(trustedProxies, options.ui.base_path);
  const root = options.staticRoot ?? findConsoleRoot();
  void app.register(async (scope) => {
    scope.addHook('onSend', (_request, reply, payload, done) => {
      reply.headers(CONSOLE_HEADERS);
      done(null, payload);
    });
    // Relative, so the browser keeps whatever prefix and scheme it used to reach /ui.
    scope.get('/ui', async (_req, reply) => reply.code(308).header('location', 'ui/').header('content-type', 'text/plain; charset=utf-8').send('ui/\n'));
    scope.get('/ui/*', async (req, reply) => {
      const name = (req.params as { '*': string })['*'];
      if (name.startsWith('api/')) return sendNotFound(reply);
      if (!isConsoleBuilt(root)) return reply.code(503).header('content-type', 'text/plain; charset=utf-8').header('cache-control', INDEX_CACHE).send(NOT_BUILT);
      const index = name === '' || name === 'index.html';
      if (!index && !name.startsWith('assets/')) return sendNotFound(reply);
      const file = await readConsoleFile(root, index ? 'index.html' : name);
      if (file === undefined) return sendNotFound(reply);
      return reply
        .code(200)
        .header('content-type', file.contentType)
        .header('cache-control', index ? INDEX_CACHE : ASSET_CACHE)
        .send(file.body);
    });
    registerSessionRoutes(scope, { ...options, origin });
  });
  allow('/ui', ['GET', 'HEAD']);
  allow('/ui/api/session', ['GET', 'HEAD', 'POST', 'DELETE']);
}

function sendNotFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).header('content-type', 'text/plain; charset=utf-8').header('cache-control', INDEX_CACHE).send('Not found\n');
}
