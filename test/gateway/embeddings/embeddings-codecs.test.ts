// The embeddings wire codecs: the request validator (OpenAI's rules), float/base64 vectors, shortening,
// and the OpenAI and Gemini upstream bodies both ways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { decodeEmbeddingBase64, encodeEmbedding, encodeEmbeddingBase64, shortenEmbedding } from '../../../src/gateway/wire/openai-embeddings/embedding-codec.ts';
import { MAX_EMBEDDING_INPUTS, validateEmbeddingsRequest } from '../../../src/gateway/ingress/openai-embeddings/validate-embeddings-request.ts';
import { convertGeminiEmbeddingsRequest, convertGeminiEmbeddingsResponse } from '../../../src/gateway/providers/gemini/convert-gemini-embeddings.ts';
import { convertOpenAIEmbeddingsRequest, convertOpenAIEmbeddingsResponse } from '../../../src/gateway/providers/openai/convert-openai-embeddings.ts';

const refused = (body: unknown, code: string, param: string | undefined, pattern: RegExp) =>
  assert.throws(
    () => validateEmbeddingsRequest(body),
    (err: unknown) => err instanceof HerdError && err.code === code && err.param === param && pattern.test(err.message),
  );

test('validate: a string or strings, float by default, dimensions and user kept', () => {
  assert.deepEqual(validateEmbeddingsRequest({ model: 'm', input: 'hi' }), { model: 'm', inputs: ['hi'], encodingFormat: 'float' });
  assert.deepEqual(validateEmbeddingsRequest({ model: 'm', input: ['a', 'b'], encoding_format: 'base64', dimensions: 64, user: 'u-1' }), {
    model: 'm',
    inputs: ['a', 'b'],
    encodingFormat: 'base64',
    dimensions: 64,
    user: 'u-1',
  });
  assert.deepEqual(validateEmbeddingsRequest({ model: 'm', input: 'x', encoding_format: null, dimensions: null, user: null }).encodingFormat, 'float');
});

test('validate: OpenAI-shaped refusals naming the param; token ids are unsupported', () => {
  refused([], 'INVALID_ARG', undefined, /JSON object/);
  refused({ input: 'x' }, 'INVALID_ARG', 'model', /'model' is required/);
  refused({ model: 'm' }, 'INVALID_ARG', 'input', /'input' is required/);
  refused({ model: 'm', input: '' }, 'INVALID_ARG', 'input', /empty string/);
  refused({ model: 'm', input: [] }, 'INVALID_ARG', 'input', /empty array/);
  refused({ model: 'm', input: ['a', 3] }, 'INVALID_ARG', 'input[1]', /must be a string/);
  refused({ model: 'm', input: ['a', ''] }, 'INVALID_ARG', 'input[1]', /empty string/);
  refused({ model: 'm', input: [1, 2, 3] }, 'UNSUPPORTED', 'input', /token ids/);
  refused({ model: 'm', input: [[1, 2], [3]] }, 'UNSUPPORTED', 'input', /token ids/);
  refused({ model: 'm', input: Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'x') }, 'INVALID_ARG', 'input', /at most 2048/);
  refused({ model: 'm', input: 'x', encoding_format: 'int8' }, 'INVALID_ARG', 'encoding_format', /'float' or 'base64'/);
  refused({ model: 'm', input: 'x', dimensions: 0 }, 'INVALID_ARG', 'dimensions', /positive integer/);
  refused({ model: 'm', input: 'x', dimensions: 1.5 }, 'INVALID_ARG', 'dimensions', /positive integer/);
  refused({ model: 'm', input: 'x', user: 7 }, 'INVALID_ARG', 'user', /string/);
  refused({ model: 'm', input: 'x', temperature: 1 }, 'INVALID_ARG', 'temperature', /Unrecognized request argument/);
});

test('base64 is little-endian float32, and decodes back exactly', () => {
  const v = new Float32Array([1, -0.5, 0.25, 3.4028234663852886e38]);
  const text = encodeEmbeddingBase64(v);
  const bytes = Buffer.from(text, 'base64');
  assert.equal(bytes.length, 16);
  assert.equal(bytes.readFloatLE(0), 1);
  assert.equal(bytes.readFloatLE(4), -0.5);
  assert.deepEqual(decodeEmbeddingBase64(text), v);
  // A view into a larger buffer encodes only its own elements.
  const view = new Float32Array([9, 1, -0.5, 9]).subarray(1, 3);
  assert.deepEqual(decodeEmbeddingBase64(encodeEmbeddingBase64(view)), new Float32Array([1, -0.5]));
  assert.equal(decodeEmbeddingBase64('AAA='), undefined, 'not a whole float');
  assert.equal(decodeEmbeddingBase64(''), undefined);
  assert.deepEqual(encodeEmbedding(new Float32Array([0.5, 2]), 'float'), [0.5, 2]);
  assert.equal(encodeEmbedding(new Float32Array([0.5, 2]), 'base64'), encodeEmbeddingBase64(new Float32Array([0.5, 2])));
});

test('shortening keeps the first values and re-normalises; a short vector is returned as is', () => {
  const v = new Float32Array([0.6, 0.8, 0, 0]);
  assert.equal(shortenEmbedding(v, 4), v);
  assert.deepEqual(Array.from(shortenEmbedding(new Float32Array([3, 4, 12]), 2)), [0.6000000238418579, 0.800000011920929]);
  assert.deepEqual(Array.from(shortenEmbedding(new Float32Array([0, 0, 1]), 2)), [0, 0], 'a zero prefix stays zero');
});

test('OpenAI upstream: one body for all texts in base64; data read by index, base64 or floats', () => {
  assert.deepEqual(convertOpenAIEmbeddingsRequest({ inputs: ['a', 'b'], upstreamModel: 'text-embedding-3-small', dimensions: 8 }), {
    model: 'text-embedding-3-small',
    input: ['a', 'b'],
    encoding_format: 'base64',
    dimensions: 8,
  });
  const b64 = encodeEmbeddingBase64(new Float32Array([1, 2]));
  const answer = convertOpenAIEmbeddingsResponse(
    {
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: [3, 4] },
        { object: 'embedding', index: 0, embedding: b64 },
      ],
      usage: { prompt_tokens: 5, total_tokens: 5 },
    },
    2,
  );
  assert.ok(typeof answer !== 'string');
  assert.deepEqual(answer.vectors, [new Float32Array([1, 2]), new Float32Array([3, 4])]);
  assert.equal(answer.promptTokens, 5);
  const noUsage = convertOpenAIEmbeddingsResponse({ data: [{ embedding: [1] }] }, 1);
  assert.ok(typeof noUsage !== 'string' && noUsage.promptTokens === undefined);
  assert.match(convertOpenAIEmbeddingsResponse({ choices: [] }, 1) as string, /no data/);
  assert.match(convertOpenAIEmbeddingsResponse({ data: [{ index: 0, embedding: [1] }] }, 2) as string, /no embedding for input 1/);
  assert.match(convertOpenAIEmbeddingsResponse({ data: [{ index: 5, embedding: [1] }] }, 1) as string, /out of range/);
  assert.match(convertOpenAIEmbeddingsResponse({ data: [{ index: 0, embedding: 'AAA=' }] }, 1) as string, /neither base64/);
});

test('Gemini upstream: batchEmbedContents requests in order, values read back; a count mismatch is malformed', () => {
  assert.deepEqual(convertGeminiEmbeddingsRequest({ inputs: ['a', 'b'], upstreamModel: 'gemini-embedding-001', dimensions: 4 }), {
    requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 4 },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] }, outputDimensionality: 4 },
    ],
  });
  assert.equal(convertGeminiEmbeddingsRequest({ inputs: ['a'], upstreamModel: 'models/text-embedding-004' }).requests[0]!.model, 'models/text-embedding-004');
  assert.deepEqual(convertGeminiEmbeddingsResponse({ embeddings: [{ values: [0.5, 1] }, { values: [2, 3] }] }, 2), [new Float32Array([0.5, 1]), new Float32Array([2, 3])]);
  assert.match(convertGeminiEmbeddingsResponse({ embeddings: [{ values: [1] }] }, 2) as string, /1 embeddings for 2 inputs/);
  assert.match(convertGeminiEmbeddingsResponse({ embeddings: [{ values: 'x' }] }, 1) as string, /not an array of numbers/);
  assert.match(convertGeminiEmbeddingsResponse({ candidates: [] }, 1) as string, /no embeddings/);
});
