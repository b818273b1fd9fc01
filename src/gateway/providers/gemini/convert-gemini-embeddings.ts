// Gemini's embeddings wire format: POST /{version}/models/{model}:batchEmbedContents with one
// EmbedContentRequest per text ({model: "models/…", content: {parts: [{text}]}, outputDimensionality}),
// answered with {embeddings: [{values: [...]}]} in request order. The API reports no token usage.
import { isJsonObject } from '../../protocol/check-json-value.ts';
import type { EmbedRequest } from '../provider.ts';

export function convertGeminiEmbeddingsRequest(req: EmbedRequest): { requests: Record<string, unknown>[] } {
  const model = req.upstreamModel.startsWith('models/') ? req.upstreamModel : `models/${req.upstreamModel}`;
  return {
    requests: req.inputs.map((text) => {
      const one: Record<string, unknown> = { model, content: { parts: [{ text }] } };
      if (req.dimensions !== undefined) one.outputDimensionality = req.dimensions;
      return one;
    }),
  };
}

/** The vectors in input order, or what is wrong with the body. */
export function convertGeminiEmbeddingsResponse(body: unknown, inputs: number): Float32Array[] | string {
  if (!isJsonObject(body) || !Array.isArray(body.embeddings)) return 'response is not a BatchEmbedContentsResponse (no embeddings[])';
  if (body.embeddings.length !== inputs) return `response has ${body.embeddings.length} embeddings for ${inputs} inputs`;
  const out: Float32Array[] = [];
  for (const [i, item] of body.embeddings.entries()) {
    const values = isJsonObject(item) ? item.values : undefined;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'number')) return `embeddings[${i}].values is not an array of numbers`;
    out.push(Float32Array.from(values as number[]));
  }
  return out;
}
