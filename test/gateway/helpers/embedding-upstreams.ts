// Embeddings endpoints of the local fake upstreams, in each provider's exact wire format: OpenAI's
// POST /v1/embeddings (float or base64, `dimensions`, usage) and Gemini's :batchEmbedContents.
import type { ServerResponse } from 'node:http';
import { sendJson, type RecordedRequest } from './mock-upstream.ts';

/** A deterministic unit vector for a text, so tests can check which text each vector belongs to. */
export function fakeVector(text: string, dims: number): Float32Array {
  const out = new Float32Array(dims);
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  for (let i = 0; i < dims; i++) {
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
    out[i] = (h / 0xffffffff) * 2 - 1;
  }
  let norm = 0;
  for (const v of out) norm += v * v;
  norm = Math.sqrt(norm);
  for (let i = 0; i < dims; i++) out[i] = out[i]! / norm;
  return out;
}

/** OpenAI counts tokens per input; the fake counts words, which is enough to check they add up. */
export const fakeTokenCount = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** Answers an OpenAI POST /embeddings body as OpenAI does: data in input order, vectors in the asked encoding. */
export function answerOpenAIEmbeddings(req: RecordedRequest, res: ServerResponse, dims = 8): void {
  const body = req.body as { model: string; input: string | string[]; encoding_format?: string; dimensions?: number };
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const size = body.dimensions ?? dims;
  let tokens = 0;
  const data = inputs.map((text, index) => {
    tokens += fakeTokenCount(text);
    const vector = fakeVector(text, size);
    const embedding = body.encoding_format === 'base64' ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector);
    return { object: 'embedding', index, embedding };
  });
  sendJson(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

/** Answers a Gemini :batchEmbedContents body: one ContentEmbedding per request, no usage. */
export function answerGeminiBatchEmbed(req: RecordedRequest, res: ServerResponse, dims = 8): void {
  const body = req.body as { requests: { model: string; content: { parts: { text: string }[] }; outputDimensionality?: number }[] };
  const embeddings = body.requests.map((r) => ({ values: Array.from(fakeVector(r.content.parts.map((p) => p.text).join(''), r.outputDimensionality ?? dims)) }));
  sendJson(res, 200, { embeddings });
}
