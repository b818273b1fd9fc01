// Raw pass-through pieces of Responses and legacy completions streams read back as canonical chunks
// (the usage estimate and the cache's copy), and those answers' JSON read back as chat.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChatResponseAssembler } from '../../../src/gateway/cache/assemble-chat-response.ts';
import { convertCompletionsToChat } from '../../../src/gateway/wire/openai-completions/convert-completions-to-chat.ts';
import { convertResponsesToChat } from '../../../src/gateway/wire/openai-responses/convert-responses-to-chat.ts';
import { parseRawStreamChunks } from '../../../src/gateway/wire/parse-raw-stream-chunks.ts';
import { readFixture, readFixtureJson } from '../helpers/replay-fixture.ts';

const ev = (body: Record<string, unknown>) => `event: ${String(body.type)}\ndata: ${JSON.stringify(body)}\n\n`;

describe('parseRawStreamChunks', () => {
  it('reads a Responses stream: text, reasoning, a function call, the finish from response.completed', () => {
    const texts = [
      ev({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', model: 'm', created_at: 5, status: 'in_progress', output: [] } }) +
        ev({ type: 'response.reasoning_text.delta', sequence_number: 1, output_index: 0, delta: 'think' }),
      ev({ type: 'response.output_text.delta', sequence_number: 2, output_index: 1, delta: 'Bon' }),
      // An event cut across two pieces is still read.
      ev({ type: 'response.output_text.delta', sequence_number: 3, output_index: 1, delta: 'jour' }).slice(0, 30),
      ev({ type: 'response.output_text.delta', sequence_number: 3, output_index: 1, delta: 'jour' }).slice(30) +
        ev({ type: 'response.output_item.added', sequence_number: 4, output_index: 2, item: { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' } }) +
        ev({ type: 'response.function_call_arguments.delta', sequence_number: 5, output_index: 2, delta: '{"a":' }) +
        ev({ type: 'response.function_call_arguments.delta', sequence_number: 6, output_index: 2, delta: '1}' }),
      ev({ type: 'response.completed', sequence_number: 7, response: { id: 'resp_1', model: 'm', status: 'completed', output: [{ type: 'function_call' }] } }),
    ];
    const assembler = new ChatResponseAssembler();
    for (const chunk of parseRawStreamChunks('openai-responses', texts)) assembler.add(chunk);
    const response = assembler.build(undefined);
    assert.ok(!(response instanceof Error));
    const message = response.choices[0]!.message;
    assert.equal(message.content, 'Bonjour');
    assert.equal(message.reasoning_content, 'think');
    assert.deepEqual(message.tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]);
    assert.equal(response.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(response.id, 'resp_1');
  });

  it('reads a completions stream; the usage chunk and [DONE] carry no content', () => {
    const chunk = (text: string, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ text, index: 0, finish_reason: finish }] })}\n\n`;
    const chunks = parseRawStreamChunks('openai-completions', [
      chunk('Bon', null) + chunk('jour', null),
      `${chunk('', 'length')}data: {"id":"cmpl-1","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}\n\ndata: [DONE]\n\n`,
    ]);
    assert.deepEqual(
      chunks.map((c) => [c.choices[0]!.delta.content, c.choices[0]!.finish_reason]),
      [
        ['Bon', null],
        ['jour', null],
        [undefined, 'length'],
      ],
    );
  });
});

describe('parseRawStreamChunks on recorded streams', () => {
  it('reads the recorded Responses and completions streams the same at any cut', () => {
    const cases = [
      ['openai-responses', readFixture('openai', 'responses-text.sse').text, 'Hello there!', 'stop'],
      ['openai-completions', readFixture('openai', 'completions-text.sse').text, '\n\nHello!', 'stop'],
    ] as const;
    for (const [dialect, text, content, finish] of cases) {
      for (const cut of [0, 1, 200, text.length - 3]) {
        const assembler = new ChatResponseAssembler();
        for (const chunk of parseRawStreamChunks(dialect, [text.slice(0, cut), text.slice(cut)])) assembler.add(chunk);
        const response = assembler.build(undefined);
        assert.ok(!(response instanceof Error));
        assert.equal(response.choices[0]!.message.content, content, `${dialect} cut ${cut}`);
        assert.equal(response.choices[0]!.finish_reason, finish, `${dialect} cut ${cut}`);
      }
    }
  });
});

describe('pass-through answers read back as chat', () => {
  it('the recorded Responses and text_completion answers, unknown fields ignored', () => {
    const read = convertResponsesToChat(readFixtureJson('openai', 'responses.json'));
    assert.equal(read?.response.choices[0]?.message.content, 'Hello there!');
    assert.deepEqual([read?.usage?.promptTokens, read?.usage?.completionTokens], [11, 4]);
    const completion = convertCompletionsToChat(readFixtureJson('openai', 'completions.json'));
    assert.equal(completion?.choices[0]?.message.content, '\n\nHello!');
  });

  it('a Responses object: text, refusal, tool calls, incomplete at the token limit, usage', () => {
    const read = convertResponsesToChat({
      id: 'resp_1',
      object: 'response',
      created_at: 7,
      model: 'm',
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [
        {
          type: 'message',
          content: [
            { type: 'output_text', text: 'Hi' },
            { type: 'refusal', refusal: 'no' },
          ],
        },
        { type: 'web_search_call', id: 'ws_1' },
      ],
      usage: { input_tokens: 3, input_tokens_details: { cached_tokens: 1 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 5 },
    });
    assert.equal(read?.response.choices[0]?.message.content, 'Hi');
    assert.equal(read?.response.choices[0]?.message.refusal, 'no');
    assert.equal(read?.response.choices[0]?.finish_reason, 'length');
    assert.equal(read?.rawStatus, 'incomplete');
    assert.deepEqual(
      { ...read?.usage, raw: undefined },
      { promptTokens: 3, cachedPromptTokens: 1, cacheWriteTokens: 0, completionTokens: 2, reasoningTokens: 1, reportedReasoningTokens: 1, estimated: false, raw: undefined },
    );
    assert.equal(convertResponsesToChat({ object: 'chat.completion', choices: [] }), undefined);
  });

  it('a text_completion: each choice text is its message', () => {
    const response = convertCompletionsToChat({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ text: ' hi', index: 0, finish_reason: 'stop' }] });
    assert.equal(response?.choices[0]?.message.content, ' hi');
    assert.equal(response?.choices[0]?.finish_reason, 'stop');
  });
});
