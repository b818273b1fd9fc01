// OpenAI-compatible routes: POST /v1/chat/completions (JSON or SSE), POST /v1/embeddings, GET /v1/models
// (Anthropic's shape for Anthropic clients), GET /health.
// Thin: the POST routes answer through the exchanges' table (gateway-exchanges.ts); errors in OpenAI's shape.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import type { KeyInfo } from '../gateway/keys/key-store.ts';
import { isAnthropicClient, sendAnthropicModelList } from './anthropic-routes.ts';
import { EMBEDDINGS_PATH } from './embeddings-exchange.ts';
import { type GatewayExchanges, registerExchangeRoute } from './gateway-exchanges.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import type { OpenAIDeps } from './openai-deps.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

// anthropic-routes.ts still names the type here; the circle that keeps is listed in ALLOWED_CYCLES.

export function registerOpenAIRoutes(app: FastifyInstance, deps: OpenAIDeps, exchanges: GatewayExchanges, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((error: Error, request, reply) => {
      const herd = toHerdError(error instanceof HerdError ? error : fastifyErrorToHerd(error));
      // A chat request refused before its handler ran (body too large, an unknown Content-Encoding) is still an answer to count.
      const path = request.url.split('?')[0];
      if (path === '/v1/chat/completions') deps.gateway.reportRefused(herd, false);
      else if (path === EMBEDDINGS_PATH) deps.embeddings?.reportRefused(herd);
      if (herd.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(error)}`);
      sendError(reply, herd);
    });

    registerExchangeRoute(scope, exchanges, '/v1/chat/completions', allow);
    registerExchangeRoute(scope, exchanges, EMBEDDINGS_PATH, allow);

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

function authenticate(authenticator: Authenticator, req: FastifyRequest): KeyInfo {
  const result = authenticator.authenticate(req.headers.authorization, clientAddressOf(req.raw));
  if (result instanceof HerdError) throw result;
  return result.key;
}

function sendError(reply: FastifyReply, error: HerdError): void {
  const answer = mapErrorToOpenAI(error);
  void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}

function fastifyErrorToHerd(error: Error & { code?: string; statusCode?: number }): HerdError {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HerdError('PAYLOAD_TOO_LARGE', 'request body is larger than the server accepts');
  if (typeof error.statusCode === 'number' && error.statusCode < 500) return new HerdError('INVALID_ARG', error.message);
  return toHerdError(error);
}
