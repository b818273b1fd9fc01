// Triton's API groups on HTTP: each KServe route belongs to one (as server src/http_server.cc files them),
// and a restricted group's request without the master key or Triton's header is refused before its handler.
import type { FastifyInstance } from 'fastify';
import type { ApiGroup, ApiGroupGuard } from '../core/api-groups.ts';
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
export function registerKserveApiGuard(app: FastifyInstance, guard: ApiGroupGuard | undefined): void {
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
    // Triton's own answer for its restricted-API header (http_server.cc RespondIfRestricted): 403.
    const answer = 'kind' in refusal ? createKserveErrorAnswer(403, `This API is restricted, expecting header '${refusal.header}'`) : mapErrorToKserve(refusal);
    void reply.code(answer.status).header('Content-Type', 'application/json').send(answer.body);
  });
}
