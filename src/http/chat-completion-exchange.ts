// One POST /v1/chat/completions written straight onto node:http's response, shared by the
// framework-free fast path and the Fastify route (gateway-exchanges.ts): authenticate, parse, validate, run the gateway,
// then one JSON body or an SSE stream. Never throws: every failure is an answer in OpenAI's shape.
import { type AbortLink, LightAbortController } from '../core/abort-link.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { ChatGateway, GatewayAnswer } from '../gateway/flow/chat-gateway.ts';
import type { ChatStream } from '../gateway/flow/chat-service.ts';
import { encodeOpenAIChatChunk, encodeOpenAIChatCompletion } from '../gateway/wire/openai-chat/encode-openai-chat.ts';
import { NO_PROVIDER } from '../gateway/flow/gateway-observer.ts';
import { RawSse } from '../gateway/protocol/raw-sse.ts';
import type { Authenticator } from '../gateway/keys/authenticator.ts';
import { UpstreamRouteError } from '../gateway/router/attempt-record.ts';
import type { JsonObject } from '../gateway/protocol/check-json-value.ts';
import { validateChatRequest } from '../gateway/ingress/openai-chat/validate-chat-request.ts';
import { COMPRESS_MIN_BYTES, compressBody, parseAcceptEncoding } from './accept-encoding.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';
import type { ChatMeta } from '../gateway/router/chat-meta.ts';

export interface ChatExchangeDeps {
  gateway: ChatGateway;
  authenticator: Authenticator;
  log?: ((line: string) => void) | undefined;
  /** True once shutdown began: answers then close their connection. */
  isClosing: () => boolean;
}

type OutHeaders = Record<string, string | number>;

/** Answers `req` on `res`; `body` is the whole request body, already decoded. `started` is performance.now() at arrival. */
export async function runChatCompletionExchange(deps: ChatExchangeDeps, req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, started: number): Promise<void> {
  // Until the gateway has the request, a failure is this exchange's to count (the gateway counts the rest).
  let handedOver = false;
  try {
    const auth = deps.authenticator.authenticate(req.headers.authorization, clientAddressOf(req));
    if (auth instanceof HerdError) throw auth;
    const parsed = parseJson(body);
    const request = validateChatRequest(parsed);
    const signal = abortOnClientClose(res);
    handedOver = true;
    // Model access (aliases and tiers resolved first) is checked inside the gateway's routing. The body goes
    // along as sent (the validator made sure it is an object): an OpenAI-compatible upstream gets it, model replaced.
    const answer: GatewayAnswer = await deps.gateway.handle(request, { key: auth.key, headers: req.headers, signal, passThrough: true, body: parsed as JsonObject });
    if (answer.kind === 'stream') {
      await writeStream(deps, answer.stream, answer.cache, res, started);
      return;
    }
    const headers = herdHeaders(answer.meta, started);
    headers['x-herd-cache'] = answer.cache;
    await writeJson(deps, req, res, 200, headers, encodeOpenAIChatCompletion(answer.response));
  } catch (err) {
    const error = toHerdError(err);
    if (!handedOver) deps.gateway.reportRefused(error, false);
    if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(err)}`);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const answer = mapErrorToOpenAI(error);
    await writeJson(deps, req, res, answer.status, { ...answer.headers, ...herdErrorHeaders(error, started) }, JSON.stringify(answer.body)).catch(() => res.destroy());
  }
}

/** The request body as JSON, or OpenAI's wording for a body that is not JSON. */
export function parseJson(body: Buffer | undefined): unknown {
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
export function abortOnClientClose(res: ServerResponse): AbortLink {
  const controller = new LightAbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new HerdError('UNAVAILABLE', 'client closed the connection'));
  });
  return controller.signal;
}

export function herdHeaders(meta: ChatMeta, started: number): OutHeaders {
  const elapsed = performance.now() - started;
  const headers: OutHeaders = {
    'x-herd-model': meta.model,
    'x-herd-provider': meta.provider,
    'x-herd-attempts': String(meta.attempts.length),
    'x-herd-overhead-ms': Math.max(0, elapsed - meta.upstreamMs - meta.waitedMs).toFixed(3),
    'x-herd-route': headerSafe(meta.routeRule),
  };
  if (meta.warnings.length > 0) headers['x-herd-dropped'] = describeDropped(meta.warnings);
  return headers;
}

/** x-herd-dropped: each setting the answering attempt left out, once, in the order met (names only; the why is in docs/gateway.md). */
function describeDropped(warnings: ChatMeta['warnings']): string {
  return [...new Set(warnings.map((w) => headerSafe(w.param)))].join(',');
}

/** A client's own member names can hold any character: what a header cannot carry (and the list's comma) is percent-encoded. */
function headerSafe(param: string): string {
  return param.replace(/[^\x21-\x2b\x2d-\x7e]/gu, (c) => encodeURIComponent(/[\ud800-\udfff]/u.test(c) ? '\ufffd' : c));
}

/**
 * The same x-herd-* headers on an error: the attempts made (0 when refused before any upstream), the model
 * and provider of the last one (provider `none` when there was none), and Herd's own time around them.
 */
export function herdErrorHeaders(error: HerdError, started: number): OutHeaders {
  const attempts = error instanceof UpstreamRouteError ? error.attempts : [];
  const last = attempts.at(-1);
  let upstreamMs = 0;
  for (const a of attempts) upstreamMs += a.durationMs + (a.waitMs ?? 0);
  const headers: OutHeaders = {
    'x-herd-provider': last?.provider ?? NO_PROVIDER,
    'x-herd-attempts': String(attempts.length),
    'x-herd-overhead-ms': Math.max(0, performance.now() - started - upstreamMs).toFixed(3),
  };
  if (last) headers['x-herd-model'] = last.model;
  return headers;
}

/** One JSON body in one write, compressed when the client asks and it is worth it. */
export async function writeJson(
  deps: Pick<ChatExchangeDeps, 'isClosing'>,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: OutHeaders,
  text: string,
): Promise<void> {
  headers['content-type'] = 'application/json';
  if (deps.isClosing()) headers['connection'] = 'close';
  let payload: Buffer | string = text;
  const accept = req.headers['accept-encoding'];
  if (accept !== undefined && text.length >= COMPRESS_MIN_BYTES) {
    const encoding = parseAcceptEncoding(accept);
    if (encoding !== undefined) {
      payload = await compressBody(text, encoding);
      headers['content-encoding'] = encoding;
    }
  }
  headers['content-length'] = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  if (res.destroyed) return;
  res.writeHead(status, headers);
  res.end(payload);
}

/**
 * The SSE answer of every gateway dialect, from the stream's first chunk on: the x-herd-* headers, then a
 * writer under which events that arrive together leave together — texts sent in the same I/O callback
 * are joined and written once, after its promise jobs have run (a nextTick queued from them runs after
 * them): one chunked-encoding frame and one write instead of one per event.
 */
export function openSseAnswer(deps: ChatExchangeDeps, meta: ChatMeta, cache: string, res: ServerResponse, started: number): { send(text: string): void; end(): void } {
  const headers = herdHeaders(meta, started);
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-herd-cache'] = cache;
  if (deps.isClosing()) headers['connection'] = 'close';
  res.writeHead(200, headers);
  let pending = '';
  const flush = () => {
    const text = pending;
    pending = '';
    if (text !== '' && !res.destroyed) res.write(text);
  };
  return {
    send(text) {
      if (text === '' || res.destroyed) return;
      if (pending === '') process.nextTick(flush);
      pending += text;
    },
    end() {
      const text = pending;
      pending = '';
      if (res.destroyed) return;
      if (text === '') res.end();
      else res.end(text);
    },
  };
}

/** OpenAI's SSE: `data:` lines and `[DONE]`; no upstream switch after the headers. */
async function writeStream(deps: ChatExchangeDeps, stream: ChatStream, cache: string, res: ServerResponse, started: number): Promise<void> {
  // A client that leaves aborts the request's signal, and the relay cancels the stream on it.
  const sse = openSseAnswer(deps, stream.meta, cache, res, started);
  try {
    for await (const piece of stream.chunks) {
      if (res.destroyed) break;
      sse.send(piece instanceof RawSse ? piece.text : `data: ${encodeOpenAIChatChunk(piece)}\n\n`);
    }
    if (!res.destroyed) sse.send('data: [DONE]\n\n');
  } catch (err) {
    // After the first byte there is no switching upstream: the client gets an error event, no [DONE].
    sse.send(`data: ${JSON.stringify(mapErrorToOpenAI(toHerdError(err)).body)}\n\n`);
  } finally {
    sse.end();
  }
}
