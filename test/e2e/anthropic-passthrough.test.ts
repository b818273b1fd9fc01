// Same-dialect pass-through for Anthropic clients: an Anthropic upstream receives the client's body as sent
// (model replaced) and the client gets the upstream's bytes, JSON and SSE, the model renamed and nothing
// else changed — fields, usage details and block types Herd does not model included — through raw HTTP and
// the official `@anthropic-ai/sdk`. Faults mid-stream, a cross-dialect fallback and the ledger row too.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { anthropicErrorBody, openAIChunk, openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-anthropic-passthrough-0123';
const ENV = { RELAY_API_KEY: 'sk-upstream-relay', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_TEST_MASTER: MASTER };
const UPSTREAM_MODEL = 'claude-sonnet-4-5-20250929';
const PUBLIC_MODEL = 'claude-sonnet-4.5';

// Anthropic's key order, with spacing, a server-tool block, usage details and a top-level field Herd does not model.
const MESSAGE_TEXT =
  `{"id":"msg_01Pass","type":"message","role":"assistant","model":"${UPSTREAM_MODEL}",` +
  `"content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"paris"}},{"type":"text","text":"Bonjour","citations":null}],` +
  `"stop_reason": "end_turn","stop_sequence":null,` +
  `"usage":{"input_tokens":20,"cache_creation_input_tokens":7,"cache_read_input_tokens":100,"cache_creation":{"ephemeral_5m_input_tokens":7,"ephemeral_1h_input_tokens":0},` +
  `"output_tokens":5,"server_tool_use":{"web_search_requests":1},"service_tier":"standard"},"container":null,"x_upstream_extra":{"kept":true}}`;

const TOOL_MESSAGE_TEXT =
  `{"id":"msg_01Tool","type":"message","role":"assistant","model":"${UPSTREAM_MODEL}",` +
  `"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","stop_sequence":null,` +
  `"usage":{"input_tokens":30,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":9,"service_tier":"standard"}}`;

const event = (name: string, data: string) => `event: ${name}\ndata: ${data}\n\n`;
const START = event(
  'message_start',
  `{"type":"message_start","message":{"id":"msg_S","type":"message","role":"assistant","model":"${UPSTREAM_MODEL}","content":[],"stop_reason":null,"stop_sequence":null,` +
    `"usage":{"input_tokens":472,"cache_creation_input_tokens":10,"cache_read_input_tokens":128,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}}`,
);
const TEXT_BLOCK = [
  event('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
  event('ping', '{"type": "ping"}'),
  event('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bon"}}'),
  event('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"jour"}}'),
  event('content_block_stop', '{"type":"content_block_stop","index":0}'),
];
const TEXT_END = [
  event(
    'message_delta',
    '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15,"server_tool_use":{"web_search_requests":1}},"context_management":null}',
  ),
  event('message_stop', '{"type":"message_stop"}'),
];
const STREAM_TEXT = [START, ...TEXT_BLOCK, event('future_event', '{"type":"future_event","kept":true}'), ...TEXT_END].join('');
const TOOL_STREAM_TEXT = [
  START,
  event('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}'),
  event('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Pa"}}'),
  event('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"ris\\"}"}}'),
  event('content_block_stop', '{"type":"content_block_stop","index":0}'),
  event('message_delta', '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}'),
  event('message_stop', '{"type":"message_stop"}'),
].join('');

const renamed = (text: string) => text.split(`"model":"${UPSTREAM_MODEL}"`).join(`"model":"${PUBLIC_MODEL}"`);

/** A Messages request with what the canonical shape cannot hold: block-level breakpoints (one with a ttl), service_tier. */
const CLIENT_BODY = {
  model: PUBLIC_MODEL,
  max_tokens: 256,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'json', cache_control: { type: 'ephemeral' } }] }],
  tools: [
    { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral' } },
  ],
  service_tier: 'auto',
  metadata: { user_id: 'user-1' },
  temperature: 0.3,
};

describe('Anthropic Messages pass-through', () => {
  let anthropic: MockUpstream;
  let relay: MockUpstream;
  let server: HerdServer;
  let client: Anthropic;
  let dir: string;
  let db: string;
  /** What the Anthropic upstream does for the next request; `ok` answers by the first user text. */
  let fault: 'none' | 'overloaded' | 'unavailable' | 'early-garbage' = 'none';

  before(async () => {
    anthropic = await startMockUpstream((req, res) => {
      const body = req.body as { stream?: boolean; messages: Array<{ content: string | Array<{ text?: string }> }> };
      const first = body.messages[0]?.content;
      const ask = typeof first === 'string' ? first : first?.[0]?.text;
      if (fault === 'overloaded') return sendJson(res, 529, anthropicErrorBody(529));
      if (fault === 'unavailable') return sendJson(res, 503, anthropicErrorBody(503));
      res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream; charset=utf-8' : 'application/json' });
      if (fault === 'early-garbage') {
        res.end('event: message_start\ndata: {"type":"message_start","message":{\n\n');
      } else if (!body.stream) {
        res.end(ask === 'tools' ? TOOL_MESSAGE_TEXT : MESSAGE_TEXT);
      } else if (ask === 'tools') {
        res.end(TOOL_STREAM_TEXT);
      }
      if (res.writableEnded) return;
      if (ask === 'no usage') {
        res.end(STREAM_TEXT.replace(/,"usage":\{"input_tokens":472.*?"service_tier":"standard"\}/, '').replace(/,"usage":\{"output_tokens":15.*?\}\}/, ''));
        return;
      }
      if (ask === 'reset') {
        // Content has gone out, then the connection drops: no fallback can answer any more.
        res.write(START + TEXT_BLOCK.slice(0, 3).join(''));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (ask === 'garbage') {
        res.write(START + TEXT_BLOCK[0]);
        setTimeout(() => res.end('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{\n\n'), 20);
        return;
      }
      // An event cut across two writes, as TCP may deliver it.
      res.write(STREAM_TEXT.slice(0, START.length + 30));
      setTimeout(() => res.end(STREAM_TEXT.slice(START.length + 30)), 5);
    });
    relay = await startMockUpstream((req, res) => {
      const body = req.body as { stream?: boolean; model: string };
      if (!body.stream) return sendJson(res, 200, openAICompletion(body.model, 'Bonjour from the relay'));
      return sendSse(res, [
        { data: openAIChunk(body.model, { role: 'assistant', content: '' }) },
        { data: openAIChunk(body.model, { content: 'Bonjour from the relay' }) },
        { data: openAIChunk(body.model, {}, 'stop') },
        {
          data: {
            id: 'chatcmpl-s',
            object: 'chat.completion.chunk',
            created: 1,
            model: body.model,
            choices: [],
            usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
          },
        },
        { data: '[DONE]' },
      ]);
    });
    dir = mkdtempSync(join(tmpdir(), 'herd-anthropic-passthrough-'));
    db = join(dir, 'herd.db');
    // The Anthropic deployment is the cheaper (chosen first); the OpenAI-compatible one of the same model answers when it fails.
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  anthropic: { type: anthropic, base_url: "${anthropic.url}", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 }, breaker: { min_requests: 1000 } }
  relay: { type: openai, base_url: "${relay.url}/v1", api_key_env: RELAY_API_KEY, exchange_rate: 2.0, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  ${PUBLIC_MODEL}:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: ${UPSTREAM_MODEL} }, { provider: relay, upstream_model: claude-via-relay }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
    client = new Anthropic({ apiKey: MASTER, baseURL: server.httpUrl, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    await anthropic?.close();
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    fault = 'none';
  });

  const post = (body: Record<string, unknown>) =>
    fetch(`${server.httpUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': MASTER, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'extended-cache-ttl-2025-04-11' },
      body: JSON.stringify(body),
    });
  const lastBody = (upstream: MockUpstream) => upstream.requests.at(-1)?.body as Record<string, unknown>;

  it('the upstream receives the client body as sent, but the model; the client gets the upstream JSON byte for byte, the model renamed', async () => {
    const res = await post(CLIENT_BODY);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-herd-provider'), 'anthropic');
    assert.equal(await res.text(), renamed(MESSAGE_TEXT));
    assert.deepEqual(lastBody(anthropic), { ...CLIENT_BODY, model: UPSTREAM_MODEL });
    const headers = anthropic.requests.at(-1)?.headers;
    assert.equal(headers?.['anthropic-beta'], 'extended-cache-ttl-2025-04-11');
    assert.equal(headers?.['x-api-key'], 'sk-upstream-ant');
  });

  it('a stream is the upstream events byte for byte (ping, unknown events, usage details), the model renamed', async () => {
    const res = await post({ ...CLIENT_BODY, stream: true });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(await res.text(), renamed(STREAM_TEXT));
    assert.deepEqual(lastBody(anthropic), { ...CLIENT_BODY, model: UPSTREAM_MODEL, stream: true });
  });

  it('the SDK reads every usage detail, unknown block and field of a message', async () => {
    const message = await client.messages.create(CLIENT_BODY as unknown as Anthropic.MessageCreateParamsNonStreaming);
    assert.equal(message.model, PUBLIC_MODEL);
    assert.deepEqual(message.content, [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'paris' } },
      { type: 'text', text: 'Bonjour', citations: null },
    ]);
    assert.deepEqual(message.usage.server_tool_use, { web_search_requests: 1 });
    assert.equal(message.usage.service_tier, 'standard');
    assert.deepEqual(message.usage.cache_creation, { ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 0 });
    assert.deepEqual((message as unknown as { x_upstream_extra: unknown }).x_upstream_extra, { kept: true });
  });

  it('the SDK streams the upstream events: text, final usage with server tool use', async () => {
    const stream = client.messages.stream(CLIENT_BODY as unknown as Anthropic.MessageStreamParams);
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    assert.equal(text, 'Bonjour');
    assert.equal(final.model, PUBLIC_MODEL);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.input_tokens, 472);
    assert.equal(final.usage.output_tokens, 15);
    assert.deepEqual(final.usage.server_tool_use, { web_search_requests: 1 });
  });

  it('the SDK runs tools over pass-through, streamed and not', async () => {
    const tools = CLIENT_BODY.tools as Anthropic.Tool[];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'tools' }];
    const streamed = await client.messages.stream({ model: PUBLIC_MODEL, max_tokens: 100, tools, tool_choice: { type: 'any' }, messages }).finalMessage();
    assert.deepEqual(streamed.content, [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }]);
    assert.equal(streamed.stop_reason, 'tool_use');
    const created = await client.messages.create({ model: PUBLIC_MODEL, max_tokens: 100, tools, messages });
    assert.deepEqual(created.content, [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }]);
    assert.deepEqual(lastBody(anthropic).tools, tools);
  });

  it('a reset after the first content events ends the stream with an error event and no message_stop', async () => {
    const text = await (await post({ ...CLIENT_BODY, stream: true, messages: [{ role: 'user', content: 'reset' }] })).text();
    assert.ok(text.startsWith(renamed(START + TEXT_BLOCK.slice(0, 3).join(''))), text);
    const tail = text.slice(renamed(START + TEXT_BLOCK.slice(0, 3).join('')).length);
    assert.match(tail, /^event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]*stream interrupted after 2 chunks[^"]*"\}\}\n\n$/);
    assert.ok(!text.includes('message_stop'), text);
    await assert.rejects(
      client.messages.stream({ model: PUBLIC_MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'reset' }] }).finalMessage(),
      (err: unknown) => err instanceof Anthropic.APIError,
    );
  });

  it('garbage JSON in an event after the first content ends the stream as malformed', async () => {
    const text = await (await post({ ...CLIENT_BODY, stream: true, messages: [{ role: 'user', content: 'garbage' }] })).text();
    assert.ok(text.startsWith(renamed(START + TEXT_BLOCK[0])), text);
    assert.match(text, /event: error\ndata: .*stream interrupted after 1 chunk: anthropic: SSE event is not a JSON object/);
    assert.ok(!text.includes('message_stop'), text);
  });

  it('an overloaded Anthropic upstream falls back to the OpenAI-compatible deployment, translated (JSON)', async () => {
    fault = 'overloaded';
    const res = await post(CLIENT_BODY);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-herd-provider'), 'relay');
    assert.equal(res.headers.get('x-herd-attempts'), '2');
    const message = (await res.json()) as Record<string, unknown>;
    assert.equal(message.model, PUBLIC_MODEL);
    assert.deepEqual(message.content, [{ type: 'text', text: 'Bonjour from the relay' }]);
    assert.equal(message.x_upstream_extra, undefined);
    const translated = lastBody(relay);
    assert.equal(translated.model, 'claude-via-relay');
    assert.ok(Array.isArray(translated.messages));
  });

  it('a 503 or garbage before the first content event falls back too, and the stream is encoded from the relay chunks', async () => {
    for (const failure of ['unavailable', 'early-garbage'] as const) {
      fault = failure;
      const res = await post({ ...CLIENT_BODY, stream: true });
      assert.equal(res.headers.get('x-herd-provider'), 'relay', failure);
      const text = await res.text();
      assert.ok(text.startsWith('event: message_start\n'), text);
      assert.ok(!text.includes(UPSTREAM_MODEL), text);
      assert.match(text, /"text_delta","text":"Bonjour from the relay"/);
      assert.ok(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'), text);
    }
    fault = 'overloaded';
    const final = await client.messages.stream({ model: PUBLIC_MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: 'Bonjour from the relay' }]);
  });

  it('a cache hit of a passed-through answer replays the upstream bytes, JSON and stream, with only a fresh message id', async () => {
    const messageId = (text: string) => /"id":"(msg_[^"]*)"/.exec(text)?.[1];
    for (const stream of [false, true]) {
      const body = { ...CLIENT_BODY, temperature: 0, stream, messages: [{ role: 'user', content: `cache ${stream}` }] };
      const first = await post(body);
      assert.equal(first.headers.get('x-herd-cache'), 'miss');
      const firstText = await first.text();
      let hit: Response | undefined;
      // The cache write follows the answer by a turn of the event loop: ask until it is there.
      for (let i = 0; i < 50; i++) {
        hit = await post(body);
        if (hit.headers.get('x-herd-cache') === 'hit') break;
        await hit.text();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(hit?.headers.get('x-herd-cache'), 'hit', `stream ${stream}`);
      const text = (await hit?.text()) ?? '';
      assert.ok(!text.includes(UPSTREAM_MODEL), text);
      const [oldId, newId] = [messageId(firstText), messageId(text)];
      assert.ok(oldId !== undefined && newId !== undefined && oldId !== newId, `ids ${oldId} ${newId}`);
      // Everything the upstream sent (server_tool_use blocks, citations, usage details) comes back as it was.
      assert.equal(text.replaceAll(newId, oldId), firstText, `stream ${stream}`);
      if (!stream) {
        const message = JSON.parse(text) as { model: string; content: Array<{ type: string }>; usage: { output_tokens: number } };
        assert.equal(message.model, PUBLIC_MODEL);
        assert.deepEqual(
          message.content.map((block) => block.type),
          ['server_tool_use', 'text'],
        );
      } else {
        assert.ok(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'), text);
      }
    }
  });

  it('a stream without usage is passed on as sent and billed on an estimate from the forwarded events', async () => {
    const text = await (await post({ ...CLIENT_BODY, stream: true, messages: [{ role: 'user', content: 'no usage' }] })).text();
    assert.ok(!text.includes('"usage"'), text);
    assert.ok(text.includes('"text":"jour"') && text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'), text);
  });

  it('the ledger rows carry the dialect and the tokens read from the upstream bytes', async () => {
    const sqlite = new Database(db, { readonly: true });
    try {
      type Row = { provider: string; dialect: string; prompt_tokens: number; cached_prompt_tokens: number; cache_write_tokens: number; completion_tokens: number; status: string };
      const query = sqlite.prepare('SELECT provider, dialect, prompt_tokens, cached_prompt_tokens, cache_write_tokens, completion_tokens, status FROM ledger_requests');
      let rows: Row[] = [];
      for (let i = 0; i < 200; i++) {
        rows = query.all() as Row[];
        if (rows.some((r) => r.completion_tokens === 15) && rows.some((r) => r.completion_tokens === 5)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(
        rows.every((r) => r.dialect === 'anthropic-messages'),
        JSON.stringify(rows),
      );
      const pick = (completion: number) => rows.find((r) => r.status === 'ok' && r.provider === 'anthropic' && r.completion_tokens === completion);
      // JSON: input 20 + cache read 100 + cache write 7; stream: message_start's 472 + 128 + 10, message_delta's 15.
      assert.deepEqual(pick(5), {
        provider: 'anthropic',
        dialect: 'anthropic-messages',
        prompt_tokens: 127,
        cached_prompt_tokens: 100,
        cache_write_tokens: 7,
        completion_tokens: 5,
        status: 'ok',
      });
      assert.deepEqual(pick(15), {
        provider: 'anthropic',
        dialect: 'anthropic-messages',
        prompt_tokens: 610,
        cached_prompt_tokens: 128,
        cache_write_tokens: 10,
        completion_tokens: 15,
        status: 'ok',
      });
      // 'Bonjour' is a few tokens, counted by Herd's tokenizer from the events that reached the client.
      const estimatedQuery = sqlite.prepare("SELECT completion_tokens FROM ledger_requests WHERE estimated = 1 AND provider = 'anthropic' AND status = 'ok'");
      let estimated: Array<{ completion_tokens: number }> = [];
      for (let i = 0; i < 200 && estimated.length === 0; i++) {
        estimated = estimatedQuery.all() as Array<{ completion_tokens: number }>;
        if (estimated.length === 0) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(estimated.length === 1 && (estimated[0]?.completion_tokens ?? 0) > 0 && (estimated[0]?.completion_tokens ?? 0) < 5, JSON.stringify(estimated));
    } finally {
      sqlite.close();
    }
  });
});
