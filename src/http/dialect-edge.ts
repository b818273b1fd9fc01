// What differs between the gateway's client dialects at the HTTP edge, beside the codec: where the key
// comes from and how an error is answered (the dialect's one error mapping), before and after the first
// streamed byte. OpenAI's for chat, Responses, completions and embeddings; Anthropic's for Messages.
import type { IncomingMessage } from 'node:http';
import type { HerdError } from '../core/errors.ts';
import type { MessagesFailure } from '../gateway/ingress/anthropic-messages/messages-codec.ts';
import type { StreamFailure } from '../gateway/protocol/ingress-codec.ts';
import { mapErrorToAnthropic } from './map-anthropic-error.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';

export interface ErrorAnswer<F> {
  status: number;
  headers: Record<string, string>;
  body: object;
  /** What the codec's stream encoder takes for a failure after the first byte. */
  failure: F;
}

export interface DialectEdge<F> {
  /** The Authorization value the request authenticates with. */
  authorization(headers: IncomingMessage['headers']): string | undefined;
  mapError(error: HerdError): ErrorAnswer<F>;
  /** Headers that carry the request id, as the dialect's own API names it (OpenAI x-request-id, Anthropic request-id). */
  requestIdHeaders: readonly string[];
}

export const OPENAI_EDGE: DialectEdge<StreamFailure> = {
  authorization: (headers) => headers.authorization,
  requestIdHeaders: ['x-request-id'],
  mapError(error) {
    const answer = mapErrorToOpenAI(error);
    return { ...answer, failure: answer.body.error };
  },
};

/** Anthropic clients send the key as x-api-key; Bearer is accepted too. */
export function resolveAnthropicAuthorization(headers: IncomingMessage['headers']): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return `Bearer ${apiKey}`;
  return headers.authorization;
}

export const ANTHROPIC_EDGE: DialectEdge<MessagesFailure> = {
  authorization: resolveAnthropicAuthorization,
  // Anthropic's own header, and OpenAI's for tools that read one name across every route.
  requestIdHeaders: ['request-id', 'x-request-id'],
  mapError(error) {
    const answer = mapErrorToAnthropic(error);
    return { ...answer, failure: answer.body };
  },
};
