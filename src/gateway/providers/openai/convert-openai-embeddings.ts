// OpenAI's embeddings wire format (POST {base}/embeddings), for OpenAI and compatible relays: the body
// Herd sends (vectors asked for in base64, a quarter of the JSON to parse) and the list it reads back,
// whose vectors may be base64 or, from a relay that ignores encoding_format, arrays of numbers.
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { decodeEmbeddingBase64 } from '../../wire/openai-embeddings/embedding-codec.ts';
import type { EmbedRequest } from '../provider.ts';

export function convertOpenAIEmbeddingsRequest(req: EmbedRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: req.upstreamModel, input: req.inputs, encoding_format: 'base64' };
  if (req.dimensions !== undefined) body.dimensions = req.dimensions;
  return body;
}

export interface OpenAIEmbeddingsAnswer {
  vectors: Float32Array[];
  promptTokens: number | undefined;
}

/** The vectors in input order and the upstream's token count, or what is wrong with the body. */
export function convertOpenAIEmbeddingsResponse(body: unknown, inputs: number): OpenAIEmbeddingsAnswer | string {
  if (!isJsonObject(body) || !Array.isArray(body.data)) return 'response is not an embeddings list (no data[])';
  // Filled, not sparse: indexOf skips the holes of `new Array(n)`.
  const vectors: (Float32Array | undefined)[] = Array.from({ length: inputs }, () => undefined);
  for (const [position, item] of body.data.entries()) {
    if (!isJsonObject(item)) return `data[${position}] is not an object`;
    const index = typeof item.index === 'number' ? item.index : position;
    if (!Number.isInteger(index) || index < 0 || index >= inputs) return `data[${position}].index ${String(item.index)} is out of range`;
    const vector = convertVector(item.embedding);
    if (vector === undefined) return `data[${position}].embedding is neither base64 float32 nor an array of numbers`;
    vectors[index] = vector;
  }
  const missing = vectors.indexOf(undefined);
  if (missing !== -1 || vectors.length !== inputs) return `no embedding for input ${missing === -1 ? vectors.length : missing}`;
  const usage = isJsonObject(body.usage) ? body.usage : undefined;
  const promptTokens = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : typeof usage?.total_tokens === 'number' ? usage.total_tokens : undefined;
  return { vectors: vectors as Float32Array[], promptTokens };
}

function convertVector(value: unknown): Float32Array | undefined {
  if (typeof value === 'string') return decodeEmbeddingBase64(value);
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'number')) return Float32Array.from(value as number[]);
  return undefined;
}
