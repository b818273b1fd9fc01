// Byte replay from the cache: which upstream bytes an entry keeps (dialect, mode, variant, identity), how
// they survive the entry's JSON, which hits get them back, and that a replay changes the id and created
// everywhere in them and nothing else.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest, ChatResponse } from '../../../src/gateway/protocol/chat-types.ts';
import { CACHED_ANSWER_VERSION, decodeCachedAnswer, encodeCachedAnswer, OtherVersionEntry, type CachedAnswer } from '../../../src/gateway/cache/cached-answer.ts';
import { captureCachedBytes, selectCachedBytes } from '../../../src/gateway/cache/cached-bytes.ts';
import { describeByteReplay, type ByteReplayTarget } from '../../../src/gateway/cache/describe-byte-replay.ts';
import { convertCachedToResponse, createCachedStream } from '../../../src/gateway/cache/replay-cached-answer.ts';
import { containsJsonString, createIdLike, rewriteAnswerIdentity } from '../../../src/gateway/cache/rewrite-answer-identity.ts';
import { tapStreamForCache } from '../../../src/gateway/cache/tap-stream-for-cache.ts';
import { RawSse, type StreamPiece } from '../../../src/gateway/protocol/raw-sse.ts';
import { readUpstreamBytes } from '../../../src/gateway/protocol/upstream-bytes.ts';
import { answerInput, textResponse, USAGE } from './cache-fixtures.ts';
import type { StreamRelay, StreamResult } from '../../../src/gateway/protocol/stream-relay-types.ts';

const ID = 'chatcmpl-s1';
const CREATED = 1694268190;
const chunk = (delta: string, finish: string | null) =>
  `{"id":"${ID}","object":"chat.completion.chunk","created":${CREATED},"model":"gpt-4.1","service_tier":"default",` +
  `"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}],"usage":null,"obfuscation":"abc"}`;
// Odd framing on purpose (CRLF, no space, a comment); content that quotes the id and the created number.
const EVENTS = [
  `data:${chunk('{"role":"assistant","content":""}', null)}\r\n\r\n: keep-alive\r\n\r\n`,
  `data: ${chunk(`{"content":"the id \\"${ID}\\" at ${CREATED}"}`, null)}\n\n`,
  `data: ${chunk('{}', 'stop')}\n\n`,
];
const STREAMED: ChatResponse = { ...textResponse(`the id "${ID}" at ${CREATED}`), id: ID, created: CREATED };

const request = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], ...extra });
const chatStream = (includeUsage: boolean) => describeByteReplay({ dialect: 'openai-chat' }, request({ stream: true, stream_options: { include_usage: includeUsage } }))!;
const chatJson = describeByteReplay({ dialect: 'openai-chat' }, request())!;

function storedStream(target: ByteReplayTarget = chatStream(false)): Readonly<CachedAnswer> {
  const bytes = captureCachedBytes(STREAMED, { dialect: 'openai-chat', events: EVENTS }, target);
  assert.ok(bytes !== undefined);
  return encodeCachedAnswer({ ...answerInput(STREAMED), bytes }, Date.now(), 60_000).answer;
}

/** The texts with the fresh id and created put back: what must equal the stored texts exactly. */
function restore(texts: readonly string[], id: string, created: number): string[] {
  return texts.map((t) => t.replaceAll(`"id":"${id}"`, `"id":"${ID}"`).replaceAll(`"created":${created}`, `"created":${CREATED}`));
}

describe('rewriting an answer identity inside bytes', () => {
  it('replaces the id wherever it is a whole JSON string and created/created_at of exactly that value', () => {
    const text = `{"id":"resp_1","created_at": 170,"n":170,"created":1700,"item":{"response_id" : "resp_1","note":"say \\"resp_1\\" and \\\\"},"x":"resp_10"}`;
    const out = rewriteAnswerIdentity(text, { id: 'resp_1', created: 170 }, { id: 'resp_2', created: 999 });
    assert.equal(out, `{"id":"resp_2","created_at": 999,"n":170,"created":1700,"item":{"response_id" : "resp_2","note":"say \\"resp_1\\" and \\\\"},"x":"resp_10"}`);
    // A quote after an escaped backslash is a real one: that string is the id.
    assert.equal(containsJsonString('{"a":"x\\\\","b":"resp_1"}', 'resp_1'), true);
    assert.equal(containsJsonString('{"a":"x \\"resp_1"}', 'resp_1'), false);
  });

  it('makes fresh ids shaped like the old one', () => {
    assert.match(createIdLike('chatcmpl-abc'), /^chatcmpl-[0-9a-f]{24}$/);
    assert.match(createIdLike('msg_01XyZ'), /^msg_[0-9a-f]{24}$/);
    assert.match(createIdLike('resp_68af'), /^resp_[0-9a-f]{24}$/);
    assert.match(createIdLike('12345'), /^chatcmpl-[0-9a-f]{24}$/);
    assert.notEqual(createIdLike('msg_1'), createIdLike('msg_1'));
  });
});

describe('which bytes a request may be answered with', () => {
  it('needs pass-through; OpenAI chat streams differ by include_usage and include_obfuscation (absent = true)', () => {
    assert.equal(describeByteReplay(undefined, request()), undefined);
    assert.deepEqual(chatJson, { dialect: 'openai-chat', mode: 'json', variant: '' });
    assert.notEqual(chatStream(true).variant, chatStream(false).variant);
    const obfuscated = (value: boolean | undefined) =>
      describeByteReplay({ dialect: 'openai-chat' }, request({ stream: true, stream_options: value === undefined ? {} : { include_obfuscation: value } }))!.variant;
    assert.equal(obfuscated(undefined), obfuscated(true));
    assert.notEqual(obfuscated(false), obfuscated(true));
  });

  it('another dialect replays only to the same body (model, stream and key order aside), and never without one', () => {
    const body = (extra: Record<string, unknown>) =>
      describeByteReplay({ dialect: 'anthropic-messages', body: { max_tokens: 5, messages: [], ...extra } }, request({ stream: true }));
    assert.equal(describeByteReplay({ dialect: 'openai-responses' }, request()), undefined);
    assert.deepEqual(body({ model: 'a' }), { ...body({ model: 'b', stream: true }), mode: 'stream' });
    assert.equal(describeByteReplay({ dialect: 'anthropic-messages', body: { messages: [], max_tokens: 5 } }, request({ stream: true }))?.variant, body({})?.variant);
    assert.notEqual(body({ metadata: { user_id: 'u' } })?.variant, body({})?.variant);
  });

  it('keeps bytes only in the writer’s dialect and mode, with the answer’s id in them', () => {
    assert.equal(captureCachedBytes(STREAMED, { dialect: 'openai-chat', events: EVENTS }, undefined), undefined);
    assert.equal(captureCachedBytes(STREAMED, { dialect: 'anthropic-messages', events: EVENTS }, chatStream(false)), undefined);
    assert.equal(captureCachedBytes(STREAMED, { dialect: 'openai-chat', events: EVENTS }, chatJson), undefined);
    assert.equal(captureCachedBytes({ ...STREAMED, id: 'chatcmpl-other' }, { dialect: 'openai-chat', events: EVENTS }, chatStream(false)), undefined);
    const noId = { ...STREAMED, id: undefined } as unknown as ChatResponse;
    assert.equal(captureCachedBytes(noId, { dialect: 'openai-chat', text: '{"object":"undefined","x":undefined}' }, chatJson), undefined);
    const json = captureCachedBytes(STREAMED, { dialect: 'openai-chat', text: '{"id":"chatcmpl-s1","object":"chat.completion"}' }, chatJson);
    assert.deepEqual(json, { dialect: 'openai-chat', variant: '', id: ID, mode: 'json', text: '{"id":"chatcmpl-s1","object":"chat.completion"}' });
    const stream = captureCachedBytes(STREAMED, { dialect: 'openai-chat', events: EVENTS }, chatStream(false));
    assert.equal(stream?.created, CREATED);
  });

  it('gives a hit the bytes only for the same dialect, mode and variant', () => {
    const answer = storedStream();
    assert.ok(selectCachedBytes(answer, chatStream(false)));
    assert.equal(selectCachedBytes(answer, chatStream(true)), undefined);
    assert.equal(selectCachedBytes(answer, chatJson), undefined);
    assert.equal(selectCachedBytes(answer, { ...chatStream(false), dialect: 'openai-completions' }), undefined);
    assert.equal(selectCachedBytes(answer, undefined), undefined);
  });
});

describe('the entry with bytes', () => {
  it('round-trips through its JSON (the Redis form), frozen, at version 2', () => {
    const answer = storedStream();
    const decoded = decodeCachedAnswer(JSON.stringify(answer));
    assert.ok(!(decoded instanceof Error), String(decoded));
    assert.deepEqual(decoded.answer, answer);
    assert.equal(decoded.answer.v, CACHED_ANSWER_VERSION);
    assert.equal(CACHED_ANSWER_VERSION, 2);
    assert.ok(Object.isFrozen(decoded.answer.bytes));
    assert.equal(decoded.answer.bytes?.mode === 'stream' && decoded.answer.bytes.events.join(''), EVENTS.join(''));
  });

  it('rejects malformed bytes, and tells an older entry (bytes as a string) from a broken one', () => {
    const entry = JSON.parse(JSON.stringify(storedStream())) as Record<string, unknown> & { bytes: Record<string, unknown> };
    assert.match(String(decodeCachedAnswer(JSON.stringify({ ...entry, bytes: { ...entry.bytes, events: [1] } }))), /bytes: events are not strings/);
    assert.match(String(decodeCachedAnswer(JSON.stringify({ ...entry, bytes: { ...entry.bytes, mode: 'sse' } }))), /bytes: mode "sse"/);
    assert.match(String(decodeCachedAnswer(JSON.stringify({ ...entry, bytes: { ...entry.bytes, id: 5 } }))), /bytes: id is not a string/);
    assert.ok(decodeCachedAnswer(JSON.stringify({ ...entry, v: 1, bytes: '{}' })) instanceof OtherVersionEntry);
  });
});

describe('replaying stored bytes', () => {
  it('a matching stream hit gets the stored text as RawSse, only id and created changed, and completes', async () => {
    const relay = createCachedStream(storedStream(), { includeUsage: false, bytes: chatStream(false), created: 1800000000 });
    const pieces: StreamPiece[] = [];
    for await (const piece of relay.chunks) pieces.push(piece);
    assert.ok(pieces.every((p) => p instanceof RawSse && p.dialect === 'openai-chat'));
    const texts = pieces.map((p) => (p as RawSse).text);
    const id = /"id":"(chatcmpl-[0-9a-f]{24})"/.exec(texts[0]!)?.[1];
    assert.ok(id !== undefined && id !== ID, texts[0]);
    assert.equal(texts.join('').split(`"id":"${id}"`).length - 1, 3, 'every event has the fresh id');
    assert.equal(texts.join('').split('"created":1800000000').length - 1, 3, 'and the fresh created');
    assert.ok(texts[1]!.includes(`the id \\"${ID}\\" at ${CREATED}`), 'text inside the answer is not touched');
    assert.deepEqual(restore(texts, id, 1800000000), EVENTS);
    const result = await relay.result;
    assert.deepEqual([result.outcome, result.finishReason, result.usage], ['completed', 'stop', USAGE]);
  });

  it('two hits never share an id', async () => {
    const first = createCachedStream(storedStream(), { includeUsage: false, bytes: chatStream(false) });
    const second = createCachedStream(storedStream(), { includeUsage: false, bytes: chatStream(false) });
    const idOf = async (relay: StreamRelay) => {
      for await (const piece of relay.chunks) return /"id":"([^"]+)"/.exec((piece as RawSse).text)?.[1];
      return undefined;
    };
    assert.notEqual(await idOf(first), await idOf(second));
  });

  it('another include_usage, another mode or no pass-through gets the canonical replay', async () => {
    for (const bytes of [chatStream(true), undefined]) {
      const relay = createCachedStream(storedStream(), { includeUsage: bytes !== undefined, bytes });
      const pieces: StreamPiece[] = [];
      for await (const piece of relay.chunks) pieces.push(piece);
      assert.ok(pieces.every((p) => !(p instanceof RawSse)));
      assert.equal(pieces.length, bytes === undefined ? 3 : 4, 'role, content, finish (and usage under include_usage)');
    }
    const json = convertCachedToResponse(storedStream(), { bytes: chatJson });
    assert.equal(readUpstreamBytes(json), undefined);
    assert.equal(json.choices[0]?.message.content, STREAMED.choices[0]?.message.content);
  });

  it('a matching JSON hit carries the stored text in its dialect with the fresh id and created', () => {
    const text = `{"id":"${ID}","object":"chat.completion","created":${CREATED},"model":"gpt-4.1","choices":[],"extra":{"id":"${ID}x"}}`;
    const bytes = captureCachedBytes(STREAMED, { dialect: 'openai-chat', text }, chatJson);
    const answer = encodeCachedAnswer({ ...answerInput(STREAMED), bytes }, Date.now(), 60_000).answer;
    const response = convertCachedToResponse(answer, { bytes: chatJson });
    assert.match(response.id, /^chatcmpl-[0-9a-f]{24}$/);
    assert.equal(readUpstreamBytes(response), text.replace(`"id":"${ID}"`, `"id":"${response.id}"`).replace(`"created":${CREATED}`, `"created":${response.created}`));
    assert.equal(readUpstreamBytes(convertCachedToResponse(answer)), undefined, 'a caller without pass-through gets the object only');
  });
});

describe('tapping a pass-through stream for the cache', () => {
  const relayOf = (pieces: StreamPiece[]): { relay: StreamRelay; result: StreamResult } => {
    const result: StreamResult = { outcome: 'completed', usage: USAGE, finishReason: 'stop', rawFinishReason: 'stop', chunks: 3, streamMs: 1 };
    async function* gen() {
      yield* pieces;
    }
    return { relay: { chunks: gen(), cancel: () => undefined, result: Promise.resolve(result) }, result };
  };

  it('keeps the raw texts as the client got them when every piece was raw', async () => {
    const { relay, result } = relayOf(EVENTS.map((t) => new RawSse(t, 'openai-chat')));
    const tapped = tapStreamForCache(relay);
    for await (const _piece of tapped.relay.chunks);
    const answer = tapped.assemble(result);
    assert.deepEqual(answer?.bytes, { dialect: 'openai-chat', events: EVENTS });
    assert.equal(answer?.response.id, ID);
    assert.equal(answer?.response.choices[0]?.message.content, STREAMED.choices[0]?.message.content);
  });

  it('keeps none when Herd wrote a canonical chunk into the stream (its usage chunk for an upstream that sent none)', async () => {
    const usageChunk = {
      id: ID,
      object: 'chat.completion.chunk' as const,
      created: CREATED,
      model: 'gpt-4.1',
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
    const { relay, result } = relayOf([...EVENTS.map((t) => new RawSse(t, 'openai-chat')), usageChunk]);
    const tapped = tapStreamForCache(relay);
    for await (const _piece of tapped.relay.chunks);
    const answer = tapped.assemble(result);
    assert.equal(answer?.bytes, undefined);
    assert.equal(answer?.response.choices[0]?.finish_reason, 'stop');
  });
});
