// The legacy completions codec: the prompt as one user message, chat's checks on the shared params,
// the legacy-only ones recorded (refused when bridged), and text_completion objects out.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../../src/core/errors.ts';
import type { ChatChunk, Usage } from '../../../../src/gateway/protocol/chat-types.ts';
import { completionsCodec, decodeCompletionsRequest, encodeCompletionsResponse } from '../../../../src/gateway/ingress/openai-completions/completions-codec.ts';

const usage: Usage = { promptTokens: 4, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 2, reasoningTokens: 0, estimated: false, raw: {} };

function refuses(body: unknown, code: 'INVALID_ARG', param: string): void {
  assert.throws(
    () => decodeCompletionsRequest(body),
    (err: unknown) => err instanceof HerdError && err.code === code && err.param === param,
  );
}

describe('completions codec', () => {
  it('decodes a prompt (string or one-string array) and chat-named params; include_usage stays with the codec', () => {
    const { request, decoded } = decodeCompletionsRequest({
      model: 'm',
      prompt: ['Say hi'],
      max_tokens: 5,
      stop: '\n',
      stream: true,
      stream_options: { include_usage: true },
      echo: false,
      best_of: 1,
    });
    assert.deepEqual(request, { model: 'm', messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 5, stop: '\n', stream: true });
    assert.deepEqual(decoded, { includeUsage: true });
  });

  it('records what a chat bridge cannot do (refused when bridged) and chat-only or unknown params (dropped) instead of throwing', () => {
    const fates = (body: Record<string, unknown>) => decodeCompletionsRequest({ model: 'm', prompt: 'x', ...body }).request.unmodeled?.map((f) => [f.param, f.bridged]);
    assert.deepEqual(fates({ prompt: ['a', 'b'] }), [['prompt', 'refuse']]);
    assert.deepEqual(fates({ prompt: [1, 2, 3] }), [['prompt', 'refuse']]);
    assert.deepEqual(fates({ echo: true }), [['echo', 'refuse']]);
    assert.deepEqual(fates({ best_of: 3 }), [['best_of', 'refuse']]);
    assert.deepEqual(fates({ suffix: 'end' }), [['suffix', 'refuse']]);
    assert.deepEqual(fates({ logprobs: 2 }), [['logprobs', 'refuse']]);
    assert.deepEqual(fates({ tools: [], x_new: { a: 1 }, stream: true, stream_options: { include_usage: true, x: 1 } }), [
      ['tools', 'drop'],
      ['x_new', 'drop'],
      ['stream_options.x', 'drop'],
    ]);
    assert.equal(fates({ echo: false, best_of: 1, suffix: null }), undefined);
    assert.deepEqual(decodeCompletionsRequest({ model: 'm', prompt: ['a', 'b'] }).request.messages, [{ role: 'user', content: 'a\nb' }]);
  });

  it('refuses bad values of what it models', () => {
    refuses({ model: 'm' }, 'INVALID_ARG', 'prompt');
    refuses({ model: 'm', prompt: 'x', temperature: 9 }, 'INVALID_ARG', 'temperature');
  });

  it('encodes text_completion objects and chunks, usage and [DONE] last', () => {
    const json = encodeCompletionsResponse(
      {
        id: 'chatcmpl-abc',
        object: 'chat.completion',
        created: 3,
        model: 'pm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'tool_calls' }],
      },
      usage,
    );
    assert.deepEqual(json, {
      id: 'cmpl-abc',
      object: 'text_completion',
      created: 3,
      model: 'pm',
      choices: [{ text: 'Hi', index: 0, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
    const encoder = completionsCodec.createStreamEncoder({ includeUsage: true }, { model: 'pm' });
    const c = (content: string | undefined, finish: 'stop' | null): ChatChunk => ({
      id: 'chatcmpl-abc',
      object: 'chat.completion.chunk',
      created: 3,
      model: 'pm',
      choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish }],
    });
    const events = [...encoder.start(), ...encoder.chunk(c('', null)), ...encoder.chunk(c('Hi', null)), ...encoder.chunk(c(undefined, 'stop')), ...encoder.end(usage)];
    assert.deepEqual(
      events.map((e) => e.data),
      [
        { id: 'cmpl-abc', object: 'text_completion', created: 3, model: 'pm', choices: [{ text: 'Hi', index: 0, logprobs: null, finish_reason: null }] },
        { id: 'cmpl-abc', object: 'text_completion', created: 3, model: 'pm', choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }] },
        { id: 'cmpl-abc', object: 'text_completion', created: 3, model: 'pm', choices: [], usage: json.usage },
        '[DONE]',
      ],
    );
    assert.deepEqual(encoder.fail({ message: 'm', type: 'server_error', code: null, param: null }), [
      { data: { error: { message: 'm', type: 'server_error', code: null, param: null } } },
    ]);
  });
});
