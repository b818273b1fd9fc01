// What OpenAI chat pass-through reads from the events it forwards unparsed: finish reason, model, usage
// (the one parsed event), errors and framing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { convertOpenAIUsage } from '../../../../src/gateway/wire/openai-chat/convert-openai-usage.ts';
import { OpenAIChatPassThrough } from '../../../../src/gateway/wire/openai-chat/pass-openai-chat-events.ts';
import { SseEventSplitter } from '../../../../src/gateway/wire/split-sse-events.ts';
import { readFixture } from '../../helpers/replay-fixture.ts';

const block = (data: string | undefined) => ({ text: data === undefined ? ': c\n\n' : `data: ${data}\n\n`, event: undefined, data });
const chunk = (delta: string, finish = 'null', model = 'gpt-4.1-2025-04-14') =>
  `{"id":"c","object":"chat.completion.chunk","model": "${model}","choices":[{"index":0,"delta":${delta},"finish_reason": ${finish}}],"usage":null}`;
const usage = '{"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}';

describe('OpenAIChatPassThrough', () => {
  it('forwards content events unparsed and reads model, finish reason and usage from their text', () => {
    const pass = new OpenAIChatPassThrough(false, convertOpenAIUsage);
    assert.equal(pass.read(block(undefined)).kind, 'forward');
    assert.equal(pass.read(block(chunk('{"content":"a \\"finish_reason\\":\\"x\\""}'))).kind, 'forward');
    assert.equal(pass.read(block(chunk('{}', '"length"'))).kind, 'forward');
    assert.equal(pass.read(block(usage)).kind, 'drop');
    assert.equal(pass.read(block('[DONE]')).kind, 'done');
    assert.deepEqual([pass.chunks, pass.model, pass.finishReason, pass.rawFinishReason], [2, 'gpt-4.1-2025-04-14', 'length', 'length']);
    assert.deepEqual([pass.usage?.promptTokens, pass.usage?.completionTokens], [9, 2]);
  });

  it('forwards the usage chunk under include_usage; a chunk with choices and usage loses the usage otherwise', () => {
    assert.equal(new OpenAIChatPassThrough(true, convertOpenAIUsage).read(block(usage)).kind, 'forward');
    const both = '{"id":"c","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
    const decision = new OpenAIChatPassThrough(false, convertOpenAIUsage).read(block(both));
    assert.equal(decision.kind, 'replace');
    if (decision.kind === 'replace') assert.equal(decision.text, 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\n');
  });

  it('refuses an error object and anything that is not a JSON object', () => {
    const pass = new OpenAIChatPassThrough(false, convertOpenAIUsage);
    assert.equal(pass.read(block('{"error": {"message": "overloaded"}}')).kind, 'error');
    assert.equal(pass.read(block('not json')).kind, 'malformed');
    assert.equal(pass.read(block('{"error":{"message":"cut')).kind, 'malformed');
    assert.equal(pass.read(block('{"usage":{"prompt_tokens":1}')).kind, 'malformed');
  });
});

describe('OpenAIChatPassThrough on recorded streams', () => {
  it('forwards every recorded event before [DONE] as sent under include_usage, and reads finish and usage', () => {
    const cases = [
      ['chat-text.sse', 'stop', 9, 2],
      ['chat-tool-calls.sse', 'tool_calls', 82, 45],
      ['chat-reasoning.sse', 'stop', 14, 40],
    ] as const;
    for (const [file, finish, prompt, completion] of cases) {
      const text = readFixture('openai', file).text;
      const pass = new OpenAIChatPassThrough(true, convertOpenAIUsage);
      const splitter = new SseEventSplitter();
      let forwarded = '';
      let done = false;
      for (const piece of [text.slice(0, 50), text.slice(50)]) {
        for (const event of splitter.feed(piece)) {
          const decision = pass.read(event);
          if (decision.kind === 'forward') forwarded += event.text;
          else if (decision.kind === 'done') done = true;
          else assert.fail(`${file}: ${decision.kind}`);
        }
      }
      assert.ok(done, file);
      assert.equal(forwarded, text.replace('data: [DONE]\n\n', ''), file);
      assert.deepEqual([pass.finishReason, pass.usage?.promptTokens, pass.usage?.completionTokens], [finish, prompt, completion], file);
    }
  });
});
