// Fuzz targets for each provider's stream parser (OpenAI, Anthropic, Gemini SSE; the pass-through readers of OpenAI chat, Anthropic and Responses): a local upstream
// answers 200 text/event-stream with a mutated real transcript, cut into random pieces. Invariant: the
// stream ends (no hang), either with the contract's usage + done, or by throwing an UpstreamError.
import fc from 'fast-check';
import { LightAbortController } from '../../src/core/abort-link.ts';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { createAnthropicProvider } from '../../src/gateway/providers/anthropic/anthropic-provider.ts';
import { createGeminiProvider } from '../../src/gateway/providers/gemini/gemini-provider.ts';
import { createOpenAIProvider } from '../../src/gateway/providers/openai/openai-provider.ts';
import type { PassThrough, Provider } from '../../src/gateway/providers/provider.ts';
import type { ProviderOptions } from '../../src/gateway/providers/provider-options.ts';
import { UpstreamError } from '../../src/gateway/protocol/upstream-error.ts';
import { openAIStreamFrames } from '../gateway/helpers/gateway-fixtures.ts';
import { encodeSse, startMockUpstream, type SseFrame } from '../gateway/helpers/mock-upstream.ts';
import { describeThrown, type FuzzTarget } from './fuzz-target.ts';
import { fuzzBytes } from './mutate-bytes.ts';

const anthropic = (data: { type: string } & Record<string, unknown>): SseFrame => ({ event: data.type, data });

/** Transcripts in each wire format, as the live APIs send them (text, tool calls, usage, errors). */
const responses = (data: { type: string } & Record<string, unknown>): SseFrame => ({ event: data.type, data });
const RESPONSE_HEAD = { id: 'resp_1', object: 'response', created_at: 1, model: 'gpt-5' };

export const SSE_TRANSCRIPTS: Record<'openai' | 'anthropic' | 'gemini' | 'responses', string[]> = {
  openai: [
    encodeSse([...openAIStreamFrames('gpt-4.1', ['Bon', 'jour', ' 🙂']), { data: '[DONE]' }]),
    encodeSse(
      [
        {
          data: {
            id: 'c1',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            choices: [
              { index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null },
            ],
          },
        },
        {
          data: {
            id: 'c1',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' }],
          },
        },
        { comment: 'keep-alive' },
        {
          data: {
            id: 'c1',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            choices: [],
            usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 1 } },
          },
        },
        { data: '[DONE]' },
      ],
      '\r\n',
    ),
    encodeSse([{ data: { error: { message: 'overloaded', type: 'server_error', code: 'overloaded' } } }]),
  ],
  anthropic: [
    encodeSse([
      anthropic({
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          usage: { input_tokens: 12, cache_read_input_tokens: 3, output_tokens: 1 },
        },
      }),
      anthropic({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      anthropic({ type: 'ping' }),
      anthropic({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } }),
      anthropic({ type: 'content_block_stop', index: 0 }),
      anthropic({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } }),
      anthropic({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' } }),
      anthropic({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'ris"}' } }),
      anthropic({ type: 'content_block_stop', index: 1 }),
      anthropic({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 89 } }),
      anthropic({ type: 'message_stop' }),
    ]),
    encodeSse([
      anthropic({ type: 'message_start', message: { id: 'msg_2', model: 'claude', usage: { input_tokens: 1 } } }),
      anthropic({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ]),
  ],
  responses: [
    encodeSse([
      responses({ type: 'response.created', sequence_number: 0, response: { ...RESPONSE_HEAD, status: 'in_progress', output: [], usage: null } }),
      responses({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } }),
      responses({ type: 'response.output_text.delta', sequence_number: 2, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Bon', obfuscation: 'x' }),
      responses({ type: 'response.output_text.delta', sequence_number: 3, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'jour' }),
      responses({
        type: 'response.output_item.done',
        sequence_number: 4,
        output_index: 1,
        item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' },
      }),
      responses({
        type: 'response.completed',
        sequence_number: 5,
        response: {
          ...RESPONSE_HEAD,
          status: 'completed',
          output: [],
          usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 1 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 13 },
        },
      }),
    ]),
    encodeSse([
      responses({ type: 'response.created', sequence_number: 0, response: { ...RESPONSE_HEAD, status: 'in_progress', output: [] } }),
      responses({ type: 'error', sequence_number: 1, code: 'server_error', message: 'The model broke.', param: null }),
    ]),
  ],
  gemini: [
    encodeSse(
      [
        {
          data: {
            candidates: [{ content: { parts: [{ text: 'There are **3**' }], role: 'model' }, index: 0 }],
            usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 },
            modelVersion: 'gemini-2.5-flash',
            responseId: 'r1',
          },
        },
        {
          data: {
            candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: { a: 1 } } }], role: 'model' }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 23, totalTokenCount: 217, thoughtsTokenCount: 185 },
            modelVersion: 'gemini-2.5-flash',
            responseId: 'r1',
          },
        },
      ],
      '\r\n',
    ),
    encodeSse([{ data: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3 } } }]),
  ],
};

const FACTORIES: Record<keyof typeof SSE_TRANSCRIPTS, (options: ProviderOptions) => Provider> = {
  openai: createOpenAIProvider,
  anthropic: createAnthropicProvider,
  gemini: createGeminiProvider,
  responses: (options) => createOpenAIProvider({ ...options, endpoints: ['responses'] }),
};

const REQUEST: ChatRequest = { model: 'fuzz', messages: [{ role: 'user', content: 'hi' }] };

/** `passThrough`: the provider reads the events for a client of its own dialect (raw pieces) instead of translating them. */
function streamTarget(dialect: keyof typeof SSE_TRANSCRIPTS, passThrough?: PassThrough): FuzzTarget {
  return {
    name: `${dialect} SSE stream${passThrough ? ' (pass-through)' : ''}`,
    async open() {
      let pieces: Buffer[] = [];
      const upstream = await startMockUpstream(async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of pieces) {
          res.write(piece);
          await new Promise((resolve) => setImmediate(resolve));
        }
        res.end();
      });
      const provider = FACTORIES[dialect]({ name: dialect, baseUrl: upstream.url, apiKey: 'sk-fuzz', timeoutMs: 3000 });
      const arbitrary = fc.tuple(fuzzBytes(SSE_TRANSCRIPTS[dialect]), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }));
      const check = async (input: unknown) => {
        const [body, cuts] = input as [Buffer, number[]];
        upstream.requests.length = 0;
        const at = [...new Set(cuts.map((c) => Math.floor(c * body.length)))].sort((a, b) => a - b);
        pieces = [0, ...at].map((from, i) => body.subarray(from, at[i] ?? body.length)).filter((p) => p.length > 0);
        const events: string[] = [];
        try {
          for await (const event of provider.stream({ request: REQUEST, upstreamModel: 'fuzz', passThrough }, new LightAbortController().signal)) events.push(event.type);
        } catch (err) {
          if (err instanceof UpstreamError) return;
          throw new Error(`stream threw ${describeThrown(err)} instead of an UpstreamError`, { cause: err });
        }
        // The Provider contract: a stream that ends without error ends with exactly one usage, then done.
        if (events.at(-1) !== 'done' || events.at(-2) !== 'usage' || events.filter((e) => e === 'usage').length !== 1) {
          throw new Error(`stream ended with events ${events.join(',')}`);
        }
      };
      return {
        arbitrary,
        check,
        close: async () => {
          await provider.close();
          await upstream.close();
        },
      };
    },
  };
}

const CLIENT_BODY = { model: 'fuzz', max_tokens: 16, input: 'hi', messages: [{ role: 'user', content: 'hi' }], stream: true };

export const STREAM_TARGETS: (() => FuzzTarget)[] = [
  () => streamTarget('openai'),
  () => streamTarget('openai', { dialect: 'openai-chat' }),
  () => streamTarget('anthropic'),
  () => streamTarget('anthropic', { dialect: 'anthropic-messages', body: CLIENT_BODY }),
  () => streamTarget('responses', { dialect: 'openai-responses', body: CLIENT_BODY }),
  () => streamTarget('gemini'),
];
