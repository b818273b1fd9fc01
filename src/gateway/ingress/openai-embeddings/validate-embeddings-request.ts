// Turns an untrusted POST /v1/embeddings body into an EmbeddingsRequest, as OpenAI validates it:
// `input` a string or an array of strings, `encoding_format` float|base64, `dimensions` a positive
// integer, `user` a string. Token-id arrays are refused with a clear 400 (no upstream path takes them).
import { HerdError } from '../../../core/errors.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import type { EmbeddingsRequest, EncodingFormat } from '../../protocol/embeddings-request.ts';

/** OpenAI's own bound on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

const KNOWN = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);

const invalid = (message: string, param: string) => new HerdError('INVALID_ARG', message, { param });

export function validateEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (!isJsonObject(body)) throw new HerdError('INVALID_ARG', 'The request body must be a JSON object.');
  for (const key of Object.keys(body)) {
    if (!KNOWN.has(key)) throw invalid(`Unrecognized request argument supplied: ${key}`, key);
  }
  const { model, input, encoding_format: format, dimensions, user } = body;
  if (typeof model !== 'string' || model === '') throw invalid("'model' is required: the name of an embedding model.", 'model');
  const request: EmbeddingsRequest = { model, inputs: convertInput(input), encodingFormat: convertFormat(format) };
  if (dimensions !== undefined && dimensions !== null) {
    if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1) throw invalid("'dimensions' must be a positive integer.", 'dimensions');
    request.dimensions = dimensions;
  }
  if (user !== undefined && user !== null) {
    if (typeof user !== 'string') throw invalid("'user' must be a string.", 'user');
    request.user = user;
  }
  return request;
}

function convertInput(input: unknown): string[] {
  if (input === undefined || input === null) throw invalid("'input' is required: a string or an array of strings.", 'input');
  if (typeof input === 'string') {
    if (input === '') throw invalid("'input' must not be an empty string.", 'input');
    return [input];
  }
  if (!Array.isArray(input)) throw invalid("'input' must be a string or an array of strings.", 'input');
  if (input.length === 0) throw invalid("'input' must not be an empty array.", 'input');
  if (input.length > MAX_EMBEDDING_INPUTS) throw invalid(`'input' has ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} are allowed per request.`, 'input');
  if (input.every((v) => typeof v === 'number') || input.every((v) => Array.isArray(v))) {
    throw new HerdError('UNSUPPORTED', "'input' as token ids is not supported by this gateway: send the text (a string or an array of strings).", { param: 'input' });
  }
  return input.map((text: unknown, i) => {
    if (typeof text !== 'string') throw invalid(`'input[${i}]' must be a string.`, `input[${i}]`);
    if (text === '') throw invalid(`'input[${i}]' must not be an empty string.`, `input[${i}]`);
    return text;
  });
}

function convertFormat(format: unknown): EncodingFormat {
  if (format === undefined || format === null) return 'float';
  if (format === 'float' || format === 'base64') return format;
  throw invalid("'encoding_format' must be 'float' or 'base64'.", 'encoding_format');
}
