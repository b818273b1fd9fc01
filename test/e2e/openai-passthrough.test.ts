// Same-dialect pass-through: an OpenAI chat client in front of an OpenAI-compatible upstream gets the
// upstream's bytes, the model renamed and nothing else changed — usage details and top-level fields Herd
// does not model included — through raw HTTP and the `openai` SDK, JSON and SSE, live and from the cache.
// A fallback onto an Anthropic upstream is translated as before.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { anthropicMessage } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-passthrough-tests-0123';
const ENV = { RELAY_API_KEY: 'sk-upstream-relay', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_TEST_MASTER: MASTER };
const UPSTREAM_MODEL = 'gpt-4.1-2025-04-14';

// Spacing, key order and fields exactly as an upstream might send them; Herd must not normalise any of it.
const COMPLETION_TEXT =
  `{"id":"chatcmpl-up1","object":"chat.completion","created":1741569952,"model":"${UPSTREAM_MODEL}",` +
  `"choices":[{"index":0,"message":{"role":"assistant","content":"Bonjour","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
  `"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":2},` +
  `"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":1,"accepted_prediction_tokens":5,"rejected_prediction_tokens":6}},` +
  `"service_tier":"default","system_fingerprint":"fp_up","x_upstream_extra":{"kept":true}}`;

const chunkText = (delta: string, finish: string | null, extra = '') =>
  `{"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1694268190,"model":"${UPSTREAM_MODEL}","service_tier":"default","system_fingerprint":"fp_up",` +
  `"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}],"usage":null${extra},"obfuscation":"abc"}`;
const STREAM_TEXTS = [chunkText('{"role":"assistant","content":""}', null), chunkText('{"content":"Bon"}', null), chunkText('{"content":"jour"}', null), chunkText('{}', 'stop')];
const USAGE_TEXT =
  `{"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1694268190,"model":"${UPSTREAM_MODEL}","service_tier":"default","system_fingerprint":"fp_up","choices":[],` +
  `"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":3},` +
  `"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":7,"rejected_prediction_tokens":8}},"obfuscation":"x"}`;

const FRAMED_EVENTS = [`data:${STREAM_TEXTS[0]}\r\n\r\n`, ': keep-alive\r\n\r\n', ...STREAM_TEXTS.slice(1).map((t) => `data:${t}\r\n\r\n`), `data:${USAGE_TEXT}\r\n\r\n`];

const renamed = (text: string) => text.split(`"model":"${UPSTREAM_MODEL}"`).join('"model":"gpt-4.1"');

describe('OpenAI chat pass-through', () => {
  let relay: MockUpstream;
  let anthropic: MockUpstream;
  let server: HerdServer;
  let client: OpenAI;
  let relayFails = false;

  before(async () => {
    relay = await startMockUpstream((req, res) => {
      if (relayFails) {
        sendJson(res, 500, { error: { message: 'boom', type: 'server_error' } });
        return;
      }
      const body = req.body as { stream?: boolean; messages?: { content?: string }[] };
      const ask = body.messages?.[0]?.content;
      if (body.stream === true && ask === 'framing') {
        // CRLF, no space after the colon, a comment, and an event cut across two writes.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const [first, ...rest] = FRAMED_EVENTS;
        res.write(first!.slice(0, 40));
        setTimeout(() => {
          res.write(first!.slice(40));
          for (const text of rest) res.write(text);
          res.end('data: [DONE]\r\n\r\n');
        }, 5);
        return;
      }
      if (body.stream === true && ask === 'garbage') {
        // After the first read: the client already has the first event, so no fallback can answer instead.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${STREAM_TEXTS[0]}\n\n`);
        setTimeout(() => res.end('data: {"choices": [\n\n'), 20);
        return;
      }
      if (body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const text of [...STREAM_TEXTS, USAGE_TEXT]) res.write(`data: ${text}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(COMPLETION_TEXT);
    });
    anthropic = await startMockUpstream((_req, res) => sendJson(res, 200, anthropicMessage('claude-sonnet-4-5', 'Bonjour from Claude')));
    const dir = mkdtempSync(join(tmpdir(), 'herd-passthrough-'));
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${join(dir, 'herd.db')}" }
providers:
  relay: { type: openai, base_url: "${relay.url}/v1", api_key_env: RELAY_API_KEY, exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${anthropic.url}", exchange_rate: 7.3, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay, upstream_model: ${UPSTREAM_MODEL} }]
    fallbacks: [claude-sonnet-4.5]
  claude-sonnet-4.5:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5 }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
    client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await server.close();
    await relay.close();
    await anthropic.close();
  });
  beforeEach(() => {
    relayFails = false;
  });

  const post = (body: Record<string, unknown>) =>
    fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello' }], ...body }),
    });

  it('a JSON answer is the upstream body byte for byte, the model renamed', async () => {
    const res = await post({ temperature: 0.7 });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), renamed(COMPLETION_TEXT));
  });

  it('the openai SDK sees every usage detail and unknown field', async () => {
    const answer = await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello' }], temperature: 0.7 });
    assert.equal(answer.model, 'gpt-4.1');
    assert.equal(answer.usage?.prompt_tokens_details?.audio_tokens, 2);
    assert.deepEqual(answer.usage?.completion_tokens_details, { reasoning_tokens: 0, audio_tokens: 1, accepted_prediction_tokens: 5, rejected_prediction_tokens: 6 });
    assert.deepEqual((answer as unknown as { x_upstream_extra: unknown }).x_upstream_extra, { kept: true });
    assert.equal(answer.service_tier, 'default');
  });

  it('a stream is the upstream events byte for byte; the usage event only under include_usage', async () => {
    const withUsage = await (await post({ stream: true, stream_options: { include_usage: true }, temperature: 0.7 })).text();
    assert.equal(withUsage, `${[...STREAM_TEXTS, USAGE_TEXT].map((t) => `data: ${renamed(t)}\n\n`).join('')}data: [DONE]\n\n`);
    const without = await (await post({ stream: true, temperature: 0.7 })).text();
    assert.equal(without, `${STREAM_TEXTS.map((t) => `data: ${renamed(t)}\n\n`).join('')}data: [DONE]\n\n`);
  });

  it('a stream keeps the upstream framing (CRLF, no space, comments, events cut across reads) byte for byte', async () => {
    const text = await (await post({ stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'framing' }] })).text();
    assert.equal(text, `${FRAMED_EVENTS.map(renamed).join('')}data: [DONE]\n\n`);
    const sdk = await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'framing' }], stream: true });
    let content = '';
    for await (const chunk of sdk) content += chunk.choices[0]?.delta.content ?? '';
    assert.equal(content, 'Bonjour');
  });

  it('garbage after the first event ends the stream with an error event and no [DONE]', async () => {
    const text = await (await post({ stream: true, messages: [{ role: 'user', content: 'garbage' }] })).text();
    assert.ok(text.startsWith(`data: ${renamed(STREAM_TEXTS[0]!)}\n\n`), JSON.stringify(text));
    assert.match(text, /stream interrupted after 1 chunk: relay: SSE event is not a JSON object/);
    assert.ok(!text.includes('[DONE]'), text);
  });

  it('the openai SDK streams the upstream usage details', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.7,
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
      assert.equal(chunk.model, 'gpt-4.1');
    }
    assert.equal(text, 'Bonjour');
    assert.equal(usage?.prompt_tokens_details?.audio_tokens, 3);
    assert.equal(usage?.completion_tokens_details?.accepted_prediction_tokens, 7);
    assert.equal(usage?.completion_tokens_details?.rejected_prediction_tokens, 8);
  });

  it('the cache replays the upstream bytes, with a fresh id and created', async () => {
    const first = await post({ temperature: 0, messages: [{ role: 'user', content: 'cache me' }] });
    assert.equal(first.headers.get('x-herd-cache'), 'miss');
    assert.equal(await first.text(), renamed(COMPLETION_TEXT));
    let hit: Response | undefined;
    // The cache write follows the answer by a turn of the event loop: ask until it is there.
    for (let i = 0; i < 50; i++) {
      hit = await post({ temperature: 0, messages: [{ role: 'user', content: 'cache me' }] });
      if (hit.headers.get('x-herd-cache') === 'hit') break;
      await hit.text();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(hit?.headers.get('x-herd-cache'), 'hit');
    const text = (await hit?.text()) ?? '';
    const parsed = JSON.parse(text) as { id: string; created: number };
    assert.notEqual(parsed.id, 'chatcmpl-up1');
    assert.equal(text, renamed(COMPLETION_TEXT).replace('"id":"chatcmpl-up1"', `"id":"${parsed.id}"`).replace('"created":1741569952', `"created":${parsed.created}`));
  });

  it('a fallback onto an Anthropic upstream is translated through the canonical shape', async () => {
    relayFails = true;
    const res = await post({ temperature: 0.7 });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-herd-provider'), 'anthropic');
    const answer = (await res.json()) as { model: string; choices: Array<{ message: { content: string } }>; x_upstream_extra?: unknown };
    assert.equal(answer.model, 'claude-sonnet-4.5');
    assert.equal(answer.choices[0]?.message.content, 'Bonjour from Claude');
    assert.equal(answer.x_upstream_extra, undefined);
  });
});
