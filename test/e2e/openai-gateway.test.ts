// The LLM gateway through its real HTTP interface with the official `openai` SDK as the client, in
// front of local upstreams speaking OpenAI's and Anthropic's wire formats (faults included).
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import {
  anthropicErrorBody,
  anthropicMessage,
  openAICompletion,
  openAIErrorBody,
  openAIStreamFrames,
  scriptedUpstream,
  status,
  type ScriptedUpstream,
} from '../gateway/helpers/gateway-fixtures.ts';
import { startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-e2e-tests-0123456789';
const ENV = { HOLYSHEEP_API_KEY: 'sk-upstream-hs', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_TEST_MASTER: MASTER };

describe('OpenAI-compatible gateway over HTTP', () => {
  let relay: MockUpstream;
  let anthropic: MockUpstream;
  let relayScript: ScriptedUpstream;
  let anthropicScript: ScriptedUpstream;
  let server: HerdServer;
  let client: OpenAI;
  let limitedKey: string;

  before(async () => {
    relayScript = scriptedUpstream({
      okJson: openAICompletion('gpt-4.1', 'Bonjour from the relay'),
      okFrames: openAIStreamFrames('gpt-4.1', ['Bon', 'jour']),
      errorBody: openAIErrorBody,
    });
    anthropicScript = scriptedUpstream({ okJson: anthropicMessage('claude-sonnet-4-5', 'Bonjour from Claude'), okFrames: [], errorBody: anthropicErrorBody });
    relay = await startMockUpstream(relayScript.handler);
    anthropic = await startMockUpstream(anthropicScript.handler);
    const dir = mkdtempSync(join(tmpdir(), 'herd-gateway-e2e-'));
    const db = join(dir, 'herd.db');
    const store = await TestKeys.open(db);
    limitedKey = (await store.create({ name: 'deepseek-only', allowedModels: ['deepseek-v3.2'] })).secret;
    await store.close();
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${db}" }
providers:
  holysheep: { type: openai, base_url: "${relay.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 2, base_ms: 5, cap_ms: 50 } }
  anthropic: { type: anthropic, base_url: "${anthropic.url}", exchange_rate: 7.3, timeout_ms: 2000, retry: { attempts: 1 } }
  openai: { type: openai, exchange_rate: 7.3 }
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: holysheep }, { provider: openai }]
  claude-sonnet-4.5:
    aliases: [claude-sonnet-4-5]
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5 }]
    fallbacks: [gpt-4.1]
  deepseek-v3.2:
    price: { input: 0.28, output: 0.42 }
    deployments: [{ provider: holysheep, upstream_model: deepseek-chat }]
routes:
  tiers: { fast: deepseek-v3.2, quality: claude-sonnet-4.5, advanced: gpt-4.1 }
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
    relayScript.script();
    anthropicScript.script();
    relay.requests.length = 0;
    anthropic.requests.length = 0;
  });

  it('answers a chat completion with the answering model and Herd headers', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt4', messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    assert.equal(data.choices[0]?.message.content, 'Bonjour from the relay');
    assert.equal(data.model, 'gpt-4.1');
    assert.equal(response.headers.get('x-herd-model'), 'gpt-4.1');
    assert.equal(response.headers.get('x-herd-provider'), 'holysheep', 'the relay at ¥1/$ is cheaper than the official API at ¥7.3/$');
    assert.equal(response.headers.get('x-herd-attempts'), '1');
    assert.ok(Number(response.headers.get('x-herd-overhead-ms')) >= 0);
    assert.equal((relay.requests[0]!.body as { model: string }).model, 'gpt-4.1');
    assert.equal(relay.requests[0]?.headers['authorization'], 'Bearer sk-upstream-hs', 'the upstream key comes from the environment');
  });

  it('a compressed or chunked body (the framework path) is answered like a plain one (the fast path), streams too', async () => {
    const body = JSON.stringify({ model: 'gpt4', messages: [{ role: 'user', content: 'hello' }] });
    const headers = { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' };
    const plain = await fetch(`${server.httpUrl}/v1/chat/completions`, { method: 'POST', headers, body });
    const gzipped = await fetch(`${server.httpUrl}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'content-encoding': 'gzip' }, body: gzipSync(body) });
    const chunked = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: Readable.toWeb(Readable.from([body.slice(0, 10), body.slice(10)])) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    for (const res of [plain, gzipped, chunked]) {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-herd-model'), 'gpt-4.1');
      assert.equal(res.headers.get('content-type'), 'application/json');
      const answer = (await res.json()) as { model: string; choices: { message: { content: string } }[] };
      assert.equal(answer.choices[0]?.message.content, 'Bonjour from the relay');
      assert.equal(answer.model, 'gpt-4.1');
    }
    const streamed = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], stream: true })),
    });
    assert.equal(streamed.status, 200);
    assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await streamed.text();
    assert.match(text, /"content":"Bon"/);
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    const broken = await fetch(`${server.httpUrl}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'content-encoding': 'gzip' }, body: 'not gzip' });
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
  });

  it('streams with SSE; usage arrives when include_usage is asked for', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'Bonjour');
    assert.ok(usage && usage.total_tokens > 0);
  });

  it('falls back along the chain when the primary fails, and says who answered', async () => {
    anthropicScript.script(status(503));
    const { data, response } = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    assert.equal(data.model, 'gpt-4.1');
    assert.equal(response.headers.get('x-herd-model'), 'gpt-4.1');
    assert.equal(response.headers.get('x-herd-attempts'), '2');
  });

  it('retries a 429 and, when retries run out, answers 429 with Retry-After', async () => {
    relayScript.script(status(429, { 'retry-after': '0' }), status(429, { 'retry-after': '1' }));
    await assert.rejects(client.chat.completions.create({ model: 'deepseek-v3.2', messages: [{ role: 'user', content: 'hi' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.RateLimitError, String(err));
      assert.equal(err.status, 429);
      assert.ok(err.headers?.get('retry-after'));
      return true;
    });
    assert.equal(relay.requests.length, 2, 'attempts: 2 on the relay');
  });

  it('unknown model: 404 listing the available names, never a silent switch', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'gpt-5-turbo', messages: [{ role: 'user', content: 'hi' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.match(err.message, /The model `gpt-5-turbo` does not exist.*gpt-4\.1/s);
      return true;
    });
    assert.equal(relay.requests.length + anthropic.requests.length, 0);
  });

  it('keys: missing or wrong → 401, a model the key may not use → 403, allowed → 200', async () => {
    const noKey = await fetch(`${server.httpUrl}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'gpt-4.1', messages: [] }) });
    assert.equal(noKey.status, 401);
    assert.match(((await noKey.json()) as { error: { message: string } }).error.message, /You didn't provide an API key/);
    const wrong = new OpenAI({ apiKey: 'sk-herd-not-a-real-key-000000000000000000000', baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
    await assert.rejects(wrong.models.list(), (err: unknown) => err instanceof OpenAI.AuthenticationError && !err.message.includes('000000000000000000000'));
    const limited = new OpenAI({ apiKey: limitedKey, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
    await assert.rejects(limited.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] }), OpenAI.PermissionDeniedError);
    const allowed = await limited.chat.completions.create({ model: 'deepseek-v3.2', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(allowed.model, 'deepseek-v3.2');
    const models = await limited.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['deepseek-v3.2', 'fast'],
      'a key sees only what it may use',
    );
  });

  it('invalid requests: 400 with the offending param; malformed JSON is a clear 400', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], temperature: 5 }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.param, 'temperature');
      return true;
    });
    const res = await fetch(`${server.httpUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${MASTER}` }, body: '{"model": ' });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /could not parse the JSON body/);
    const route = await fetch(`${server.httpUrl}/v1/nope`, { headers: { authorization: `Bearer ${MASTER}` } });
    assert.equal(route.status, 404);
  });

  it('a stream cut by the upstream after the first chunk ends in an error, with no switch to another model', async () => {
    relayScript.script({ kind: 'stream-reset', after: 2 });
    const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello' }], stream: true });
    let text = '';
    await assert.rejects(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    });
    assert.ok(text.length > 0, 'the first chunk reached the client');
    assert.equal(relay.requests.length, 1, 'no retry after the first byte');
  });

  it('GET /health lists providers (enabled or why not) and breaker states', async () => {
    const health = (await (await fetch(`${server.httpUrl}/health`)).json()) as {
      status: string;
      providers: { name: string; enabled: boolean; reason?: string }[];
      breakers: unknown[];
    };
    assert.equal(health.status, 'ok');
    const openai = health.providers.find((p) => p.name === 'openai');
    assert.equal(openai?.enabled, false);
    assert.match(openai?.reason ?? '', /OPENAI_API_KEY/);
    assert.ok(Array.isArray(health.breakers));
    assert.doesNotMatch(JSON.stringify(health), /sk-upstream/, 'no key in /health');
  });
});
