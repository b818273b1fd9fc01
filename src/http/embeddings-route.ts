// POST /v1/embeddings on the Fastify app: authenticate, parse and validate the body, run the
// embeddings flow, answer OpenAI's list with the x-herd-* headers. Errors in OpenAI's shape.
import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import { type AbortLink, LightAbortController } from '../core/abort-link.ts';
import { HerdError, toHerdError } from '../core/errors.ts';
import { convertEmbeddingsResponse } from '../gateway/embeddings/convert-embeddings-response.ts';
import type { EmbeddingsGateway } from '../gateway/embeddings/embeddings-gateway.ts';
import { validateEmbeddingsRequest } from '../gateway/embeddings/validate-embeddings-request.ts';
import { NO_PROVIDER } from '../gateway/gateway-observer.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { UpstreamRouteError } from '../gateway/router/attempt-record.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';

export interface EmbeddingsRouteDeps {
  embeddings: EmbeddingsGateway;
  authenticator: Authenticator;
  log?: ((line: string) => void) | undefined;
}

export const EMBEDDINGS_PATH = '/v1/embeddings';

export function registerEmbeddingsRoute(scope: FastifyInstance, deps: EmbeddingsRouteDeps): void {
  scope.post(EMBEDDINGS_PATH, async (req, reply) => {
    const started = performance.now();
    let handedOver = false;
    try {
      const auth = deps.authenticator.authenticate(req.headers.authorization, req.socket.remoteAddress);
      if (auth instanceof HerdError) throw auth;
      const request = validateEmbeddingsRequest(parseJson(Buffer.isBuffer(req.body) ? req.body : undefined));
      const signal = abortOnClientClose(reply.raw);
      handedOver = true;
      const answer = await deps.embeddings.handle(request, { key: auth.key, headers: req.headers, signal, dialect: 'openai-embeddings' });
      const { meta } = answer;
      return reply
        .code(200)
        .headers({
          'content-type': 'application/json',
          'x-herd-model': meta.model,
          'x-herd-provider': meta.provider,
          'x-herd-attempts': String(meta.attempts.length),
          'x-herd-overhead-ms': Math.max(0, performance.now() - started - meta.upstreamMs - meta.waitedMs).toFixed(3),
        })
        .send(JSON.stringify(convertEmbeddingsResponse(answer, request.encodingFormat)));
    } catch (err) {
      const error = toHerdError(err);
      if (!handedOver) deps.embeddings.reportRefused(error);
      if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      const answer = mapErrorToOpenAI(error);
      const attempts = error instanceof UpstreamRouteError ? error.attempts : [];
      const last = attempts.at(-1);
      return reply
        .code(answer.status)
        .headers({
          ...answer.headers,
          'content-type': 'application/json',
          'x-herd-provider': last?.provider ?? NO_PROVIDER,
          'x-herd-attempts': String(attempts.length),
          ...(last ? { 'x-herd-model': last.model } : {}),
        })
        .send(JSON.stringify(answer.body));
    }
  });
}

function parseJson(body: Buffer | undefined): unknown {
  if (body === undefined || body.length === 0) {
    throw new HerdError('INVALID_ARG', 'We could not parse the JSON body of your request: the body is empty. The OpenAI API expects a JSON payload.');
  }
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HerdError('INVALID_ARG', `We could not parse the JSON body of your request (${(err as Error).message}). The OpenAI API expects a JSON payload.`);
  }
}

/** A client that goes away aborts the upstream call and any retries. */
function abortOnClientClose(res: ServerResponse): AbortLink {
  const controller = new LightAbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new HerdError('UNAVAILABLE', 'client closed the connection'));
  });
  return controller.signal;
}
