// One POST /v1/messages (or /v1/messages/count_tokens) on node:http's response: authenticate (x-api-key
// or Bearer), decode the Anthropic body, run the same gateway flow as OpenAI chat, then one Message or
// Anthropic's named SSE events. An Anthropic upstream's own bytes (JSON or events) go on as sent; other
// upstreams' answers are encoded from the canonical shape. Never throws: every failure is an answer in Anthropic's shape.
import { RawSse } from '../gateway/protocol/raw-sse.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { GatewayAnswer } from '../gateway/flow/chat-gateway.ts';
import type { ChatStream } from '../gateway/flow/chat-service.ts';
import type { AnthropicClientHeaders } from '../gateway/protocol/chat-types.ts';
import { decodeMessagesRequest } from '../gateway/ingress/anthropic-messages/decode-messages-request.ts';
import { encodeMessagesResponse } from '../gateway/wire/anthropic-messages/encode-messages-response.ts';
import { formatMessagesEvent, MessagesStreamEncoder } from '../gateway/wire/anthropic-messages/encode-messages-stream.ts';
import { isJsonObject } from '../gateway/protocol/check-json-value.ts';
import { readUpstreamBytes } from '../gateway/protocol/upstream-bytes.ts';
import { estimatePromptTokens } from '../gateway/protocol/usage-estimate.ts';
import { abortOnClientClose, type ChatExchangeDeps, herdErrorHeaders, herdHeaders, openSseAnswer, writeJson } from './chat-completion-exchange.ts';
import { mapErrorToAnthropic } from './map-anthropic-error.ts';
import { clientAddressOf } from './resolve-client-address.ts';
import { formatErrorForLog } from '../core/escape-log-text.ts';

export type MessagesEndpoint = 'messages' | 'count_tokens';

/** The Authorization value a request authenticates with: Anthropic clients send the key as x-api-key. */
export function resolveAuthorization(headers: IncomingMessage['headers']): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return `Bearer ${apiKey}`;
  return headers.authorization;
}

/** Answers `req` on `res`; `body` is the whole request body, already decoded. `started` is performance.now() at arrival. */
export async function runMessagesExchange(
  deps: ChatExchangeDeps,
  endpoint: MessagesEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  started: number,
): Promise<void> {
  // Until the gateway has the request, a failure is this exchange's to count (the gateway counts the rest).
  let handedOver = false;
  try {
    const auth = deps.authenticator.authenticate(resolveAuthorization(req.headers), clientAddressOf(req));
    if (auth instanceof HerdError) throw auth;
    const parsed = parseJson(body);
    const headers = clientHeaders(req.headers);
    if (endpoint === 'count_tokens') {
      const request = decodeMessagesRequest(parsed, { countOnly: true, headers });
      await writeJson(deps, req, res, 200, {}, JSON.stringify({ input_tokens: await estimatePromptTokens(request) }));
      return;
    }
    const request = decodeMessagesRequest(parsed, { headers });
    const signal = abortOnClientClose(res);
    handedOver = true;
    // The decoder checked the body is an object; an Anthropic upstream gets it as sent (model replaced).
    const sent = isJsonObject(parsed) ? parsed : undefined;
    const answer: GatewayAnswer = await deps.gateway.handle(request, { key: auth.key, headers: req.headers, signal, dialect: 'anthropic-messages', passThrough: true, body: sent });
    if (answer.kind === 'stream') {
      await writeStream(deps, answer.stream, answer.cache, res, started);
      return;
    }
    const out = herdHeaders(answer.meta, started);
    out['x-herd-cache'] = answer.cache;
    const text =
      readUpstreamBytes(answer.response, 'anthropic-messages') ??
      JSON.stringify(encodeMessagesResponse(answer.response, { usage: answer.meta.usage, rawFinishReason: answer.meta.rawFinishReason }));
    await writeJson(deps, req, res, 200, out, text);
  } catch (err) {
    const error = toHerdError(err);
    if (!handedOver && endpoint === 'messages') deps.gateway.reportRefused(error, false, 'anthropic-messages');
    if (error.code === 'INTERNAL') deps.log?.(`gateway error: ${formatErrorForLog(err)}`);
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    const answer = mapErrorToAnthropic(error);
    await writeJson(deps, req, res, answer.status, { ...answer.headers, ...herdErrorHeaders(error, started) }, JSON.stringify(answer.body)).catch(() => res.destroy());
  }
}

function clientHeaders(headers: IncomingMessage['headers']): AnthropicClientHeaders {
  const out: AnthropicClientHeaders = {};
  const version = headers['anthropic-version'];
  const beta = headers['anthropic-beta'];
  if (typeof version === 'string') out.version = version;
  if (typeof beta === 'string') out.beta = beta;
  return out;
}

function parseJson(body: Buffer | undefined): unknown {
  if (body === undefined || body.length === 0) throw new HerdError('INVALID_ARG', 'The request body is empty: the Messages API expects a JSON object.');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HerdError('INVALID_ARG', `The request body is not valid JSON (${(err as Error).message}).`);
  }
}

/**
 * Anthropic's events from the first chunk on; no upstream switch after the headers. An Anthropic
 * upstream's events (RawSse) are written as they are (the flow hands its message_stop on only once the
 * ledger's rows committed); another upstream's chunks are encoded. Events that arrive together leave
 * together (corked until the current I/O callback's promise jobs have run).
 */
async function writeStream(deps: ChatExchangeDeps, stream: ChatStream, cache: string, res: ServerResponse, started: number): Promise<void> {
  const { send, end } = openSseAnswer(deps, stream.meta, cache, res, started);
  const encoder = new MessagesStreamEncoder({ model: stream.meta.model, inputTokensHint: stream.meta.estimatedPromptTokens });
  // Pass-through: the upstream's own events end the stream themselves; Herd adds no closing events.
  let raw = false;
  try {
    for await (const piece of stream.chunks) {
      if (res.destroyed) break;
      if (!(piece instanceof RawSse)) send(encoder.push(piece));
      else {
        raw = true;
        send(piece.text);
      }
    }
    if (!res.destroyed) {
      const result = await stream.result;
      if (result.outcome === 'failed' && result.error !== undefined) throw result.error;
      if (!raw) send(encoder.finish(result));
    }
  } catch (err) {
    // After the first byte there is no switching upstream: the client gets Anthropic's error event, no message_stop.
    send(formatMessagesEvent('error', mapErrorToAnthropic(toHerdError(err)).body));
  } finally {
    end();
  }
}
