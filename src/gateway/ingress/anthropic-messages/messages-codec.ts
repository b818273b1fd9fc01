// Anthropic Messages (POST /v1/messages) as an ingress codec: the body decoded into the canonical request
// (the client's anthropic-version / anthropic-beta kept for Anthropic upstreams), answers encoded as a
// Message or Anthropic's named events; an Anthropic upstream's own events end the stream themselves.
import type { AnthropicClientHeaders } from '../../protocol/chat-types.ts';
import type { IngressCodec, IngressHeaders, IngressStreamEncoder } from '../../protocol/ingress-codec.ts';
import { encodeMessagesResponse } from '../../wire/anthropic-messages/encode-messages-response.ts';
import { formatMessagesEvent, MessagesStreamEncoder } from '../../wire/anthropic-messages/encode-messages-stream.ts';
import { decodeMessagesRequest } from './decode-messages-request.ts';

/** Anthropic's error body, as the transport maps a failure (map-anthropic-error.ts). */
export interface MessagesFailure {
  type: 'error';
  error: { type: string; message: string };
}

/** The anthropic-version / anthropic-beta a client sent. */
export function readAnthropicHeaders(headers: IngressHeaders): AnthropicClientHeaders {
  const out: AnthropicClientHeaders = {};
  const version = headers['anthropic-version'];
  const beta = headers['anthropic-beta'];
  if (typeof version === 'string') out.version = version;
  if (typeof beta === 'string') out.beta = beta;
  return out;
}

const failEvent = (error: MessagesFailure) => formatMessagesEvent('error', error);

function createMessagesStreamEncoder(model: string, inputTokensHint: number | undefined): IngressStreamEncoder<MessagesFailure> {
  const encoder = new MessagesStreamEncoder(inputTokensHint === undefined ? { model } : { model, inputTokensHint });
  return {
    // message_start goes out with the first chunk (it carries the upstream's message id).
    start: () => [],
    chunk: (chunk) => [{ data: null, text: encoder.push(chunk) }],
    end: (usage, info) => [{ data: null, text: encoder.finish(info ?? { usage, finishReason: null, rawFinishReason: null }) }],
    // After the first byte there is no switching upstream: Anthropic's error event, no message_stop.
    fail: (error) => [{ data: null, text: failEvent(error) }],
  };
}

export const messagesCodec: IngressCodec<undefined, MessagesFailure> = {
  dialect: 'anthropic-messages',
  passThrough: true,
  decode: (body, headers) => ({ request: decodeMessagesRequest(body, { headers: readAnthropicHeaders(headers) }), decoded: undefined }),
  encodeResponse: (response, usage, _decoded, context) => encodeMessagesResponse(response, { usage, rawFinishReason: context.rawFinishReason }),
  createStreamEncoder: (_decoded, context) => createMessagesStreamEncoder(context.model, context.estimatedPromptTokens),
  // The flow hands an Anthropic upstream's message_stop on only once the ledger's rows committed: nothing to add.
  raw: { end: () => '', fail: (error) => failEvent(error) },
};
