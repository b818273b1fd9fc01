// GET /v1/me: any gateway key reads itself — name, team, role, limits, allowed models, each budget with
// spend, remaining and reset time, expiry, tags — so a refused engineer sees why without an admin.
// Errors in OpenAI's shape, as on every /v1 route.
import type { FastifyInstance } from 'fastify';
import { HerdError } from '../core/errors.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';
import type { AdminService } from '../gateway/admin/admin-service.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { fastifyErrorToHerd } from './gateway-exchanges.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import { clientAddressOf } from './resolve-client-address.ts';

export interface MeRouteDeps {
  authenticator: Pick<Authenticator, 'authenticate'>;
  service: Pick<AdminService, 'me'>;
  log?: (line: string) => void;
}

export function registerMeRoute(app: FastifyInstance, deps: MeRouteDeps, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((error: Error, _request, reply) => {
      const herd = fastifyErrorToHerd(error);
      if (herd.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(error)}`);
      const answer = mapErrorToOpenAI(herd);
      void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
    });
    scope.get('/v1/me', async (req, reply) => {
      const result = deps.authenticator.authenticate(req.headers.authorization, clientAddressOf(req.raw));
      if (result instanceof HerdError) throw result;
      const me = await deps.service.me(result.key);
      return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(me));
    });
    allow('/v1/me', ['GET', 'HEAD']);
  });
}
