// Each batch endpoint's realtime decoder, by endpoint path: submission's validator and the worker decode a
// batch line's body exactly as the realtime route decodes a request body (batch/ may not import ingress/).
import type { DecodedLineBody } from '../gateway/batch/validate-batch-line.ts';
import { messagesCodec } from '../gateway/ingress/anthropic-messages/messages-codec.ts';
import { chatCodec } from '../gateway/ingress/openai-chat/chat-codec.ts';
import { completionsCodec } from '../gateway/ingress/openai-completions/completions-codec.ts';
import { validateEmbeddingsRequest } from '../gateway/ingress/openai-embeddings/validate-embeddings-request.ts';
import { responsesCodec } from '../gateway/ingress/openai-responses/responses-codec.ts';

export const BATCH_LINE_DECODERS: Readonly<Record<string, (body: unknown) => DecodedLineBody>> = {
  '/v1/chat/completions': (body) => ({ kind: 'chat', request: chatCodec.decode(body, {}).request }),
  '/v1/responses': (body) => ({ kind: 'chat', request: responsesCodec.decode(body, {}).request }),
  '/v1/completions': (body) => ({ kind: 'chat', request: completionsCodec.decode(body, {}).request }),
  '/v1/embeddings': (body) => ({ kind: 'embeddings', request: validateEmbeddingsRequest(body) }),
  '/v1/messages': (body) => ({ kind: 'chat', request: messagesCodec.decode(body, {}).request }),
};
