// One POST /v1/embeddings written straight onto node:http's response, shared by the fast path and the
// Fastify route: authenticate, parse and validate the body, run the embeddings flow, answer OpenAI's list
// with the x-herd-* headers. Never throws: every failure is an answer in OpenAI's error shape.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HerdError, toHerdError } from '../core/errors.ts';
import { convertEmbeddingsResponse } from '../gateway/embeddings/convert-embeddings-response.ts';
import type { EmbeddingsGateway } from '../gateway/embeddings/embeddings-gateway.ts';
import { validateEmbeddingsRequest } from '../gateway/embeddings/validate-embeddings-request.ts';
import { NO_PROVIDER } from '../gateway/gateway-observer.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { UpstreamRouteError } from '../gateway/router/attempt-record.ts';
import { abortOnClientClose, writeJson } from './chat-completion-exchange.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';

export interface EmbeddingsExchangeDeps {
  embeddings: EmbeddingsGateway;
  authenticator: Authenticator;
  log?: ((line: string) => void) | undefined;
  /** True once shutdown began: answers then close their connection. */
  isClosing: () => boolean;
}

export const EMBEDDINGS_PATH = '/v1/embeddings';

/** Answers `req` on `res`; `body` is the whole request body, already decoded. `started` is performance.now() at arrival. */
export async function runEmbeddingsExchange(deps: EmbeddingsExchangeDeps, req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, started: number): Promise<void> {
  let handedOver = false;
  try {
    const auth = deps.authenticator.authenticate(req.headers.authorization, req.socket.remoteAddress);
    if (auth instanceof HerdError) throw auth;
    const request = validateEmbeddingsRequest(parseJson(body));
    const signal = abortOnClientClose(res);
    handedOver = true;
    const answer = await deps.embeddings.handle(request, { key: auth.key, headers: req.headers, signal, dialect: 'openai-embeddings' });
    const { meta } = answer;
    const headers = {
      'x-herd-model': meta.model,
      'x-herd-provider': meta.provider,
      'x-herd-attempts': String(meta.attempts.length),
      'x-herd-overhead-ms': Math.max(0, performance.now() - started - meta.upstreamMs - meta.waitedMs).toFixed(3),
    };
    await writeJson(deps, req, res, 200, headers, JSON.stringify(convertEmbeddingsResponse(answer, request.encodingFormat)));
  } catch (err) {
    const error = toHerdError(err);
    if (!handedOver) deps.embeddings.reportRefused(error);
    if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const answer = mapErrorToOpenAI(error);
    const attempts = error instanceof UpstreamRouteError ? error.attempts : [];
    const last = attempts.at(-1);
    const headers = {
      ...answer.headers,
      'x-herd-provider': last?.provider ?? NO_PROVIDER,
      'x-herd-attempts': String(attempts.length),
      ...(last ? { 'x-herd-model': last.model } : {}),
    };
    await writeJson(deps, req, res, answer.status, headers, JSON.stringify(answer.body)).catch(() => res.destroy());
  }
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
