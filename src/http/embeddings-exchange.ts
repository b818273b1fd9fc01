// One POST /v1/embeddings written straight onto node:http's response, shared by the fast path and the
// Fastify route: authenticate, parse and validate the body, run the embeddings flow, answer OpenAI's list
// with the x-herd-* headers. Never throws: every failure is an answer in OpenAI's error shape.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HerdError, toHerdError } from '../core/errors.ts';
import { convertEmbeddingsResponse } from '../gateway/ingress/openai-embeddings/convert-embeddings-response.ts';
import type { EmbeddingsGateway } from '../gateway/flow/embeddings-gateway.ts';
import { validateEmbeddingsRequest } from '../gateway/ingress/openai-embeddings/validate-embeddings-request.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { abortOnClientClose, herdErrorHeaders, herdHeaders, parseJson, writeJson } from './chat-completion-exchange.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

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
    const auth = deps.authenticator.authenticate(req.headers.authorization, clientAddressOf(req));
    if (auth instanceof HerdError) throw auth;
    const request = validateEmbeddingsRequest(parseJson(body));
    const signal = abortOnClientClose(res);
    handedOver = true;
    const answer = await deps.embeddings.handle(request, { key: auth.key, headers: req.headers, signal, dialect: 'openai-embeddings' });
    await writeJson(deps, req, res, 200, herdHeaders(answer.meta, started), JSON.stringify(convertEmbeddingsResponse(answer, request.encodingFormat)));
  } catch (err) {
    const error = toHerdError(err);
    if (!handedOver) deps.embeddings.reportRefused(error);
    if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(err)}`);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const answer = mapErrorToOpenAI(error);
    await writeJson(deps, req, res, answer.status, { ...answer.headers, ...herdErrorHeaders(error, started) }, JSON.stringify(answer.body)).catch(() => res.destroy());
  }
}
