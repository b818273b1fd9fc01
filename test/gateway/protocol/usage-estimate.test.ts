// Herd's own token counts stay bounded in time and memory whatever a client or upstream sends: long runs
// without spaces are counted in slices, and a stream's estimate keeps a sample and extrapolates.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CompletionTextCollector, countTokens, estimateUsage, SAMPLE_CHARS } from '../../../src/gateway/protocol/usage-estimate.ts';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';

const request: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

describe('countTokens', () => {
  it('counts a long run without spaces slice by slice, to the same total as in one piece', async () => {
    // One call on 128,000 'x' takes seconds (the BPE is quadratic in a run); o200k_base makes 8 'x' one token.
    assert.equal(await countTokens('x'.repeat(128_000)), 16_000);
  });

  it('cuts slices at spaces, so ordinary text counts as in one piece', async () => {
    const words = 'the quick brown fox jumps over the lazy dog '.repeat(500);
    const { countTokens: countWhole } = await import('gpt-tokenizer/encoding/o200k_base');
    assert.equal(await countTokens(words), countWhole(words));
  });

  it('never cuts a surrogate pair', async () => {
    const emoji = '😀'.repeat(5_000); // 10,000 UTF-16 units, no spaces
    const whole = await countTokens('😀'.repeat(100));
    assert.equal(await countTokens(emoji), whole * 50);
  });
});

describe('CompletionTextCollector', () => {
  it('keeps at most SAMPLE_CHARS of text but counts every character', () => {
    const collector = new CompletionTextCollector();
    for (let i = 0; i < 10; i++) collector.add('y'.repeat(SAMPLE_CHARS / 4));
    const sample = collector.sample();
    assert.equal(sample.text.length, SAMPLE_CHARS);
    assert.equal(sample.totalChars, SAMPLE_CHARS * 2.5);
  });

  it('extrapolates the tokens beyond the sample at its tokens per character', async () => {
    const collector = new CompletionTextCollector();
    const word = 'hello ';
    for (let i = 0; i < (SAMPLE_CHARS * 3) / word.length; i++) collector.add(word);
    const usage = await estimateUsage(request, collector.sample());
    const exact = await countTokens(collector.text());
    assert.equal(usage.estimated, true);
    assert.ok(Math.abs(usage.completionTokens - exact * 3) <= 3, `${usage.completionTokens} vs ${exact * 3}`);
  });
});
