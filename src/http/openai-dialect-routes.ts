// POST /v1/responses and POST /v1/completions: OpenAI's Responses and legacy completions dialects,
// bridged onto the chat gateway through their codecs (gateway/ingress/) by dialect-exchange.ts, the same
// exchange the fast path calls (gateway-exchanges.ts). Thin; errors in OpenAI's shape.
import type { FastifyInstance } from 'fastify';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { ChatGateway } from '../gateway/flow/chat-gateway.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { type GatewayExchanges, registerExchangeRoute } from './gateway-exchanges.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

export interface OpenAIDialectDeps {
  gateway: ChatGateway;
  authenticator: Authenticator;
  log?: (line: string) => void;
}

export function registerOpenAIDialectRoutes(app: FastifyInstance, deps: OpenAIDialectDeps, exchanges: GatewayExchanges, allow: (url: string, methods: string[]) => void): void {
  void app.register(async (scope) => {
    // A request refused before its handler ran (body too large, an unknown Content-Encoding) is still an answer to count.
    scope.setErrorHandler((error: Error & { code?: string; statusCode?: number }, _request, reply) => {
      const herd =
        error instanceof HerdError
          ? error
          : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? new HerdError('PAYLOAD_TOO_LARGE', 'request body is larger than the server accepts')
            : typeof error.statusCode === 'number' && error.statusCode < 500
              ? new HerdError('INVALID_ARG', error.message)
              : toHerdError(error);
      deps.gateway.reportRefused(herd, false);
      if (herd.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(error)}`);
      const answer = mapErrorToOpenAI(herd);
      void reply.code(answer.status).headers(answer.headers).header('content-type', 'application/json').send(JSON.stringify(answer.body));
    });
    registerExchangeRoute(scope, exchanges, '/v1/responses', allow);
    registerExchangeRoute(scope, exchanges, '/v1/completions', allow);
  });
}
