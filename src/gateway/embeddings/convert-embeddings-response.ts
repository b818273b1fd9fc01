// The answer of POST /v1/embeddings in OpenAI's shape: {object: 'list', data: [{object: 'embedding',
// index, embedding}], model, usage: {prompt_tokens, total_tokens}}, vectors as floats or base64.
import { encodeEmbedding } from './embedding-codec.ts';
import type { EmbeddingsAnswer } from './embeddings-gateway.ts';
import type { EncodingFormat } from './validate-embeddings-request.ts';

export interface OpenAIEmbeddingsResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export function convertEmbeddingsResponse(answer: EmbeddingsAnswer, format: EncodingFormat): OpenAIEmbeddingsResponse {
  const tokens = answer.meta.usage.promptTokens;
  return {
    object: 'list',
    data: answer.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(vector, format) })),
    model: answer.meta.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
