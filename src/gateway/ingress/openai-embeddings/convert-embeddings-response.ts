// The answer of POST /v1/embeddings in OpenAI's shape: {object: 'list', data: [{object: 'embedding',
// index, embedding}], model, usage: {prompt_tokens, total_tokens}}, vectors as floats or base64.
import type { Usage } from '../../protocol/chat-types.ts';
import type { EncodingFormat } from '../../protocol/embeddings-request.ts';
import { encodeEmbedding } from '../../wire/openai-embeddings/embedding-codec.ts';

export interface OpenAIEmbeddingsResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** What the encoding needs of the flow's answer: the vectors in input order, the answering model, the usage. */
export interface EmbeddingsOutcome {
  vectors: readonly Float32Array[];
  meta: { model: string; usage: Usage };
}

export function convertEmbeddingsResponse(answer: EmbeddingsOutcome, format: EncodingFormat): OpenAIEmbeddingsResponse {
  const tokens = answer.meta.usage.promptTokens;
  return {
    object: 'list',
    data: answer.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(vector, format) })),
    model: answer.meta.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
