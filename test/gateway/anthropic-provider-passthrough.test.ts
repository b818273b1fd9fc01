// The Anthropic provider passing an Anthropic client's body and the upstream's bytes through: what goes up,
// the raw pieces that come back (whole events at any cut of the upstream's text, message_stop on its own),
// and the failures that must still reach the retry loop as UpstreamErrors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { createAnthropicProvider, convertPassThroughBody } from '../../src/gateway/providers/anthropic/anthropic-provider.ts';
import type { Provider, ProviderStreamEvent } from '../../src/gateway/providers/provider.ts';
import { UpstreamError } from '../../src/gateway/protocol/upstream-error.ts';
import { readUpstreamBytes, renameModel } from '../../src/gateway/protocol/upstream-bytes.ts';
import { collect, startMockUpstream, type MockUpstream } from './helpers/mock-upstream.ts';

const MODEL = 'claude-sonnet-4-5-20250929';
const request: ChatRequest = { model: 'claude-sonnet-4.5', messages: [{ role: 'user', content: 'hi' }], max_tokens: 64 };
const body = {
  model: 'claude-sonnet-4.5',
  max_tokens: 64,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  messages: [{ role: 'user', content: 'hi' }],
  service_tier: 'auto',
};
const MESSAGE = `{"id":"msg_1","type":"message","role":"assistant","model":"${MODEL}","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1,"server_tool_use":{"web_search_requests":2}},"extra":1}`;
const event = (name: string, data: string) => `event: ${name}\ndata: ${data}\n\n`;
const STREAM =
  event(
    'message_start',
    `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"${MODEL}","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`,
  ) +
  event('ping', '{"type":"ping"}') +
  event('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}') +
  event('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}') +
  event('content_block_stop', '{"type":"content_block_stop","index":0}') +
  event('message_delta', '{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":7}}');
const STOP = event('message_stop', '{"type":"message_stop"}');

type Raw = Extract<ProviderStreamEvent, { type: 'raw' }>;
const raws = (events: ProviderStreamEvent[]) => events.filter((e): e is Raw => e.type === 'raw');

describe('anthropic provider pass-through', () => {
  let upstream: MockUpstream;
  let provider: Provider;
  const signal = new AbortController().signal;
  const passThrough = { dialect: 'anthropic-messages' as const, body };
  /** The upstream's SSE text, written in two parts cut at `cut`. */
  let sse = { text: STREAM + STOP, cut: -1 };

  before(async () => {
    upstream = await startMockUpstream((req, res) => {
      if ((req.body as { stream?: boolean }).stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(MESSAGE);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (sse.cut < 0) {
        res.end(sse.text);
        return;
      }
      res.write(sse.text.slice(0, sse.cut));
      setTimeout(() => res.end(sse.text.slice(sse.cut)), 2);
    });
    provider = createAnthropicProvider({ name: 'anthropic', baseUrl: upstream.url, apiKey: 'sk-ant-test', timeoutMs: 2000 });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('sends the client body with the upstream model and attaches the JSON answer in its dialect', async () => {
    const result = await provider.chat({ request, upstreamModel: MODEL, passThrough }, signal);
    assert.deepEqual(upstream.requests.at(-1)?.body, { ...body, model: MODEL });
    assert.equal(readUpstreamBytes(result.response, 'anthropic-messages'), MESSAGE);
    assert.equal(readUpstreamBytes(result.response, 'openai-chat'), undefined, 'an OpenAI chat client never sees these bytes');
    assert.equal(result.response.choices[0]?.message.content, 'Hi');
    assert.deepEqual([result.usage.promptTokens, result.usage.completionTokens], [3, 1]);
    assert.deepEqual((result.usage.raw as { server_tool_use?: unknown }).server_tool_use, { web_search_requests: 2 });
    // The flow renames the model in the object and the bytes: Anthropic's top-level model follows id, type and role.
    renameModel(result.response, 'claude-sonnet-4.5');
    assert.equal(readUpstreamBytes(result.response, 'anthropic-messages'), MESSAGE.replace(`"model":"${MODEL}"`, '"model":"claude-sonnet-4.5"'));
  });

  it('translates as before without a body, or for a client of another dialect', async () => {
    await provider.chat({ request, upstreamModel: MODEL, passThrough: { dialect: 'anthropic-messages' } }, signal);
    assert.equal((upstream.requests.at(-1)?.body as { service_tier?: string } | undefined)?.service_tier, undefined);
    const result = await provider.chat({ request, upstreamModel: MODEL, passThrough: { dialect: 'openai-chat' } }, signal);
    assert.equal(readUpstreamBytes(result.response, 'anthropic-messages'), undefined);
    const events = await collect(provider.stream({ request, upstreamModel: MODEL, passThrough: { dialect: 'openai-chat' } }, signal));
    assert.equal(raws(events).length, 0);
    assert.ok(events.some((e) => e.type === 'chunk'));
  });

  it('streams the upstream events as raw pieces, message_stop alone and last, at any cut of the text', async () => {
    const text = STREAM + STOP;
    for (const cut of [-1, 1, 20, 60, STREAM.indexOf('content_block_start'), STREAM.length - 3, STREAM.length + 5, text.length - 1]) {
      sse = { text, cut };
      const events = await collect(provider.stream({ request: { ...request, stream: true }, upstreamModel: MODEL, passThrough }, signal));
      assert.deepEqual(upstream.requests.at(-1)?.body, { ...body, model: MODEL, stream: true });
      const pieces = raws(events);
      assert.equal(pieces.map((p) => p.text).join(''), text, `cut ${cut}`);
      assert.deepEqual(pieces.at(-1), { type: 'raw', text: STOP, dialect: 'anthropic-messages', chunks: 0, model: MODEL }, `cut ${cut}`);
      assert.equal(
        pieces.reduce((n, p) => n + p.chunks, 0),
        3,
        `cut ${cut}`,
      );
      assert.ok(!events.some((e) => e.type === 'chunk'));
      const usage = events.find((e) => e.type === 'usage');
      assert.ok(usage?.type === 'usage' && usage.usage.promptTokens === 3 && usage.usage.completionTokens === 7 && usage.delivered === true);
      assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'length', rawFinishReason: 'max_tokens' });
    }
  });

  it('estimates the usage from the forwarded pieces when the upstream sent none, and still ends usage then done', async () => {
    sse = { text: (STREAM + STOP).replace(',"usage":{"input_tokens":3,"output_tokens":1}', '').replace(',"usage":{"output_tokens":7}', ''), cut: -1 };
    const events = await collect(provider.stream({ request: { ...request, stream: true }, upstreamModel: MODEL, passThrough }, signal));
    assert.deepEqual(
      events.slice(-2).map((e) => e.type),
      ['usage', 'done'],
    );
    const usage = events.at(-2);
    assert.ok(usage?.type === 'usage' && usage.usage.estimated && usage.usage.completionTokens > 0 && usage.delivered === true);
  });

  it('an error event, a stream without message_stop and garbage are UpstreamErrors', async () => {
    const cases: Array<[string, RegExp, string]> = [
      [
        event('message_start', `{"type":"message_start","message":{"model":"${MODEL}"}}`) +
          event('error', '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
        /upstream stream error overloaded_error: Overloaded/,
        'unavailable',
      ],
      [STREAM, /stream ended before message_stop/, 'interrupted'],
      [event('message_start', '{"type":"message_start","message":{'), /SSE event is not a JSON object/, 'malformed'],
      [event('message_start', '{"type":"message_start",,}'), /malformed JSON in SSE event/, 'malformed'],
    ];
    for (const [text, message, failure] of cases) {
      sse = { text, cut: -1 };
      await assert.rejects(collect(provider.stream({ request: { ...request, stream: true }, upstreamModel: MODEL, passThrough }, signal)), (err: unknown) => {
        assert.ok(err instanceof UpstreamError);
        assert.match(err.message, message);
        assert.equal(err.failure, failure);
        return true;
      });
    }
  });

  it('changes only model and, where the call differs, stream', () => {
    assert.deepEqual(Object.keys(convertPassThroughBody({ a: 1, model: 'x', b: 2 }, 'y', false)), ['a', 'model', 'b']);
    assert.deepEqual(convertPassThroughBody({ model: 'x' }, 'y', false), { model: 'y' });
    assert.deepEqual(convertPassThroughBody({ model: 'x', stream: true }, 'y', false), { model: 'y', stream: false });
    assert.deepEqual(convertPassThroughBody({ model: 'x', stream: false }, 'y', true), { model: 'y', stream: true });
  });
});
