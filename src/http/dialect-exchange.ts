// One POST in an OpenAI-family dialect other than chat (/v1/responses, /v1/completions) written onto
// node:http's response: authenticate, parse, decode with the dialect's codec, run the gateway, then one
// JSON body or the codec's SSE events. Never throws: every failure is an answer in OpenAI's error shape.
import { canonicalChunk } from '../gateway/raw-sse.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { ChatStream } from '../gateway/chat-service.ts';
import type { IngressCodec, IngressStreamEncoder, SseEvent } from '../gateway/dialects/ingress-codec.ts';
import { abortOnClientClose, type ChatExchangeDeps, herdErrorHeaders, herdHeaders, openSseAnswer, parseJson, writeJson } from './chat-completion-exchange.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';

export type DialectExchangeDeps = ChatExchangeDeps;

/** Answers `req` on `res` in `codec`'s dialect; `body` is the whole request body, already decoded. */
export async function runDialectExchange<D>(
  deps: DialectExchangeDeps,
  codec: IngressCodec<D>,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  started: number,
): Promise<void> {
  // Until the gateway has the request, a failure is this exchange's to count (the gateway counts the rest).
  let handedOver = false;
  let stream = false;
  try {
    const auth = deps.authenticator.authenticate(req.headers.authorization, req.socket.remoteAddress);
    if (auth instanceof HerdError) throw auth;
    const { request, decoded } = codec.decode(parseJson(body));
    stream = request.stream === true;
    const signal = abortOnClientClose(res);
    handedOver = true;
    const answer = await deps.gateway.handle(request, { key: auth.key, headers: req.headers, signal, dialect: codec.dialect });
    if (answer.kind === 'stream') {
      const encoder = codec.createStreamEncoder(decoded, { model: answer.stream.meta.model });
      await writeStream(deps, answer.stream, encoder, answer.cache, res, started);
      return;
    }
    const headers = herdHeaders(answer.meta, started);
    headers['x-herd-cache'] = answer.cache;
    await writeJson(deps, req, res, 200, headers, JSON.stringify(codec.encodeResponse(answer.response, answer.meta.usage, decoded)));
  } catch (err) {
    const error = toHerdError(err);
    if (!handedOver) deps.gateway.reportRefused(error, stream);
    if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const answer = mapErrorToOpenAI(error);
    await writeJson(deps, req, res, answer.status, { ...answer.headers, ...herdErrorHeaders(error, started) }, JSON.stringify(answer.body)).catch(() => res.destroy());
  }
}

const formatEvent = (e: SseEvent) => `${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`;

/**
 * SSE from the first chunk on, the codec choosing the events; no upstream switch after this. Events that
 * leave together are corked into one write, as on the chat route.
 */
async function writeStream(deps: DialectExchangeDeps, stream: ChatStream, encoder: IngressStreamEncoder, cache: string, res: ServerResponse, started: number): Promise<void> {
  const sse = openSseAnswer(deps, stream.meta, cache, res, started);
  const send = (events: SseEvent[]) => {
    for (const e of events) sse.send(formatEvent(e));
  };
  try {
    send(encoder.start());
    for await (const chunk of stream.chunks) {
      if (res.destroyed) break;
      send(encoder.chunk(canonicalChunk(chunk)));
    }
    if (!res.destroyed) {
      const result = await stream.result;
      if (result.outcome === 'failed') send(encoder.fail(mapErrorToOpenAI(result.error ?? new HerdError('UPSTREAM_ERROR', 'the upstream stream failed')).body.error));
      else send(encoder.end(result.usage));
    }
  } catch (err) {
    // After the first byte there is no switching upstream: the client gets the dialect's error event.
    send(encoder.fail(mapErrorToOpenAI(toHerdError(err)).body.error));
  } finally {
    sse.end();
  }
}
