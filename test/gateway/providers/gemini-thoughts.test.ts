// Gemini thought parts as reasoning_content (answer and stream), and thoughtsTokenCount kept both as the
// normalised reasoning figure and as the upstream's own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { convertGeminiResponse } from '../../../src/gateway/wire/gemini/convert-gemini-response.ts';
import { convertGeminiUsage } from '../../../src/gateway/wire/gemini/convert-gemini-usage.ts';
import { GeminiStreamTranslator } from '../../../src/gateway/wire/gemini/gemini-stream-translator.ts';

describe('Gemini thoughts', () => {
  it('an answer: thought parts are reasoning_content, the rest content', () => {
    const response = convertGeminiResponse(
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Considering Paris.', thought: true }, { text: 'Sunny.' }] }, finishReason: 'STOP' }] },
      'gemini-2.5-flash',
    );
    assert.deepEqual(response.choices[0]?.message, { role: 'assistant', content: 'Sunny.', reasoning_content: 'Considering Paris.' });
  });

  it('a stream: thought parts arrive as reasoning_content deltas before the text', () => {
    const t = new GeminiStreamTranslator('gemini', 'gemini-2.5-flash');
    const first = t.translate({ candidates: [{ content: { parts: [{ text: 'Considering.', thought: true }] } }] });
    const second = t.translate({
      candidates: [{ content: { parts: [{ text: 'Sunny.' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 9 },
    });
    assert.deepEqual(first?.choices[0]?.delta, { role: 'assistant', reasoning_content: 'Considering.' });
    assert.deepEqual(second?.choices[0]?.delta, { content: 'Sunny.' });
    assert.deepEqual([t.finalUsage?.completionTokens, t.finalUsage?.reasoningTokens, t.finalUsage?.reportedReasoningTokens], [11, 9, 9]);
  });

  it('no thoughtsTokenCount: reasoning 0, nothing reported apart', () => {
    const usage = convertGeminiUsage({ promptTokenCount: 5, candidatesTokenCount: 2 });
    assert.deepEqual([usage.reasoningTokens, usage.reportedReasoningTokens], [0, undefined]);
    // A reported zero is a figure, not "not reported".
    assert.equal(convertGeminiUsage({ promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 0 }).reportedReasoningTokens, 0);
  });
});
