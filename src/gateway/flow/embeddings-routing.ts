// How the flow sees an embeddings request before its attempts: the request the router reads (its model,
// no messages, no completion tokens: TPM, the budget and timeouts count the input only) and its
// `dimensions` checked against the resolved model.
import { HerdError } from '../../core/errors.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { EmbeddingsRequest } from '../protocol/embeddings-request.ts';
import type { CatalogModel } from '../router/gateway-catalog.ts';

export function embeddingsRoutingRequest(request: EmbeddingsRequest): ChatRequest {
  return { model: request.model, messages: [], max_completion_tokens: 0 };
}

export function checkEmbeddingDimensions(model: CatalogModel, request: EmbeddingsRequest): void {
  if (request.dimensions === undefined) return;
  if (model.dimensions === undefined) {
    throw new HerdError('UNSUPPORTED', `The model \`${model.name}\` does not support 'dimensions' (its vectors have a fixed length).`, { param: 'dimensions' });
  }
  if (request.dimensions > model.dimensions) {
    throw new HerdError('INVALID_ARG', `'dimensions' is ${request.dimensions}; the model \`${model.name}\` returns at most ${model.dimensions}.`, { param: 'dimensions' });
  }
}
