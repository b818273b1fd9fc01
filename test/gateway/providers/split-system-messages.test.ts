// Leading system messages lift out; a later one is refused by default, or kept in place as a user turn for Gemini.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HerdError } from '../../../src/core/errors.ts';
import type { ChatMessage } from '../../../src/gateway/protocol/chat-types.ts';
import { convertGeminiRequest } from '../../../src/gateway/providers/gemini/convert-gemini-request.ts';
import { splitSystemMessages } from '../../../src/gateway/providers/split-system-messages.ts';

const messages: ChatMessage[] = [
  { role: 'system', content: 'Top.' },
  { role: 'user', content: 'a' },
  { role: 'assistant', content: 'b' },
  { role: 'system', content: [{ type: 'text', text: 'Mid.' }] },
  { role: 'user', content: 'c' },
];

describe('splitSystemMessages', () => {
  it('refuses a system message after the conversation started, naming it', () => {
    assert.throws(
      () => splitSystemMessages(messages, 'Anthropic'),
      (err: HerdError) => err.code === 'UNSUPPORTED' && err.param === 'messages[3].role',
    );
  });

  it('keeps it in place as a user turn when asked to', () => {
    const { system, conversation } = splitSystemMessages(messages, 'Gemini', { later: 'user' });
    assert.deepEqual(system, ['Top.']);
    assert.deepEqual(
      conversation.map((m) => [m.index, m.message]),
      [
        [1, { role: 'user', content: 'a' }],
        [2, { role: 'assistant', content: 'b' }],
        [3, { role: 'user', content: 'Mid.' }],
        [4, { role: 'user', content: 'c' }],
      ],
    );
  });

  it('Gemini gets a mid-conversation system message as user text where it stood', () => {
    const { body } = convertGeminiRequest({ model: 'g', messages }, 'gemini-2.5-flash');
    assert.deepEqual(body.systemInstruction, { parts: [{ text: 'Top.' }] });
    assert.deepEqual(body.contents, [
      { role: 'user', parts: [{ text: 'a' }] },
      { role: 'model', parts: [{ text: 'b' }] },
      { role: 'user', parts: [{ text: 'Mid.' }, { text: 'c' }] },
    ]);
  });
});
