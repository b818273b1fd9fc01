// Chat messages to a Triton text model's prompt: each preset, a custom template, the model's
// prompt_template parameter, and what a text model cannot take (images, tool-call replays).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import type { ChatMessage } from '../../../src/gateway/protocol/chat-types.ts';
import { DEFAULT_PROMPT_TEMPLATE, parsePromptTemplateParameter, renderChatPrompt, resolvePromptTemplate } from '../../../src/gateway/providers/triton/render-chat-prompt.ts';

const conversation: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: [{ type: 'text', text: 'Why?' }] },
];

test('plain (the default): a role-labelled transcript ending where the assistant speaks', () => {
  assert.equal(renderChatPrompt(conversation, DEFAULT_PROMPT_TEMPLATE), 'Be brief.\n\nUser: Hi\nAssistant: Hello.\nUser: Why?\nAssistant:');
});

test('raw: the texts a blank line apart, nothing after the last', () => {
  assert.equal(renderChatPrompt(conversation, resolvePromptTemplate('raw')), 'Be brief.\n\nHi\n\nHello.\n\nWhy?');
  assert.equal(renderChatPrompt([{ role: 'user', content: 'just this' }], resolvePromptTemplate('raw')), 'just this');
});

test('chatml and llama3 presets', () => {
  assert.equal(
    renderChatPrompt(conversation.slice(0, 2), resolvePromptTemplate('chatml')),
    '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
  );
  assert.equal(
    renderChatPrompt([{ role: 'user', content: 'Hi' }], resolvePromptTemplate('llama3')),
    '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
  );
});

test('a custom template: tool defaults to the user format, developer is a system message, $ patterns stay literal', () => {
  const template = resolvePromptTemplate({ system: '[S]{content}', user: '[U]{content}', assistant: '[A]{content}', generation: '[A]' });
  const messages: ChatMessage[] = [
    { role: 'developer', content: 'd' },
    { role: 'user', content: "cost $& and $1 and $'" },
    { role: 'tool', content: 'result', tool_call_id: 'c1' },
  ];
  assert.equal(renderChatPrompt(messages, template), "[S]d[U]cost $& and $1 and $'[U]result[A]");
});

test("a model's prompt_template parameter: a preset name or a JSON template", () => {
  assert.equal(parsePromptTemplateParameter('m', ' chatml '), resolvePromptTemplate('chatml'));
  assert.deepEqual(parsePromptTemplateParameter('m', '{"system":"S{content}","user":"U{content}","assistant":"A{content}"}'), {
    system: 'S{content}',
    user: 'U{content}',
    assistant: 'A{content}',
    tool: 'U{content}',
    generation: '',
  });
  const refused = (value: string, message: RegExp) =>
    assert.throws(
      () => parsePromptTemplateParameter('m', value),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && message.test(err.message),
    );
  refused('vicuna', /model 'm': parameter prompt_template 'vicuna' is not a preset \(plain, raw, chatml, llama3\) nor a JSON object/);
  refused('{"user": "x"', /is not valid JSON/);
  refused('{"system":"S","user":"U{content}","assistant":"A{content}"}', /'system' must be a string containing \{content\}/);
  refused('{"system":"S{content}","user":"U{content}","assistant":"A{content}","extra":1}', /unknown key\(s\) extra/);
});

test('images and tool-call replays cannot reach a text model: INVALID_ARG naming the message', () => {
  assert.throws(
    () => renderChatPrompt([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] }], DEFAULT_PROMPT_TEMPLATE),
    /messages\[0\]\.content\[0\]: a Triton text model takes text only, not image_url/,
  );
  assert.throws(
    () => renderChatPrompt([{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }], DEFAULT_PROMPT_TEMPLATE),
    /messages\[0\]: a Triton text model cannot replay tool calls/,
  );
});
