// Canonical request -> Gemini generateContent request: the pure mapping, no HTTP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { convertGeminiRequest, SKIP_THOUGHT_SIGNATURE } from '../../src/gateway/providers/gemini/convert-gemini-request.ts';

const convert = (request: Omit<ChatRequest, 'model'>, model = 'gemini-2.5-flash') => convertGeminiRequest({ model: 'g', ...request }, model);

const toolConversation: ChatRequest['messages'] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: '{"temp":18}' },
];

describe('convertGeminiRequest', () => {
  it('maps roles, systemInstruction, functionCall and functionResponse (named via the call)', () => {
    const { body, warnings } = convert({ messages: toolConversation });
    assert.deepEqual(body, {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { name: 'get_weather', content: '{"temp":18}' } } }] },
      ],
    });
    assert.deepEqual(warnings, []);
  });

  it('marks replayed function calls with the documented sentinel signature for Gemini 3 only', () => {
    const gemini3 = convert({ messages: toolConversation }, 'gemini-3-pro-preview');
    assert.equal(gemini3.body.contents[1].parts[0].thoughtSignature, SKIP_THOUGHT_SIGNATURE);
    assert.deepEqual(
      gemini3.warnings.map((w) => w.param),
      ['messages[2].tool_calls'],
    );
    assert.equal(convert({ messages: toolConversation }).body.contents[1].parts[0].thoughtSignature, undefined);
  });

  it('maps generationConfig, tools, tool_choice and JSON response formats', () => {
    const { body } = convert({
      messages: [{ role: 'user', content: 'x' }],
      temperature: 1.2,
      top_p: 0.8,
      max_completion_tokens: 256,
      stop: ['END'],
      n: 2,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      seed: 42,
      response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object', properties: { a: { type: 'string' } } } } },
      tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object', additionalProperties: false } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
    });
    assert.deepEqual(body.generationConfig, {
      temperature: 1.2,
      topP: 0.8,
      maxOutputTokens: 256,
      stopSequences: ['END'],
      candidateCount: 2,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      seed: 42,
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object', properties: { a: { type: 'string' } } },
    });
    assert.deepEqual(body.tools, [{ functionDeclarations: [{ name: 'f', description: 'does f', parametersJsonSchema: { type: 'object', additionalProperties: false } }] }]);
    assert.deepEqual(body.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } });
    const tools = [{ type: 'function' as const, function: { name: 'f' } }];
    const mode = (tool_choice: ChatRequest['tool_choice']) => convert({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice }).body.toolConfig;
    assert.deepEqual(mode('auto'), { functionCallingConfig: { mode: 'AUTO' } });
    assert.deepEqual(mode('required'), { functionCallingConfig: { mode: 'ANY' } });
    assert.deepEqual(mode('none'), { functionCallingConfig: { mode: 'NONE' } });
  });

  it('sends data: images inline and refuses URL images with the param', () => {
    const { body } = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          ],
        },
      ],
    });
    assert.deepEqual(body.contents[0].parts[1], { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } });
    assert.throws(
      () => convert({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }] }),
      (err: unknown) => err instanceof HerdError && err.code === 'UNSUPPORTED' && err.param === 'messages[0].content[0].image_url.url',
    );
  });

  it('warns about settings Gemini has no equivalent for', () => {
    const { warnings } = convert({ messages: [{ role: 'user', content: 'x' }], user: 'u1', logprobs: true });
    assert.deepEqual(
      warnings.map((w) => w.param),
      ['logprobs', 'user'],
    );
  });
});
