// Retry-After parsing, usage normalisation per dialect, and the tokenizer-based estimate.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationSeconds, parseRetryAfter } from '../../src/gateway/wire/parse-retry-after.ts';
import { convertOpenAIUsage } from '../../src/gateway/wire/openai-chat/convert-openai-usage.ts';
import { convertAnthropicUsage } from '../../src/gateway/wire/anthropic-messages/convert-anthropic-usage.ts';
import { convertGeminiUsage } from '../../src/gateway/wire/gemini/convert-gemini-usage.ts';
import { countTokens, estimatePromptTokens, estimateUsage } from '../../src/gateway/protocol/usage-estimate.ts';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads delay-seconds, HTTP dates and retry-after-ms', () => {
    assert.equal(parseRetryAfter({ 'retry-after': '20' }, now), 20);
    assert.equal(parseRetryAfter({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, now), 30);
    assert.equal(parseRetryAfter({ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }, now), 0);
    assert.equal(parseRetryAfter({ 'retry-after-ms': '1500', 'retry-after': '2' }, now), 1.5);
    assert.equal(parseRetryAfter({ 'retry-after': 'soon' }, now), undefined);
    assert.equal(parseRetryAfter({}, now), undefined);
  });
  it('reads protobuf durations', () => {
    assert.equal(parseDurationSeconds('34.4s'), 34.4);
    assert.equal(parseDurationSeconds('7s'), 7);
    assert.equal(parseDurationSeconds(7), undefined);
  });
});

describe('usage normalisation', () => {
  it('openai: missing counts mean no usage', () => {
    assert.equal(convertOpenAIUsage(null), undefined);
    assert.equal(convertOpenAIUsage({ total_tokens: 3 }), undefined);
  });
  it('anthropic: prompt = input + cache read + cache write; null cache fields are zero', () => {
    const usage = convertAnthropicUsage({ input_tokens: 10, output_tokens: 5, cache_read_input_tokens: null, cache_creation_input_tokens: 7 });
    assert.deepEqual([usage.promptTokens, usage.cachedPromptTokens, usage.cacheWriteTokens], [17, 0, 7]);
  });
  it('gemini: tool-use prompt tokens are input, thoughts are completion', () => {
    const usage = convertGeminiUsage({ promptTokenCount: 500, candidatesTokenCount: 120, toolUsePromptTokenCount: 300, thoughtsTokenCount: 10, totalTokenCount: 930 });
    assert.deepEqual([usage.promptTokens, usage.completionTokens, usage.reasoningTokens], [800, 130, 10]);
    assert.equal(usage.promptTokens + usage.completionTokens, 930);
  });
});

describe('usage estimate', () => {
  it('counts with o200k_base and marks the result estimated', async () => {
    assert.equal(await countTokens('Hello, world! How are you doing today?'), 10);
    assert.equal(await countTokens(''), 0);
    const request = { model: 'm', messages: [{ role: 'user' as const, content: 'Hello, world! How are you doing today?' }] };
    // 3 reply priming + 3 per message + 10 text tokens
    assert.equal(await estimatePromptTokens(request), 16);
    const usage = await estimateUsage(request, 'Fine, thanks.');
    assert.equal(usage.estimated, true);
    assert.equal(usage.raw, undefined);
    assert.equal(usage.promptTokens, 16);
    assert.ok(usage.completionTokens > 0);
  });
});
