// Replaying a cached answer: a fresh id for non-streaming hits, and a chunk sequence that the
// openai SDK (over real SSE) and Herd's own assembler both put back together into the same answer.
import { canonicalChunk } from '../../../src/gateway/protocol/raw-sse.ts';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import OpenAI from 'openai';
import type { ChatChunk, ChatResponse } from '../../../src/gateway/protocol/chat-types.ts';
import { ChatResponseAssembler } from '../../../src/gateway/cache/assemble-chat-response.ts';
import { encodeCachedAnswer, type CachedAnswer } from '../../../src/gateway/cache/cached-answer.ts';
import { convertCachedToResponse, createCachedStream, createCacheHitMeta, replayCachedChunks } from '../../../src/gateway/cache/replay-cached-answer.ts';
import { tapStreamForCache } from '../../../src/gateway/cache/tap-stream-for-cache.ts';
import { answerInput, richResponse, textResponse, toolCallResponse, USAGE } from './cache-fixtures.ts';
import type { StreamRelay, StreamResult } from '../../../src/gateway/protocol/stream-relay-types.ts';

const cached = (response: ChatResponse): Readonly<CachedAnswer> => encodeCachedAnswer(answerInput(response), Date.now(), 60_000).answer;

describe('non-streaming hit', () => {
  it('is the original body with a fresh id and created, the cached entry untouched', () => {
    const answer = cached(textResponse());
    const response = convertCachedToResponse(answer);
    assert.match(response.id, /^chatcmpl-[0-9a-f]{24}$/);
    assert.notEqual(response.id, 'chatcmpl-original');
    assert.ok(Math.abs(response.created - Date.now() / 1000) < 5);
    const { id: _a, created: _b, ...rest } = response;
    const { id: _c, created: _d, ...original } = answer.response;
    assert.deepEqual(rest, original);
    assert.equal(answer.response.id, 'chatcmpl-original');
    assert.deepEqual(convertCachedToResponse(answer, { id: 'chatcmpl-x', created: 5 }).id, 'chatcmpl-x');
  });

  it('gets the meta chat.complete would give, with no attempts and no upstream time', () => {
    const meta = createCacheHitMeta(cached(textResponse()), { requestedModel: 'gpt4', route: 'alias', routeRule: 'alias:gpt4', overheadMs: 0.2 });
    assert.deepEqual(
      {
        model: meta.model,
        provider: meta.provider,
        upstreamModel: meta.upstreamModel,
        attempts: meta.attempts.length,
        upstreamMs: meta.upstreamMs,
        finish: meta.rawFinishReason,
        route: meta.route,
      },
      { model: 'gpt-4.1', provider: 'holysheep', upstreamModel: 'gpt-4.1', attempts: 0, upstreamMs: 0, finish: 'stop', route: 'alias' },
    );
    assert.deepEqual(meta.usage, USAGE);
  });
});

describe('streaming hit: the chunk sequence', () => {
  it('is role, content, finish, then the usage chunk under include_usage — one id throughout', () => {
    const chunks = replayCachedChunks(cached(textResponse('Hi!')), { includeUsage: true, id: 'chatcmpl-r', created: 9 });
    assert.deepEqual(
      chunks.map((c) => [c.choices[0]?.delta ?? null, c.choices[0]?.finish_reason ?? null, c.usage]),
      [
        [{ role: 'assistant', content: '' }, null, null],
        [{ content: 'Hi!' }, null, null],
        [{}, 'stop', null],
        [null, null, { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42, prompt_tokens_details: { cached_tokens: 4 } }],
      ],
    );
    for (const chunk of chunks) {
      assert.deepEqual([chunk.id, chunk.object, chunk.created, chunk.model, chunk.system_fingerprint], ['chatcmpl-r', 'chat.completion.chunk', 9, 'gpt-4.1', 'fp_test']);
    }
  });

  it('has no usage fields at all without include_usage', () => {
    const chunks = replayCachedChunks(cached(textResponse()), { includeUsage: false });
    assert.equal(chunks.length, 3);
    assert.ok(chunks.every((c) => !('usage' in c)));
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
  });

  it('sends each tool call as one delta with its index, id, name and whole arguments', () => {
    const chunks = replayCachedChunks(cached(toolCallResponse()), { includeUsage: false });
    assert.deepEqual(
      chunks.map((c) => c.choices[0]?.delta),
      [
        { role: 'assistant', content: null },
        { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } }] },
        {},
      ],
    );
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'tool_calls');
  });

  it('streams as a StreamRelay whose result is completed with the cached usage', async () => {
    const relay = createCachedStream(cached(textResponse('abc')), { includeUsage: true });
    const seen: ChatChunk[] = [];
    for await (const chunk of relay.chunks) seen.push(canonicalChunk(chunk));
    assert.equal(seen.length, 4);
    const result = await relay.result;
    assert.deepEqual([result.outcome, result.chunks, result.finishReason], ['completed', 3, 'stop']);
    assert.deepEqual(result.usage, USAGE);
  });

  it('settles as cancelled when the client stops reading', async () => {
    const relay = createCachedStream(cached(textResponse('abc')), { includeUsage: false });
    for await (const _chunk of relay.chunks) break;
    assert.equal((await relay.result).outcome, 'cancelled');
    const cancelled = createCachedStream(cached(textResponse('abc')), { includeUsage: false });
    cancelled.cancel();
    assert.equal((await cancelled.result).outcome, 'cancelled');
  });
});

describe('streaming hit: reassembled by the openai SDK over SSE', () => {
  let server: Server;
  let client: OpenAI;
  let nextChunks: ChatChunk[] = [];

  before(async () => {
    // Written the way src/http/openai-routes.ts writes a live stream.
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      for (const chunk of nextChunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address !== null && typeof address === 'object');
    client = new OpenAI({ baseURL: `http://127.0.0.1:${address.port}/v1`, apiKey: 'test', maxRetries: 0 });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const CASES: Array<[string, () => ChatResponse]> = [
    ['plain text', () => textResponse('Hello, "world" — ünïcode ✓\nsecond line')],
    ['tool calls', toolCallResponse],
    ['two choices with reasoning and logprobs', richResponse],
  ];
  for (const [name, make] of CASES) {
    it(`gives back the same message for ${name}`, async () => {
      const original = make();
      nextChunks = replayCachedChunks(cached(original), { includeUsage: true });
      const stream = client.chat.completions.stream({ model: 'gpt4', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } });
      const final = await stream.finalChatCompletion();
      assert.equal(final.model, original.model);
      assert.deepEqual(final.usage, original.usage);
      assert.equal(final.choices.length, original.choices.length);
      for (const [i, want] of original.choices.entries()) {
        const got = final.choices[i]!;
        assert.equal(got.index, want.index);
        assert.equal(got.finish_reason, want.finish_reason);
        assert.equal(got.message.content ?? null, want.message.content === '' ? null : want.message.content);
        assert.deepEqual(got.message.tool_calls ?? [], want.message.tool_calls ?? []);
        assert.equal((got.message as { reasoning_content?: string }).reasoning_content, want.message.reasoning_content);
        assert.deepEqual(got.logprobs ?? null, want.logprobs ?? null);
      }
    });
  }
});

describe('assembling a stream back into a chat.completion (how streamed misses get stored)', () => {
  for (const [name, make] of [
    ['text', () => textResponse()],
    ['tool calls', toolCallResponse],
    ['two choices', richResponse],
  ] as const) {
    it(`round-trips ${name}: replay then assemble gives the cached body`, () => {
      const original = make();
      const assembler = new ChatResponseAssembler();
      for (const chunk of replayCachedChunks(cached(original), { includeUsage: true, id: original.id, created: original.created })) assembler.add(chunk);
      const rebuilt = assembler.build();
      assert.ok(!(rebuilt instanceof Error), String(rebuilt));
      assert.deepEqual(normalize(rebuilt), normalize(original));
    });
  }

  it('merges split deltas by index as live upstreams send them', () => {
    const assembler = new ChatResponseAssembler();
    const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: 'tool_calls' | null = null): ChatChunk => ({
      id: 'chatcmpl-live',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4.1',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    assembler.add(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }));
    assembler.add(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }));
    assembler.add(chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } }] }));
    assembler.add(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }));
    assembler.add(chunk({}, 'tool_calls'));
    const built = assembler.build();
    assert.ok(!(built instanceof Error));
    assert.deepEqual(built.choices[0]?.message.tool_calls, [
      { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
      { id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } },
    ]);
  });

  it('merges a custom (freeform) tool call from its input pieces', () => {
    const assembler = new ChatResponseAssembler();
    const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: 'tool_calls' | null = null): ChatChunk => ({
      id: 'chatcmpl-live',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-5',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    assembler.add(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '' } }] }));
    assembler.add(chunk({ tool_calls: [{ index: 0, custom: { input: '*** Begin' } }] }));
    assembler.add(chunk({ tool_calls: [{ index: 0, custom: { input: ' Patch' } }] }));
    assembler.add(chunk({}, 'tool_calls'));
    const built = assembler.build();
    assert.ok(!(built instanceof Error));
    assert.deepEqual(built.choices[0]?.message.tool_calls, [{ id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } }]);
  });

  it('refuses to build what a stream never completed', () => {
    assert.match(String(new ChatResponseAssembler().build()), /no choice/);
    const assembler = new ChatResponseAssembler();
    assembler.add({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, finish_reason: null }],
    });
    assert.match(String(assembler.build()), /never got a role/);
  });

  it('tapStreamForCache assembles the whole answer only when the stream completed', async () => {
    const original = textResponse('streamed');
    const relay = fakeRelay(replayCachedChunks(cached(original), { includeUsage: false, id: 'chatcmpl-s', created: 3 }), 'completed');
    const tapped = tapStreamForCache(relay.relay);
    const forwarded: ChatChunk[] = [];
    for await (const chunk of tapped.relay.chunks) forwarded.push(canonicalChunk(chunk));
    relay.finish();
    const stored = tapped.assemble(await tapped.relay.result);
    assert.equal(forwarded.length, 3);
    assert.equal(stored?.response.choices[0]?.message.content, 'streamed');
    assert.deepEqual(stored?.response.usage, {
      prompt_tokens: 12,
      completion_tokens: 30,
      total_tokens: 42,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });

    const cancelled = fakeRelay(replayCachedChunks(cached(original), { includeUsage: false }), 'cancelled');
    const tappedCancelled = tapStreamForCache(cancelled.relay);
    for await (const _chunk of tappedCancelled.relay.chunks) break;
    cancelled.finish();
    assert.equal(tappedCancelled.assemble(await tappedCancelled.relay.result), undefined);
  });
});

/** Drops what the round trip legitimately changes: null vs absent refusal, and '' vs null content. */
function normalize(response: ChatResponse): unknown {
  const copy = JSON.parse(JSON.stringify(response)) as ChatResponse;
  for (const choice of copy.choices) {
    if (choice.message.refusal === null) delete choice.message.refusal;
    if (choice.message.content === '' && choice.message.tool_calls) choice.message.content = null;
  }
  return copy;
}

function fakeRelay(chunks: ChatChunk[], outcome: StreamResult['outcome']): { relay: StreamRelay; finish: () => void } {
  let settle!: (r: StreamResult) => void;
  const result = new Promise<StreamResult>((resolve) => {
    settle = resolve;
  });
  async function* gen() {
    yield* chunks;
  }
  return {
    relay: { chunks: gen(), cancel: () => undefined, result },
    finish: () => settle({ outcome, usage: USAGE, finishReason: 'stop', rawFinishReason: 'stop', chunks: chunks.length, streamMs: 1 }),
  };
}
