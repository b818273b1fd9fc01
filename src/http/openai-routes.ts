// The gateway's GET routes: /v1/models (Anthropic's shape for Anthropic clients) and /health; errors in
// OpenAI's shape. Every POST route is in the exchanges' table (gateway-exchanges.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError } from '../core/errors.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import type { KeyInfo } from '../gateway/keys/key-store.ts';
import { isAnthropicClient, sendAnthropicModelList } from './anthropic-routes.ts';
import { fastifyErrorToHerd } from './gateway-exchanges.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import type { OpenAIDeps } from './openai-deps.ts';
import { clientAddressOf } from './resolve-client-address.ts';

export function registerOpenAIRoutes(app: FastifyInstance, deps: OpenAIDeps, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    setOpenAIErrorHandler(scope, deps.log);

    scope.get('/v1/models', async (req, reply) => {
      // Claude Code and the Anthropic SDKs list models too, and parse Anthropic's shape.
      if (isAnthropicClient(req.headers)) return sendAnthropicModelList(deps, req, reply);
      const key = authenticate(deps.authenticator, req);
      const data = await deps.gateway.listModels((model) => !deps.authenticator.authorizeModel(key, model));
      return reply
        .code(200)
        .header('content-type', 'application/json')
        .send(JSON.stringify({ object: 'list', data }));
    });
    allow('/v1/models', ['GET', 'HEAD']);

    scope.get('/health', async (_req, reply) => {
      const health = deps.gateway.health();
      const status = health.providers.some((p) => p.enabled) ? 'ok' : 'no_providers';
      const ledger = deps.ledgerHealth?.();
      return reply
        .code(200)
        .header('content-type', 'application/json')
        .send(JSON.stringify({ status, ...health, ...(ledger ? { ledger } : {}) }));
    });
    allow('/health', ['GET', 'HEAD']);
  });
}

/** Every /v1 GET route's error answer: OpenAI's shape, an internal error logged (escaped). */
export function setOpenAIErrorHandler(scope: FastifyInstance, log: ((line: string) => void) | undefined): void {
  scope.setErrorHandler((error: Error, _request, reply) => {
    const herd = fastifyErrorToHerd(error);
    if (herd.code === 'INTERNAL') log?.(`gateway error: ${formatErrorForLog(error)}`);
    sendError(reply, herd);
  });
}

/** The request's key, or the authentication error thrown for the error handler. */
export function authenticate(authenticator: Pick<Authenticator, 'authenticate'>, req: FastifyRequest): KeyInfo {
  const result = authenticator.authenticate(req.headers.authorization, clientAddressOf(req.raw));
  if (result instanceof HerdError) throw result;
  return result.key;
}

function sendError(reply: FastifyReply, error: HerdError): void {
  const answer = mapErrorToOpenAI(error);
  void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}
