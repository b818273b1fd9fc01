// One POST in an OpenAI-family dialect other than chat (/v1/responses, /v1/completions) written onto
// node:http's response: authenticate, parse, decode with the dialect's codec, run the gateway, then one
// JSON body or SSE events: an upstream's own bytes when it spoke the dialect (pass-through), else the
// codec's encoding of the canonical answer. Never throws: every failure is an answer in OpenAI's error shape.
import { canonicalChunk, RawSse, type StreamPiece } from '../gateway/protocol/raw-sse.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { ChatStream } from '../gateway/flow/chat-service.ts';
import { isJsonObject } from '../gateway/protocol/check-json-value.ts';
import type { IngressCodec, IngressStreamEncoder, SseEvent, StreamFailure } from '../gateway/protocol/ingress-codec.ts';
import { readUpstreamBytes } from '../gateway/protocol/upstream-bytes.ts';
import { abortOnClientClose, type ChatExchangeDeps, herdErrorHeaders, herdHeaders, openSseAnswer, parseJson, writeJson } from './chat-completion-exchange.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

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
    const auth = deps.authenticator.authenticate(req.headers.authorization, clientAddressOf(req));
    if (auth instanceof HerdError) throw auth;
    const parsed = parseJson(body);
    const { request, decoded } = codec.decode(parsed);
    stream = request.stream === true;
    const signal = abortOnClientClose(res);
    handedOver = true;
    // The decoded body goes along as sent: an upstream offering this dialect's endpoint gets it unchanged but for the model.
    const passThrough = codec.raw !== undefined && isJsonObject(parsed);
    const answer = await deps.gateway.handle(request, {
      key: auth.key,
      headers: req.headers,
      signal,
      dialect: codec.dialect,
      passThrough,
      body: passThrough ? parsed : undefined,
    });
    if (answer.kind === 'stream') {
      const encoder = codec.createStreamEncoder(decoded, { model: answer.stream.meta.model });
      await writeStream(deps, answer.stream, encoder, codec.raw, answer.cache, res, started);
      return;
    }
    const headers = herdHeaders(answer.meta, started);
    headers['x-herd-cache'] = answer.cache;
    const text = readUpstreamBytes(answer.response, codec.dialect) ?? JSON.stringify(codec.encodeResponse(answer.response, answer.meta.usage, decoded));
    await writeJson(deps, req, res, 200, headers, text);
  } catch (err) {
    const error = toHerdError(err);
    if (!handedOver) deps.gateway.reportRefused(error, stream);
    if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(err)}`);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const answer = mapErrorToOpenAI(error);
    await writeJson(deps, req, res, answer.status, { ...answer.headers, ...herdErrorHeaders(error, started) }, JSON.stringify(answer.body)).catch(() => res.destroy());
  }
}

const formatEvent = (e: SseEvent) => `${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`;

type RawEnd = NonNullable<IngressCodec<unknown>['raw']>;

/**
 * SSE from the first chunk on; no upstream switch after this. The first piece says whose events these
 * are: an upstream's own (RawSse, written as they are) or canonical chunks the codec encodes. Events
 * that leave together are corked into one write, as on the chat route.
 */
async function writeStream(
  deps: DialectExchangeDeps,
  stream: ChatStream,
  encoder: IngressStreamEncoder,
  raw: RawEnd | undefined,
  cache: string,
  res: ServerResponse,
  started: number,
): Promise<void> {
  const sse = openSseAnswer(deps, stream.meta, cache, res, started);
  const pieces = stream.chunks[Symbol.asyncIterator]();
  // Set once the first piece is an upstream's own event: from then on Herd writes only the end.
  let lastRaw: string | undefined;
  const fail = (error: StreamFailure) => {
    if (lastRaw !== undefined && raw !== undefined) sse.send(raw.fail(error, lastRaw));
    else for (const e of encoder.fail(error)) sse.send(formatEvent(e));
  };
  const write = (piece: StreamPiece) => {
    if (lastRaw !== undefined) {
      if (!(piece instanceof RawSse)) throw new HerdError('INTERNAL', "a canonical chunk among an upstream's own events");
      lastRaw = piece.text;
      sse.send(piece.text);
    } else for (const e of encoder.chunk(canonicalChunk(piece))) sse.send(formatEvent(e));
  };
  try {
    const first = await pieces.next();
    if (!first.done && first.value instanceof RawSse) lastRaw = first.value.text;
    else for (const e of encoder.start()) sse.send(formatEvent(e));
    if (!first.done && !res.destroyed) {
      write(first.value);
      for (;;) {
        if (res.destroyed) break;
        const next = await pieces.next();
        if (next.done) break;
        write(next.value);
      }
    }
    if (!res.destroyed) {
      const result = await stream.result;
      if (result.outcome === 'failed') fail(mapErrorToOpenAI(result.error ?? new HerdError('UPSTREAM_ERROR', 'the upstream stream failed')).body.error);
      else if (lastRaw !== undefined && raw !== undefined) sse.send(raw.end());
      else for (const e of encoder.end(result.usage)) sse.send(formatEvent(e));
    }
  } catch (err) {
    // After the first byte there is no switching upstream: the client gets the dialect's error event.
    fail(mapErrorToOpenAI(toHerdError(err)).body.error);
  } finally {
    // A client that left (or Herd's own error) stops the stream; after its end this does nothing.
    void pieces.return?.()?.catch(() => undefined);
    sse.end();
  }
}
