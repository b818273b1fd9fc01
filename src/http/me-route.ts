// GET /v1/me: any gateway key reads itself — name, team, role, limits, allowed models, each budget with
// spend, remaining and reset time, expiry, tags — so a refused engineer sees why without an admin.
// Errors in OpenAI's shape, as on every /v1 route.
import type { FastifyInstance } from 'fastify';
import type { AdminService } from '../gateway/admin/admin-service.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { authenticate, setOpenAIErrorHandler } from './openai-routes.ts';

export interface MeRouteDeps {
  authenticator: Pick<Authenticator, 'authenticate'>;
  service: Pick<AdminService, 'me'>;
  log?: (line: string) => void;
}

export function registerMeRoute(app: FastifyInstance, deps: MeRouteDeps, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    setOpenAIErrorHandler(scope, deps.log);
    scope.get('/v1/me', async (req, reply) => {
      const me = await deps.service.me(authenticate(deps.authenticator, req));
      return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(me));
    });
    allow('/v1/me', ['GET', 'HEAD']);
  });
}
