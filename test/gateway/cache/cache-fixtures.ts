// Answers to cache in tests: plain text, tool calls, several choices, about 2 KB when asked.
import type { ChatResponse, Usage } from '../../../src/gateway/protocol/chat-types.ts';
import type { CachedAnswerInput } from '../../../src/gateway/cache/cached-answer.ts';

export const USAGE: Usage = {
  promptTokens: 12,
  cachedPromptTokens: 4,
  cacheWriteTokens: 0,
  completionTokens: 30,
  reasoningTokens: 0,
  estimated: false,
  raw: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 },
};

export function textResponse(text = 'Hello there.', model = 'gpt-4.1'): ChatResponse {
  return {
    id: 'chatcmpl-original',
    object: 'chat.completion',
    created: 1741569952,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42, prompt_tokens_details: { cached_tokens: 4 } },
    system_fingerprint: 'fp_test',
  };
}

export function toolCallResponse(): ChatResponse {
  return {
    id: 'chatcmpl-tools',
    object: 'chat.completion',
    created: 1741569952,
    model: 'gpt-4.1',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
          ],
        },
      },
    ],
    usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 },
  };
}

/** Two choices, reasoning text, and logprobs on the second. */
export function richResponse(): ChatResponse {
  return {
    id: 'chatcmpl-rich',
    object: 'chat.completion',
    created: 1741569952,
    model: 'gpt-4.1',
    choices: [
      { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'First answer, with "quotes" and ünïcode ✓.', reasoning_content: 'Thinking first.' } },
      {
        index: 1,
        finish_reason: 'stop',
        message: { role: 'assistant', content: 'Second.' },
        logprobs: {
          content: [
            { token: 'Second', logprob: -0.1, bytes: [83], top_logprobs: [] },
            { token: '.', logprob: -0.01, bytes: [46], top_logprobs: [] },
          ],
          refusal: null,
        },
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 },
  };
}

/** A typical answer of about 2 KB of JSON. */
export function twoKilobyteResponse(): ChatResponse {
  const sentence = 'The quick brown fox jumps over the lazy dog while the cache answers in microseconds. ';
  return textResponse(sentence.repeat(20).trim());
}

export function answerInput(response: ChatResponse = textResponse(), costMicros = 1234): CachedAnswerInput {
  return { response, usage: USAGE, provider: 'holysheep', upstreamModel: 'gpt-4.1', costMicros };
}
