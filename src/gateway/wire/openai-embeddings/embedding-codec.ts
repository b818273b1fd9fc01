// Embedding vectors on OpenAI's wire: `float` is a JSON array of numbers, `base64` the vector's
// little-endian float32 bytes in base64 (what the `openai` SDK asks for by default and decodes).
import { endianness } from 'node:os';
import type { EncodingFormat } from '../../protocol/embeddings-request.ts';

const LITTLE_ENDIAN = endianness() === 'LE';

export function encodeEmbeddingBase64(vector: Float32Array): string {
  if (LITTLE_ENDIAN) return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

/** undefined when `text` is not a whole number of float32s in base64. */
export function decodeEmbeddingBase64(text: string): Float32Array | undefined {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0 || bytes.length === 0) return undefined;
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

export function encodeEmbedding(vector: Float32Array, format: EncodingFormat): number[] | string {
  return format === 'base64' ? encodeEmbeddingBase64(vector) : Array.from(vector);
}

/**
 * The first `dimensions` values, scaled back to unit length: how shortened embeddings are defined for
 * models trained for it (OpenAI text-embedding-3, Gemini); a vector already that short is returned as is.
 */
export function shortenEmbedding(vector: Float32Array, dimensions: number): Float32Array {
  if (vector.length <= dimensions) return vector;
  const out = vector.slice(0, dimensions);
  let norm = 0;
  for (let i = 0; i < out.length; i++) norm += out[i]! * out[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = out[i]! / norm;
  return out;
}
