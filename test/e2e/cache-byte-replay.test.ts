// The gateway cache replays the upstream's own bytes to a pass-through client (OpenAI chat here): a
// streamed hit is the streamed miss byte for byte — odd framing, comments and unknown fields included —
// but for a fresh id and created; a hit that differs in include_usage or in mode (JSON ↔ stream) gets
// the canonical replay. Through raw HTTP and the `openai` SDK, from memory and from Redis.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-byte-replay-tests-01';
const ENV = { RELAY_API_KEY: 'sk-upstream-relay', HERD_TEST_MASTER: MASTER };
const UPSTREAM_MODEL = 'gpt-4.1-2025-04-14';
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const ID = 'chatcmpl-up9';
const CREATED = 1694268190;
const chunkText = (delta: string, finish: string | null) =>
  `{"id":"${ID}","object":"chat.completion.chunk","created":${CREATED},"model":"${UPSTREAM_MODEL}","service_tier":"default","system_fingerprint":"fp_up",` +
  `"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}],"usage":null,"obfuscation":"abc"}`;
const USAGE_TEXT =
  `{"id":"${ID}","object":"chat.completion.chunk","created":${CREATED},"model":"${UPSTREAM_MODEL}","choices":[],` +
  `"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":3},` +
  `"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":7,"rejected_prediction_tokens":8}},"obfuscation":"x"}`;
// CRLF, no space after `data:`, a comment, and content quoting the id and the created number.
const EVENTS = [
  `data:${chunkText('{"role":"assistant","content":""}', null)}\r\n\r\n`,
  ': keep-alive\r\n\r\n',
  `data:${chunkText(`{"content":"Bon \\"${ID}\\" ${CREATED}"}`, null)}\r\n\r\n`,
  `data: ${chunkText('{"content":"jour"}', null)}\n\n`,
  `data: ${chunkText('{}', 'stop')}\n\n`,
];
const CONTENT = `Bon "${ID}" ${CREATED}jour`;
const COMPLETION_TEXT =
  `{"id":"${ID}", "object":"chat.completion","created":${CREATED},"model":"${UPSTREAM_MODEL}",` +
  `"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(CONTENT)},"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
  `"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":2}},` +
  `"service_tier":"default","system_fingerprint":"fp_up","x_upstream_extra":{"kept":true}}`;

function configText(relay: string, dir: string, redisPrefix: string | undefined): string {
  return `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${join(dir, 'herd.db')}" }
providers:
  relay: { type: openai, base_url: "${relay}/v1", api_key_env: RELAY_API_KEY, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay, upstream_model: ${UPSTREAM_MODEL} }]
${redisPrefix === undefined ? '' : `cache: { redis: { url: "${REDIS_URL}", key_prefix: "${redisPrefix}" } }`}
`;
}

interface Answer {
  cache: string | null;
  text: string;
}

/** `text` with its (first) id and created put back to the upstream's: what must equal the miss exactly. */
function restoreIdentity(text: string): { text: string; id: string; created: number } {
  const id = /"id":\s*"([^"]+)"/.exec(text)?.[1] ?? '';
  const created = Number(/"created":(\d+)/.exec(text)?.[1]);
  return { text: text.replaceAll(`"${id}"`, `"${ID}"`).replaceAll(`"created":${created}`, `"created":${CREATED}`), id, created };
}

describe('cache byte replay', () => {
  let relay: MockUpstream;
  let dir: string;
  const servers: HerdServer[] = [];

  before(async () => {
    relay = await startMockUpstream((req, res) => {
      const body = req.body as { stream?: boolean };
      if (body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // The first event cut across two writes.
        res.write(EVENTS[0]!.slice(0, 50));
        setTimeout(() => {
          res.write(EVENTS[0]!.slice(50));
          for (const text of EVENTS.slice(1)) res.write(text);
          res.end(`data: ${USAGE_TEXT}\r\n\r\ndata: [DONE]\r\n\r\n`);
        }, 5);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(COMPLETION_TEXT);
    });
    dir = mkdtempSync(join(tmpdir(), 'herd-byte-replay-'));
    servers.push(await startHerd(parseHerdConfig(configText(relay.url, dir, undefined), join(dir, 'herd.yaml')), { env: ENV }));
  });
  after(async () => {
    for (const server of servers) await server.close();
    await relay.close();
  });

  const post = async (body: Record<string, unknown>, server = servers[0]!): Promise<Answer> => {
    const res = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4.1', temperature: 0, ...body }),
    });
    assert.equal(res.status, 200);
    return { cache: res.headers.get('x-herd-cache'), text: await res.text() };
  };
  /** The cache write follows the answer by a turn of the event loop (and the ledger): ask until it is there. */
  const postUntilHit = async (body: Record<string, unknown>, server = servers[0]!): Promise<Answer> => {
    for (let i = 0; i < 50; i++) {
      const answer = await post(body, server);
      if (answer.cache === 'hit') return answer;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.fail('no cache hit');
  };
  const ask = () => ({ messages: [{ role: 'user', content: `byte replay ${randomUUID()}` }] });
  const streamed = (includeUsage: boolean) => (includeUsage ? `${EVENTS.join('')}data: ${USAGE_TEXT}\r\n\r\n` : EVENTS.join('')).split(UPSTREAM_MODEL).join('gpt-4.1');

  for (const includeUsage of [true, false]) {
    it(`a streamed hit is the streamed miss byte for byte but for a fresh id and created (include_usage ${includeUsage})`, async () => {
      const body = { ...ask(), stream: true, stream_options: { include_usage: includeUsage } };
      const miss = await post(body);
      assert.equal(miss.cache, 'miss');
      assert.equal(miss.text, `${streamed(includeUsage)}data: [DONE]\n\n`);
      const calls = relay.requests.length;
      const hit = await postUntilHit(body);
      const hitCalls = relay.requests.length - calls;
      const restored = restoreIdentity(hit.text);
      assert.match(restored.id, /^chatcmpl-[0-9a-f]{24}$/);
      assert.ok(Math.abs(restored.created - Date.now() / 1000) < 60, String(restored.created));
      assert.equal(restored.text, miss.text);
      const events = includeUsage ? 5 : 4;
      assert.equal(hit.text.split(`"id":"${restored.id}"`).length - 1, events, 'every event carries the fresh id');
      assert.equal(hit.text.split(`"created":${restored.created}`).length - 1, events, 'and the fresh created');
      assert.ok(hit.text.includes(`Bon \\"${ID}\\" ${CREATED}`), 'the answer text itself is untouched');
      assert.equal(hitCalls, 0, 'the hit made no upstream call');
      const again = restoreIdentity((await post(body)).text);
      assert.notEqual(again.id, restored.id, 'two hits never share an id');
    });
  }

  it('a hit with another include_usage gets the canonical replay: the usage chunk added or dropped correctly', async () => {
    for (const [stored, asked] of [
      [false, true],
      [true, false],
    ] as const) {
      const messages = ask().messages;
      assert.equal((await post({ messages, stream: true, stream_options: { include_usage: stored } })).cache, 'miss');
      await postUntilHit({ messages, stream: true, stream_options: { include_usage: stored } });
      const hit = await post({ messages, stream: true, stream_options: { include_usage: asked } });
      assert.equal(hit.cache, 'hit');
      const chunks = parseSse(hit.text);
      assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), CONTENT);
      const usage = chunks.filter((c) => c.usage != null);
      assert.equal(usage.length, asked ? 1 : 0, hit.text);
      if (asked) assert.equal(usage[0]?.usage?.prompt_tokens, 9);
      assert.ok(!hit.text.includes('obfuscation'), 'canonical chunks, not the stored bytes');
      assert.ok(hit.text.endsWith('data: [DONE]\n\n'));
    }
  });

  it('a JSON miss then a stream hit, and a stream miss then a JSON hit, are canonical replays', async () => {
    const jsonFirst = ask();
    const miss = await post(jsonFirst);
    assert.equal(miss.text, COMPLETION_TEXT.split(UPSTREAM_MODEL).join('gpt-4.1'));
    await postUntilHit(jsonFirst);
    const streamHit = await post({ ...jsonFirst, stream: true });
    assert.equal(streamHit.cache, 'hit');
    assert.equal(
      parseSse(streamHit.text)
        .map((c) => c.choices[0]?.delta.content ?? '')
        .join(''),
      CONTENT,
    );
    assert.ok(!streamHit.text.includes('x_upstream_extra') && !streamHit.text.includes(`"id":"${ID}"`));

    const streamFirst = { ...ask(), stream: true };
    assert.equal((await post(streamFirst)).cache, 'miss');
    await postUntilHit(streamFirst);
    const jsonHit = await post({ messages: streamFirst.messages });
    assert.equal(jsonHit.cache, 'hit');
    const parsed = JSON.parse(jsonHit.text) as { id: string; object: string; model: string; choices: Array<{ message: { content: string } }> };
    assert.deepEqual([parsed.object, parsed.model, parsed.choices[0]?.message.content], ['chat.completion', 'gpt-4.1', CONTENT]);
    assert.notEqual(parsed.id, ID);
    assert.ok(!jsonHit.text.includes('obfuscation'));
  });

  it('the openai SDK reads a byte-replayed streamed hit, upstream usage details included', async () => {
    const client = new OpenAI({ apiKey: MASTER, baseURL: `${servers[0]!.httpUrl}/v1`, maxRetries: 0 });
    const request = { model: 'gpt-4.1', temperature: 0, ...ask(), stream: true as const, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming;
    const read = async () => {
      const { data, response } = await client.chat.completions.create(request).withResponse();
      let content = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      const ids = new Set<string>();
      for await (const chunk of data) {
        content += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
        ids.add(chunk.id);
      }
      return { cache: response.headers.get('x-herd-cache'), content, usage, ids };
    };
    assert.equal((await read()).cache, 'miss');
    let hit = await read();
    for (let i = 0; i < 50 && hit.cache !== 'hit'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      hit = await read();
    }
    assert.equal(hit.cache, 'hit');
    assert.equal(hit.content, CONTENT);
    assert.equal(hit.ids.size, 1);
    assert.ok(!hit.ids.has(ID));
    // Only the upstream's own usage bytes carry these: the canonical replay has no place for them.
    assert.equal(hit.usage?.prompt_tokens_details?.audio_tokens, 3);
    assert.equal(hit.usage?.completion_tokens_details?.accepted_prediction_tokens, 7);
  });

  it('with Redis, another replica replays the same bytes from the Redis tier', async () => {
    const prefix = `herd:test:byte-replay:${randomUUID()}:`;
    const redis = new Redis(REDIS_URL);
    try {
      const config = parseHerdConfig(configText(relay.url, dir, prefix), join(dir, 'herd.yaml'));
      const a = await startHerd(config, { env: ENV });
      servers.push(a);
      const b = await startHerd(config, { env: ENV });
      servers.push(b);
      const bodies = [{ ...ask(), stream: true, stream_options: { include_usage: true } }, { ...ask(), stream: true }, ask()];
      for (const [i, body] of bodies.entries()) {
        const miss = await post(body, a);
        assert.equal(miss.cache, 'miss');
        // The write reaches Redis a little after the answer: wait for it before asking the other replica.
        for (let n = 0; n < 100 && (await redis.keys(`${prefix}*`)).length <= i; n++) await new Promise((resolve) => setTimeout(resolve, 20));
        const calls = relay.requests.length;
        const hit = await post(body, b);
        assert.equal(hit.cache, 'hit', 'from Redis: b never saw this request');
        assert.equal(relay.requests.length, calls);
        const restored = restoreIdentity(hit.text);
        assert.notEqual(restored.id, ID);
        assert.equal(restored.text, miss.text);
      }
      const keys = await redis.keys(`${prefix}*`);
      assert.equal(keys.length, 3);
      assert.ok(
        keys.every((k) => k.startsWith(`${prefix}v2:`)),
        keys.join(),
      );
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

interface ParsedChunk {
  choices: Array<{ delta: { content?: string | null } }>;
  usage?: { prompt_tokens: number } | null;
}

function parseSse(text: string): ParsedChunk[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) => /^data: ?(.*)$/m.exec(event)?.[1])
    .filter((data): data is string => data !== undefined && data !== '[DONE]')
    .map((data) => JSON.parse(data) as ParsedChunk);
}
