// The Gemini provider against a local server speaking generateContent / streamGenerateContent?alt=sse
// (response shapes as recorded from the live API), including safety blocks and Google error bodies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { createGeminiProvider } from '../../src/gateway/providers/gemini/gemini-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../src/gateway/providers/provider.ts';
import { UpstreamError } from '../../src/gateway/protocol/upstream-error.ts';
import { collect, sendJson, sendSse, startMockUpstream, type MockUpstream, type SseFrame } from './helpers/mock-upstream.ts';

const KEY = 'AIzaSy-test-key';
const request: ChatRequest = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'How many r in strawberry?' }] };

const usageMetadata = {
  promptTokenCount: 9,
  candidatesTokenCount: 23,
  totalTokenCount: 217,
  cachedContentTokenCount: 4,
  promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }],
  thoughtsTokenCount: 185,
};
const generateResponse = {
  candidates: [{ content: { parts: [{ text: 'There are **3** "r"s in strawberry.' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
  usageMetadata,
  modelVersion: 'gemini-2.5-flash',
  responseId: 'bH6LaZW8Fp_3nsEPqtaSwQ4',
};

const textStream: SseFrame[] = [
  {
    data: {
      candidates: [{ content: { parts: [{ text: 'There are **3**' }], role: 'model' }, index: 0 }],
      usageMetadata: { ...usageMetadata, candidatesTokenCount: 5 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    },
  },
  {
    data: { candidates: [{ content: { parts: [{ text: ' "r"s in strawberry.' }], role: 'model' }, index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-flash', responseId: 'r1' },
  },
  {
    data: {
      candidates: [{ content: { parts: [{ text: '', thoughtSignature: 'EqsFCqgF' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata,
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    },
  },
];

describe('gemini provider', () => {
  let upstream: MockUpstream;
  let provider: Provider;
  const signal = new AbortController().signal;

  before(async () => {
    upstream = await startMockUpstream((_req, res) => sendJson(res, 200, generateResponse));
    provider = createGeminiProvider({ name: 'gemini', baseUrl: upstream.url, apiKey: KEY, timeoutMs: 2000 });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('calls generateContent with the key in x-goog-api-key and maps usage (thoughts count as completion)', async () => {
    upstream.setHandler((_req, res) => sendJson(res, 200, generateResponse));
    const result = await provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal);
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.url, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], KEY);
    assert.ok(!sent.url.includes(KEY));
    assert.deepEqual(sent.body, { contents: [{ role: 'user', parts: [{ text: 'How many r in strawberry?' }] }] });
    assert.equal(result.response.id, 'bH6LaZW8Fp_3nsEPqtaSwQ4');
    assert.deepEqual(result.response.choices[0], {
      index: 0,
      logprobs: null,
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'There are **3** "r"s in strawberry.' },
    });
    assert.deepEqual(result.usage, {
      promptTokens: 9,
      cachedPromptTokens: 4,
      cacheWriteTokens: 0,
      completionTokens: 208,
      reasoningTokens: 185,
      reportedReasoningTokens: 185,
      estimated: false,
      raw: usageMetadata,
    });
    assert.equal(result.response.usage?.total_tokens, 217);
  });

  it('reports a blocked prompt (promptFeedback.blockReason) as a content_filter UpstreamError', async () => {
    upstream.setHandler((_req, res) =>
      sendJson(res, 200, {
        promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'x',
      }),
    );
    const err = await rejection(provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(err.code, 'UPSTREAM_ERROR');
    assert.equal(err.failure, 'content_filter');
    assert.equal(err.upstreamType, 'PROHIBITED_CONTENT');
    assert.match(err.message, /blocked the prompt \(PROHIBITED_CONTENT\)/);
  });

  it('finishes a candidate stopped for SAFETY with content_filter', async () => {
    upstream.setHandler((_req, res) =>
      sendJson(res, 200, {
        candidates: [
          {
            content: { parts: [], role: 'model' },
            finishReason: 'SAFETY',
            index: 0,
            safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }],
          },
        ],
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
      }),
    );
    const result = await provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal);
    assert.equal(result.response.choices[0].finish_reason, 'content_filter');
    assert.equal(result.rawFinishReason, 'SAFETY');
  });

  it('streams over alt=sse (CRLF framing) into chunks, last usageMetadata wins', async () => {
    upstream.setHandler((_req, res) => sendSse(res, textStream, { lineEnd: '\r\n' }));
    const events = await collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(upstream.requests.at(-1)!.url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const chunks = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk] : []));
    assert.equal(chunks.length, 3);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: 'There are **3**' });
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), 'There are **3** "r"s in strawberry.');
    assert.equal(chunks[2].choices[0].finish_reason, 'stop');
    const usage = events.find((e): e is Extract<ProviderStreamEvent, { type: 'usage' }> => e.type === 'usage')!.usage;
    assert.equal(usage.completionTokens, 23 + 185);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'STOP' });
  });

  it('streams whole function calls as tool-call deltas and finishes with tool_calls', async () => {
    upstream.setHandler((_req, res) =>
      sendSse(res, [
        {
          data: {
            candidates: [
              { content: { parts: [{ functionCall: { name: 'weather', args: { location: 'San Francisco' } }, thoughtSignature: 'EqUCCqIC' }], role: 'model' }, index: 0 },
            ],
            usageMetadata: { promptTokenCount: 29, candidatesTokenCount: 15, totalTokenCount: 89, thoughtsTokenCount: 45 },
          },
        },
        {
          data: {
            candidates: [{ content: { parts: [{ text: '' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: 29, candidatesTokenCount: 15, totalTokenCount: 89, thoughtsTokenCount: 45 },
          },
        },
      ]),
    );
    const events = await collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    const chunks = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk] : []));
    const call = chunks[0].choices[0].delta.tool_calls![0];
    assert.equal(call.index, 0);
    assert.match(call.id!, /^call_[0-9a-f]{24}$/);
    assert.deepEqual(call.function, { name: 'weather', arguments: '{"location":"San Francisco"}' });
    assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'tool_calls');
  });

  it('fails a stream whose prompt was blocked', async () => {
    upstream.setHandler((_req, res) => sendSse(res, [{ data: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } } }]));
    const err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal)));
    assert.equal(err.failure, 'content_filter');
  });

  it('maps 429 RESOURCE_EXHAUSTED with google.rpc.RetryInfo to a retry delay', async () => {
    upstream.setHandler((_req, res) =>
      sendJson(res, 429, {
        error: {
          code: 429,
          message: 'You exceeded your current quota, please check your plan.',
          status: 'RESOURCE_EXHAUSTED',
          details: [
            { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier' }] },
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34.4s' },
          ],
        },
      }),
    );
    const err = await rejection(provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(err.code, 'UPSTREAM_RATE_LIMITED');
    assert.equal(err.upstreamType, 'RESOURCE_EXHAUSTED');
    assert.equal(err.retryAfterSeconds, 34.4);
  });

  it('maps 400 INVALID_ARGUMENT for too many tokens to context_length, and 503 UNAVAILABLE', async () => {
    upstream.setHandler((_req, res) =>
      sendJson(res, 400, { error: { code: 400, message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } }),
    );
    let err = await rejection(provider.chat({ request, upstreamModel: 'gemini-2.5-flash' }, signal));
    assert.equal(err.failure, 'context_length');
    upstream.setHandler((_req, res) => sendJson(res, 503, { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }));
    err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal)));
    assert.equal(err.code, 'UPSTREAM_UNAVAILABLE');
  });

  it('fails a stream that ends without a finishReason, and one that never answers', async () => {
    upstream.setHandler((_req, res) => sendSse(res, textStream.slice(0, 2)));
    let err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash' }, signal)));
    assert.equal(err.failure, 'interrupted');
    upstream.setHandler((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
    });
    err = await rejection(collect(provider.stream({ request, upstreamModel: 'gemini-2.5-flash', timeoutMs: 100 }, signal)));
    assert.equal(err.code, 'UPSTREAM_TIMEOUT');
  });
});

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof UpstreamError, `expected UpstreamError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}
