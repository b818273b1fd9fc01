// Anthropic Messages routes: POST /v1/messages (JSON or SSE) and POST /v1/messages/count_tokens, both
// through anthropic-messages-exchange.ts; GET /v1/models answers Anthropic's list shape to Anthropic clients.
// Thin: errors in Anthropic's shape, including Fastify's own (body too large, unknown Content-Encoding).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError, toHerdError } from '../core/errors.ts';
import { convertModelsToMessagesList } from '../gateway/ingress/anthropic-messages/convert-models-to-messages-list.ts';
import { resolveAuthorization } from './anthropic-messages-exchange.ts';
import { type GatewayExchanges, registerExchangeRoute } from './gateway-exchanges.ts';
import { mapErrorToAnthropic } from './map-anthropic-error.ts';
import type { OpenAIDeps } from './openai-deps.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

export function registerAnthropicRoutes(app: FastifyInstance, deps: OpenAIDeps, exchanges: GatewayExchanges, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
      const herd = toHerdError(error instanceof HerdError ? error : fastifyErrorToHerd(error));
      if (request.url.split('?')[0] === '/v1/messages') deps.gateway.reportRefused(herd, false, 'anthropic-messages');
      if (herd.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(error)}`);
      sendAnthropicError(reply, herd);
    });
    registerExchangeRoute(scope, exchanges, '/v1/messages', allow);
    registerExchangeRoute(scope, exchanges, '/v1/messages/count_tokens', allow);
  });
}

/** A request from an Anthropic client (its SDKs always send anthropic-version; Claude Code sends x-api-key). */
export function isAnthropicClient(headers: FastifyRequest['headers']): boolean {
  return headers['anthropic-version'] !== undefined || headers['x-api-key'] !== undefined;
}

/** GET /v1/models for an Anthropic client: the same models the key may use, in Anthropic's list shape. */
export async function sendAnthropicModelList(deps: OpenAIDeps, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const auth = deps.authenticator.authenticate(resolveAuthorization(req.headers), clientAddressOf(req.raw));
  if (auth instanceof HerdError) return sendAnthropicError(reply, auth);
  const models = await deps.gateway.listModels((model) => !deps.authenticator.authorizeModel(auth.key, model));
  return reply
    .code(200)
    .header('content-type', 'application/json')
    .send(JSON.stringify(convertModelsToMessagesList(models)));
}

function sendAnthropicError(reply: FastifyReply, error: HerdError): FastifyReply {
  const answer = mapErrorToAnthropic(error);
  return reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
}

function fastifyErrorToHerd(error: Error & { code?: string; statusCode?: number }): HerdError {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HerdError('PAYLOAD_TOO_LARGE', 'request body is larger than the server accepts');
  if (typeof error.statusCode === 'number' && error.statusCode < 500) return new HerdError('INVALID_ARG', error.message);
  return toHerdError(error);
}
