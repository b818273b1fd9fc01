// OpenAI chat completions (POST /v1/chat/completions) as an ingress codec: the canonical shape is this
// dialect's own, so the body validates into it and answers serialise as they are (an OpenAI-compatible
// upstream's own bytes when attached); streams are `data:` lines ended by Herd's `[DONE]`.
import type { ChatChunk } from '../../protocol/chat-types.ts';
import type { IngressCodec, IngressStreamEncoder, SseEvent, StreamFailure } from '../../protocol/ingress-codec.ts';
import { encodeOpenAIChatChunk } from '../../wire/openai-chat/encode-openai-chat.ts';
import { validateChatRequest } from './validate-chat-request.ts';

const DONE = 'data: [DONE]\n\n';
const failEvent = (error: StreamFailure) => `data: ${JSON.stringify({ error })}\n\n`;

/** Stateless: one instance serves every stream. */
const CHAT_STREAM_ENCODER: IngressStreamEncoder = {
  start: (): SseEvent[] => [],
  chunk: (chunk: ChatChunk): SseEvent[] => [{ data: encodeOpenAIChatChunk(chunk) }],
  end: (): SseEvent[] => [{ data: '[DONE]' }],
  // After the first byte there is no switching upstream: an error object and no [DONE].
  fail: (error: StreamFailure): SseEvent[] => [{ data: { error } }],
};

export const chatCodec: IngressCodec<undefined> = {
  dialect: 'openai-chat',
  passThrough: true,
  decode: (body) => ({ request: validateChatRequest(body), decoded: undefined }),
  encodeResponse: (response) => response,
  createStreamEncoder: () => CHAT_STREAM_ENCODER,
  // The upstream's [DONE] is not forwarded: Herd's own ends the stream once the ledger has the rows.
  raw: { end: () => DONE, fail: failEvent },
};
