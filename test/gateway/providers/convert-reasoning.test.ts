// Each upstream's reasoning settings from a bridged request: Anthropic thinking (adaptive or a budget, with
// the constraints thinking puts on the body), Gemini thinkingConfig, OpenAI reasoning_effort from thinking.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { convertAnthropicRequest } from '../../../src/gateway/providers/anthropic/convert-anthropic-request.ts';
import { takesAdaptiveThinking } from '../../../src/gateway/providers/anthropic/convert-anthropic-reasoning.ts';
import { convertGeminiRequest } from '../../../src/gateway/providers/gemini/convert-gemini-request.ts';
import { convertOpenAIReasoning } from '../../../src/gateway/providers/openai/convert-openai-reasoning.ts';
import { convertOpenAIRequest } from '../../../src/gateway/providers/openai/convert-openai-request.ts';

const messages: ChatRequest['messages'] = [{ role: 'user', content: 'hi' }];
const request = (fields: Partial<ChatRequest>): ChatRequest => ({ model: 'm', messages, ...fields });
const anthropic = (fields: Partial<ChatRequest>, model = 'claude-sonnet-4-5-20250929') =>
  convertAnthropicRequest(request(fields), model, { defaultMaxTokens: 4096, stream: false });
const gemini = (fields: Partial<ChatRequest>, model = 'gemini-2.5-flash') => convertGeminiRequest(request(fields), model);
const params = (warnings: Array<{ param: string }>) => warnings.map((w) => w.param);

describe('reasoning_effort onto Anthropic', () => {
  it('reads the Claude version from the model id: 4.6 and later think adaptively', () => {
    for (const id of ['claude-opus-4-6', 'claude-sonnet-4-6-20260217', 'claude-opus-4-7', 'claude-opus-5', 'anthropic.claude-opus-4-6-v1:0'])
      assert.equal(takesAdaptiveThinking(id), true, id);
    for (const id of ['claude-sonnet-4-5-20250929', 'claude-opus-4-20250514', 'claude-opus-4-1', 'claude-3-7-sonnet-20250219', 'claude-haiku-4-5', 'my-relay-model']) {
      assert.equal(takesAdaptiveThinking(id), false, id);
    }
  });

  it('an older model gets a budget, and max_tokens grows by it when the client set none', () => {
    const { body, warnings } = anthropic({ reasoning_effort: 'medium' });
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 8192 });
    assert.equal(body.max_tokens, 4096 + 8192);
    assert.equal(body.output_config, undefined);
    assert.deepEqual(warnings, []);
  });

  it("a client's max_tokens is kept: the budget is at most half of it, and 1024 or less leaves no room to think", () => {
    const capped = anthropic({ reasoning_effort: 'high', max_completion_tokens: 6000 });
    assert.equal(capped.body.max_tokens, 6000);
    assert.deepEqual(capped.body.thinking, { type: 'enabled', budget_tokens: 3000 });
    const floor = anthropic({ reasoning_effort: 'high', max_tokens: 1500 });
    assert.deepEqual(floor.body.thinking, { type: 'enabled', budget_tokens: 1024 });
    const none = anthropic({ reasoning_effort: 'high', max_tokens: 1024 });
    assert.equal(none.body.thinking, undefined);
    assert.deepEqual(params(none.warnings), ['reasoning_effort']);
  });

  it('a 4.6+ model gets adaptive thinking with the effort in output_config', () => {
    const { body, warnings } = anthropic({ reasoning_effort: 'minimal', max_tokens: 100 }, 'claude-opus-4-6');
    assert.deepEqual(body.thinking, { type: 'adaptive' });
    assert.deepEqual(body.output_config, { effort: 'low' });
    assert.equal(body.max_tokens, 100);
    assert.deepEqual(warnings, []);
    // Without the client's cap, room for the effort's budget as on older models.
    assert.equal(anthropic({ reasoning_effort: 'high' }, 'claude-opus-4-7').body.max_tokens, 4096 + 24576);
  });

  it("'none' is sent as thinking disabled, not left out", () => {
    assert.deepEqual(anthropic({ reasoning_effort: 'none' }).body.thinking, { type: 'disabled' });
  });

  it('temperature, top_k and a low top_p give way to thinking, each named', () => {
    const { body, warnings } = anthropic({ reasoning_effort: 'low', temperature: 0.2, top_k: 5, top_p: 0.5 });
    assert.deepEqual([body.temperature, body.top_k, body.top_p], [undefined, undefined, undefined]);
    assert.deepEqual(params(warnings), ['temperature', 'top_k', 'top_p']);
    const kept = anthropic({ reasoning_effort: 'low', temperature: 1, top_p: 0.97 });
    assert.deepEqual([kept.body.temperature, kept.body.top_p, kept.warnings], [1, 0.97, []]);
  });

  it('no thinking while a tool call is forced, or while a turn without signed thinking is in progress', () => {
    const tool = { type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } };
    const forced = anthropic({ reasoning_effort: 'high', tools: [tool], tool_choice: 'required', temperature: 0.3 });
    assert.equal(forced.body.thinking, undefined);
    assert.equal(forced.body.temperature, 0.3);
    assert.deepEqual(params(forced.warnings), ['reasoning_effort']);
    const loop: ChatRequest['messages'] = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'sunny' },
    ];
    const unsigned = anthropic({ reasoning_effort: 'high', tools: [tool], messages: loop });
    assert.equal(unsigned.body.thinking, undefined);
    assert.match(unsigned.warnings[0]?.message ?? '', /signed thinking/);
    const signed = loop.map((m) => (m.role === 'assistant' ? { ...m, reasoning_content: 'Call f.', reasoning_signature: 'sig' } : m));
    assert.deepEqual(anthropic({ reasoning_effort: 'high', tools: [tool], messages: signed }).body.thinking, { type: 'enabled', budget_tokens: 24576 });
    // A finished turn (a user message after it) needs nothing.
    const next = [...loop, { role: 'assistant' as const, content: 'Sunny.' }, { role: 'user' as const, content: 'thanks' }];
    assert.deepEqual(anthropic({ reasoning_effort: 'low', tools: [tool], messages: next }).body.thinking, { type: 'enabled', budget_tokens: 2048 });
  });

  it("a Messages client's own thinking goes as it sent it, with its effort in output_config", () => {
    const { body } = anthropic({ thinking: { type: 'adaptive' }, reasoning_effort: 'max', temperature: 0.5 }, 'claude-opus-4-6');
    assert.deepEqual([body.thinking, body.output_config, body.temperature], [{ type: 'adaptive' }, { effort: 'max' }, 0.5]);
  });

  it('an effort Anthropic has no level for is dropped and named', () => {
    const { body, warnings } = anthropic({ reasoning_effort: 'auto' });
    assert.equal(body.thinking, undefined);
    assert.deepEqual(params(warnings), ['reasoning_effort']);
  });
});

describe('reasoning onto Gemini', () => {
  const config = (fields: Partial<ChatRequest>, model?: string) => gemini(fields, model).body.generationConfig?.thinkingConfig;

  it('Gemini 2.5: effort as thinkingBudget with thoughts included; none is 0; adaptive is dynamic (-1)', () => {
    assert.deepEqual(config({ reasoning_effort: 'medium' }), { thinkingBudget: 8192, includeThoughts: true });
    assert.deepEqual(config({ reasoning_effort: 'none' }), { thinkingBudget: 0 });
    assert.deepEqual(config({ thinking: { type: 'enabled', budget_tokens: 0 } }), { thinkingBudget: 0 });
    assert.deepEqual(config({ thinking: { type: 'disabled' } }), { thinkingBudget: 0 });
    assert.deepEqual(config({ thinking: { type: 'adaptive' } }), { thinkingBudget: -1, includeThoughts: true });
    assert.deepEqual(config({ thinking: { type: 'adaptive' }, reasoning_effort: 'low' }), { thinkingBudget: 2048, includeThoughts: true });
    assert.equal(config({}), undefined);
  });

  it("a Messages client's budget goes as is, within the model's range and half the client's cap", () => {
    assert.deepEqual(config({ thinking: { type: 'enabled', budget_tokens: 5000 } }), { thinkingBudget: 5000, includeThoughts: true });
    assert.deepEqual(config({ thinking: { type: 'enabled', budget_tokens: 31999 } }), { thinkingBudget: 24576, includeThoughts: true });
    assert.deepEqual(config({ thinking: { type: 'enabled', budget_tokens: 31999 } }, 'gemini-2.5-pro'), { thinkingBudget: 31999, includeThoughts: true });
    assert.deepEqual(config({ thinking: { type: 'enabled', budget_tokens: 5000 }, max_tokens: 4000 }), { thinkingBudget: 2000, includeThoughts: true });
  });

  it('Gemini 2.5 Pro cannot turn thinking off: its smallest budget, named', () => {
    const { body, warnings } = gemini({ reasoning_effort: 'none' }, 'gemini-2.5-pro');
    assert.deepEqual(body.generationConfig?.thinkingConfig, { thinkingBudget: 128 });
    assert.deepEqual(params(warnings), ['reasoning_effort']);
  });

  it('Gemini 3: thinkingLevel, with the levels each model lacks replaced and named', () => {
    assert.deepEqual(config({ reasoning_effort: 'minimal' }, 'gemini-3-flash-preview'), { thinkingLevel: 'minimal', includeThoughts: true });
    assert.deepEqual(config({ reasoning_effort: 'medium' }, 'gemini-3.1-pro-preview'), { thinkingLevel: 'medium', includeThoughts: true });
    const pro = gemini({ reasoning_effort: 'medium' }, 'gemini-3-pro-preview');
    assert.deepEqual(pro.body.generationConfig?.thinkingConfig, { thinkingLevel: 'high', includeThoughts: true });
    assert.deepEqual(params(pro.warnings), ['reasoning_effort']);
    assert.deepEqual(config({ thinking: { type: 'enabled', budget_tokens: 3000 } }, 'gemini-3-flash-preview'), { thinkingLevel: 'low', includeThoughts: true });
    assert.deepEqual(config({ thinking: { type: 'adaptive' } }, 'gemini-3-flash-preview'), { includeThoughts: true });
    const off = gemini({ thinking: { type: 'disabled' } }, 'gemini-3-pro-preview');
    assert.deepEqual(off.body.generationConfig?.thinkingConfig, { thinkingLevel: 'low' });
    assert.deepEqual(params(off.warnings), ['thinking']);
    assert.deepEqual(params(gemini({ reasoning_effort: 'xhigh' }, 'gemini-3-flash-preview').warnings), ['reasoning_effort']);
  });
});

describe("a Messages client's thinking onto OpenAI-compatible upstreams", () => {
  const effort = (fields: Partial<ChatRequest>) => convertOpenAIRequest(request(fields), 'gpt', false).reasoning_effort;

  it('a budget becomes its effort range; an effort beside it wins; adaptive alone sends none', () => {
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 1024 } }), 'low');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 10000 } }), 'medium');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 31999 } }), 'high');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 31999 }, reasoning_effort: 'low' }), 'low');
    assert.equal(effort({ thinking: { type: 'adaptive' } }), undefined);
    assert.equal(effort({ thinking: { type: 'adaptive' }, reasoning_effort: 'medium' }), 'medium');
  });

  it('off sends no reasoning_effort (and drops an effort beside it), named; max goes as xhigh, named', () => {
    const body = convertOpenAIRequest(request({ thinking: { type: 'disabled' }, reasoning_effort: 'max' }), 'gpt', false);
    assert.equal('reasoning_effort' in body, false);
    assert.deepEqual(params(convertOpenAIReasoning(request({ thinking: { type: 'disabled' } }))?.warnings ?? []), ['thinking']);
    assert.equal(effort({ thinking: { type: 'adaptive' }, reasoning_effort: 'max' }), 'xhigh');
    assert.deepEqual(params(convertOpenAIReasoning(request({ thinking: { type: 'adaptive' }, reasoning_effort: 'max' }))?.warnings ?? []), ['output_config.effort']);
  });

  it("an OpenAI client's own reasoning_effort goes up untouched", () => {
    assert.equal(convertOpenAIReasoning(request({ reasoning_effort: 'max' })), undefined);
    assert.equal(effort({ reasoning_effort: 'minimal' }), 'minimal');
  });
});
