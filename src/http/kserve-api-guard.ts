// Triton's API groups on HTTP: each KServe route belongs to one (as server src/http_server.cc files them),
// and a restricted group's request without the master key or Triton's header is refused before its handler.
// The console's session cookie stands for its key here too (with the CSRF token): a master-key session
// passes the groups that need the master key; a Triton header rule needs the header.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiGroup, ApiGroupGuard, ApiGroupRefusal } from '../core/api-groups.ts';
import { HerdError } from '../core/errors.ts';
import type { ConsoleSessionAuth } from './console/session-auth.ts';
import { usesSessionCookie } from './console/session-cookie.ts';
import { createKserveErrorAnswer, mapErrorToKserve } from './map-kserve-error.ts';

/** The group of a registered route pattern (Fastify's `/v2/models/:model/...`); undefined: not a KServe route. */
export function groupOfKserveRoute(url: string): ApiGroup | undefined {
  if (!url.startsWith('/v2')) return undefined;
  if (url.startsWith('/v2/health/') || url.endsWith('/ready')) return 'health';
  if (url.startsWith('/v2/repository')) return 'model-repository';
  if (url.startsWith('/v2/systemsharedmemory') || url.startsWith('/v2/cudasharedmemory')) return 'shared-memory';
  if (url.endsWith('/trace/setting')) return 'trace';
  if (url === '/v2/logging') return 'logging';
  if (url.endsWith('/stats')) return 'statistics';
  if (url.endsWith('/config')) return 'model-config';
  if (url.endsWith('/infer') || url.endsWith('/generate') || url.endsWith('/generate_stream')) return 'inference';
  return 'metadata';
}

/** Adds the check to every KServe route when any group is restricted (none: no hook, no cost). */
export function registerKserveApiGuard(app: FastifyInstance, guard: ApiGroupGuard | undefined, session?: ConsoleSessionAuth): void {
  if (guard === undefined) return;
  const groups = new Map<string, ApiGroup | undefined>();
  app.addHook('onRoute', (route) => {
    groups.set(route.url, groupOfKserveRoute(route.url));
  });
  app.addHook('onRequest', (request, reply, done) => {
    const url = request.routeOptions.url;
    const group = url === undefined ? undefined : groups.get(url);
    if (group === undefined || !guard.isRestricted(group)) {
      done();
      return;
    }
    const headers = request.headers;
    const refusal = guard.check(group, (name) => {
      const value = headers[name];
      return Array.isArray(value) ? value[0] : value;
    });
    if (refusal === undefined) {
      done();
      return;
    }
    // A master-key rule refused a request that sent no key: the console's cookie may carry one.
    if (session !== undefined && refusal instanceof HerdError && usesSessionCookie(headers)) {
      session.authenticate(request.raw, true).then(
        (caller) => {
          if (caller === undefined) sendRefusal(reply, refusal);
          else if (caller instanceof HerdError) sendRefusal(reply, caller);
          else if (caller.key.id === 'master') done();
          else
            sendRefusal(
              reply,
              new HerdError('PERMISSION_DENIED', `The ${group} API needs the master key; this console session signed in with the key '${caller.key.name}'.`, {
                reason: 'admin_only',
              }),
            );
        },
        (err: unknown) => sendRefusal(reply, err instanceof HerdError ? err : new HerdError('INTERNAL', String(err))),
      );
      return;
    }
    sendRefusal(reply, refusal);
  });
}

function sendRefusal(reply: FastifyReply, refusal: ApiGroupRefusal): void {
  // Triton's own answer for its restricted-API header (http_server.cc RespondIfRestricted): 403.
  const answer = 'kind' in refusal ? createKserveErrorAnswer(403, `This API is restricted, expecting header '${refusal.header}'`) : mapErrorToKserve(refusal);
  void reply.code(answer.status).header('Content-Type', 'application/json').send(answer.body);
}
