// The Anthropic Messages ingress through Herd's real HTTP interface, with the official `@anthropic-ai/sdk`
// as the client, in front of local upstreams speaking Anthropic's and OpenAI's wire formats (faults included).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { anthropicErrorBody, anthropicMessage, openAIChunk, openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockHandler, type MockUpstream, type SseFrame } from '../gateway/helpers/mock-upstream.ts';
import { postThroughBothEntries, withoutRequestIds } from './post-through-both-entries.ts';

const MASTER = 'sk-herd-master-key-for-the-anthropic-tests-0123456789';
const ENV = { HOLYSHEEP_API_KEY: 'sk-upstream-hs', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_ANT_MASTER: MASTER };

/** Anthropic's own streaming sequence for a thinking block, then text (Messages API "Streaming messages"). */
function thinkingFrames(model: string): SseFrame[] {
  const frame = (data: Record<string, unknown>): SseFrame => ({ event: String(data.type), data });
  return [
    frame({
      type: 'message_start',
      message: { id: 'msg_up', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 30, output_tokens: 1 } },
    }),
    frame({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    frame({ type: 'ping' }),
    frame({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think. ' } }),
    frame({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Yes.' } }),
    frame({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-abc' } }),
    frame({ type: 'content_block_stop', index: 0 }),
    frame({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
    frame({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Bon' } }),
    frame({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'jour' } }),
    frame({ type: 'content_block_stop', index: 1 }),
    frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }),
    frame({ type: 'message_stop' }),
  ];
}

/** An OpenAI stream that calls a tool: the id and name first, the arguments in pieces. */
function toolCallFrames(model: string): SseFrame[] {
  return [
    { data: openAIChunk(model, { role: 'assistant', content: null }) },
    { data: openAIChunk(model, { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }) },
    { data: openAIChunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) },
    { data: openAIChunk(model, { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }) },
    { data: openAIChunk(model, {}, 'tool_calls') },
    { data: { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 } } },
    { data: '[DONE]' },
  ];
}

type AnthropicMode = 'text' | 'thinking' | 'overloaded' | 'mid-stream-error';

describe('Anthropic Messages ingress with the official Anthropic SDK', () => {
  let anthropicUpstream: MockUpstream;
  let relay: MockUpstream;
  let server: HerdServer;
  let client: Anthropic;
  let dir: string;
  let db: string;
  let mode: AnthropicMode = 'text';

  const anthropicHandler: MockHandler = async (req, res) => {
    const body = req.body as { stream?: boolean; model: string };
    if (mode === 'overloaded') return sendJson(res, 529, anthropicErrorBody(529));
    if (mode === 'mid-stream-error') {
      const frames = thinkingFrames(body.model).slice(0, 2);
      frames.push({ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
      return sendSse(res, frames);
    }
    if (mode === 'thinking' && body.stream) return sendSse(res, thinkingFrames(body.model));
    if (mode === 'thinking') {
      return sendJson(res, 200, {
        ...anthropicMessage(body.model, 'Bonjour'),
        content: [
          { type: 'thinking', thinking: 'Let me think.', signature: 'sig-json' },
          { type: 'text', text: 'Bonjour' },
        ],
      });
    }
    return sendJson(res, 200, anthropicMessage(body.model, 'Bonjour from Claude'));
  };
  const relayHandler: MockHandler = async (req, res) => {
    const body = req.body as { stream?: boolean; model: string };
    if (body.stream) return sendSse(res, toolCallFrames(body.model));
    return sendJson(res, 200, openAICompletion(body.model, 'Bonjour from the relay'));
  };

  before(async () => {
    anthropicUpstream = await startMockUpstream(anthropicHandler);
    relay = await startMockUpstream(relayHandler);
    dir = mkdtempSync(join(tmpdir(), 'herd-anthropic-e2e-'));
    db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_ANT_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  holysheep: { type: openai, base_url: "${relay.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${anthropicUpstream.url}", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  claude-sonnet-4-5:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic }]
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: holysheep }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
    client = new Anthropic({ apiKey: MASTER, baseURL: server.httpUrl, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    await anthropicUpstream?.close();
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lastUpstreamBody = (upstream: MockUpstream) => upstream.requests.at(-1)?.body as Record<string, unknown>;

  it('answers a Message from an Anthropic upstream, forwarding anthropic-version and anthropic-beta unchanged', async () => {
    mode = 'text';
    // Older API versions' sampling settings, which this SDK no longer types; Herd still takes them.
    const samplingNotInThisSdk = { top_k: 5, temperature: 0.5 };
    const message = await client.messages.create(
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hello' }],
        stop_sequences: ['END'],
        ...samplingNotInThisSdk,
      },
      { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31', 'anthropic-version': '2023-06-01' } },
    );
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.deepEqual(message.content, [{ type: 'text', text: 'Bonjour from Claude' }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.input_tokens, 20);
    assert.equal(message.usage.output_tokens, 5);
    const upstream = anthropicUpstream.requests.at(-1);
    assert.equal(upstream?.headers['anthropic-beta'], 'prompt-caching-2024-07-31');
    assert.equal(upstream?.headers['anthropic-version'], '2023-06-01');
    assert.equal(upstream?.headers['x-api-key'], 'sk-upstream-ant', "Herd's provider key, never the client's");
    const body = lastUpstreamBody(anthropicUpstream);
    assert.equal(body.max_tokens, 256);
    assert.equal(body.top_k, 5);
    assert.equal(body.temperature, 0.5);
    assert.deepEqual(body.stop_sequences, ['END']);
    // Pass-through: the block-level breakpoint goes up where the client put it, with no top-level one added.
    assert.deepEqual(body.system, [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    assert.equal(body.cache_control, undefined);
  });

  it('translates to an OpenAI-compatible upstream and back, and x-api-key or Bearer both authenticate', async () => {
    const viaBearer = new Anthropic({ authToken: MASTER, apiKey: null, baseURL: server.httpUrl, maxRetries: 0 });
    for (const sdk of [client, viaBearer]) {
      const message = await sdk.messages.create({ model: 'gpt-4.1', max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
      assert.deepEqual(message.content, [{ type: 'text', text: 'Bonjour from the relay' }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.model, 'gpt-4.1');
      // OpenAI's prompt_tokens (12) include the 4 cached; Anthropic's input_tokens do not.
      assert.deepEqual([message.usage.input_tokens, message.usage.cache_read_input_tokens, message.usage.output_tokens], [8, 4, 3]);
    }
    const body = lastUpstreamBody(relay);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    assert.equal(body.max_tokens, 64);
  });

  it('streams thinking and text with the SDK helpers: finalMessage has the thinking block with its signature', async () => {
    mode = 'thinking';
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'think first' }],
    });
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    assert.equal(text, 'Bonjour');
    assert.deepEqual(final.content, [
      { type: 'thinking', thinking: 'Let me think. Yes.', signature: 'sig-abc' },
      { type: 'text', text: 'Bonjour' },
    ]);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.input_tokens, 30);
    assert.equal(final.usage.output_tokens, 12);
    assert.deepEqual(lastUpstreamBody(anthropicUpstream).thinking, { type: 'enabled', budget_tokens: 1024 });
  });

  it('sends the named events exactly as the Anthropic upstream does (its ping after the first block start included)', async () => {
    mode = 'thinking';
    const res = await fetch(`${server.httpUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': MASTER, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'think' }] }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.match(res.headers.get('request-id') ?? '', /^[0-9a-f-]{36}$/, "Anthropic's request-id header");
    assert.equal(res.headers.get('x-request-id'), res.headers.get('request-id'));
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e !== '')
      .map((e) => {
        const [eventLine, dataLine] = e.split('\n');
        const name = eventLine?.replace(/^event: /, '');
        const data = JSON.parse(dataLine?.replace(/^data: /, '') ?? '') as { type: string; delta?: { type?: string } };
        assert.equal(data.type, name, 'the event name and data.type agree');
        return data.delta?.type ? `${name}:${data.delta.type}` : name;
      });
    assert.deepEqual(events, [
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta:thinking_delta',
      'content_block_delta:thinking_delta',
      'content_block_delta:signature_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('a non-streamed thinking answer keeps its signature', async () => {
    mode = 'thinking';
    const message = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'json' }],
    });
    assert.deepEqual(message.content[0], { type: 'thinking', thinking: 'Let me think.', signature: 'sig-json' });
  });

  it('runs a tool_use round trip, streamed from an OpenAI upstream', async () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const final = await client.messages
      .stream({ model: 'gpt-4.1', max_tokens: 200, tools, tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'Weather in Paris?' }] })
      .finalMessage();
    assert.deepEqual(final.content, [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]);
    assert.equal(final.stop_reason, 'tool_use');
    assert.deepEqual([final.usage.input_tokens, final.usage.output_tokens], [40, 9]);
    const first = lastUpstreamBody(relay);
    assert.deepEqual(first.tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: tools[0]?.input_schema } }]);
    assert.equal(first.tool_choice, 'required');

    const answer = await client.messages.create({
      model: 'gpt-4.1',
      max_tokens: 200,
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: final.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny, 21°C' }] },
      ],
    });
    assert.deepEqual(answer.content, [{ type: 'text', text: 'Bonjour from the relay' }]);
    const second = lastUpstreamBody(relay);
    assert.deepEqual(second.messages, [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21°C' },
    ]);
  });

  it('counts tokens', async () => {
    const count = await client.messages.countTokens({ model: 'claude-sonnet-4-5', system: 'Be brief.', messages: [{ role: 'user', content: 'How many tokens is this?' }] });
    assert.ok(count.input_tokens > 5 && count.input_tokens < 40, String(count.input_tokens));
  });

  it('lists models in Anthropic’s shape for Anthropic clients and OpenAI’s otherwise', async () => {
    const page = await client.models.list();
    assert.deepEqual(
      page.data.map((m) => [m.type, m.id]),
      [
        ['model', 'claude-sonnet-4-5'],
        ['model', 'gpt-4.1'],
      ],
    );
    const openai = (await (await fetch(`${server.httpUrl}/v1/models`, { headers: { authorization: `Bearer ${MASTER}` } })).json()) as { object: string };
    assert.equal(openai.object, 'list');
  });

  it('answers errors in Anthropic’s shape: a bad key, an unknown model, a bad request, an overloaded upstream', async () => {
    const wrong = new Anthropic({ apiKey: 'sk-herd-not-a-key', baseURL: server.httpUrl, maxRetries: 0 });
    await assert.rejects(wrong.messages.create({ model: 'gpt-4.1', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.AuthenticationError);
      assert.equal(err.status, 401);
      assert.equal((err.error as { error: { type: string } }).error.type, 'authentication_error');
      return true;
    });
    await assert.rejects(client.messages.create({ model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.NotFoundError);
      // The SDK reads request-id into the error, as it does from Anthropic's API.
      assert.match(err.requestID ?? '', /^[0-9a-f-]{36}$/);
      assert.equal((err.error as { error: { type: string } }).error.type, 'not_found_error');
      return true;
    });
    const missingMax = await fetch(`${server.httpUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': MASTER },
      body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(missingMax.status, 400);
    assert.deepEqual(await missingMax.json(), { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    mode = 'overloaded';
    await assert.rejects(client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.InternalServerError);
      assert.equal(err.status, 529);
      assert.equal((err.error as { error: { type: string } }).error.type, 'overloaded_error');
      return true;
    });
    mode = 'text';
  });

  it('an upstream fault mid-stream reaches the client as an error event', async () => {
    mode = 'mid-stream-error';
    const stream = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'fault' }] });
    await assert.rejects(stream.finalMessage(), (err: unknown) => {
      assert.ok(err instanceof Anthropic.APIError);
      assert.equal((err.error as { error: { type: string } }).error.type, 'overloaded_error');
      return true;
    });
    mode = 'text';
  });

  it('a plain body (the fast path) and a gzipped or chunked one (Fastify) get the same answer: messages, streams, count_tokens, errors', async () => {
    mode = 'text';
    const url = `${server.httpUrl}/v1/messages`;
    const viaApiKey = { 'content-type': 'application/json', 'x-api-key': MASTER, 'anthropic-version': '2023-06-01' };
    const viaBearer = { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` };
    const cases: Array<{ url: string; headers: Record<string, string>; body: unknown; status: number; type: RegExp }> = [
      { url, headers: viaApiKey, body: { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, status: 200, type: /^application\/json/ },
      { url, headers: viaBearer, body: { model: 'gpt-4.1', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, status: 200, type: /^application\/json/ },
      {
        url,
        headers: viaApiKey,
        body: { model: 'gpt-4.1', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'weather?' }] },
        status: 200,
        type: /^text\/event-stream/,
      },
      {
        url: `${url}/count_tokens`,
        headers: viaApiKey,
        body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'How many tokens is this?' }] },
        status: 200,
        type: /^application\/json/,
      },
      {
        url,
        headers: { ...viaApiKey, 'x-api-key': 'sk-herd-not-a-key' },
        body: { model: 'gpt-4.1', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
        status: 401,
        type: /^application\/json/,
      },
      { url, headers: viaApiKey, body: { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] }, status: 400, type: /^application\/json/ },
    ];
    for (const c of cases) {
      const [plain, ...others] = await postThroughBothEntries(c.url, c.headers, JSON.stringify(c.body));
      assert.equal(plain!.status, c.status, plain!.text);
      assert.match(plain!.contentType ?? '', c.type);
      if (c.status >= 400) assert.equal((JSON.parse(plain!.text) as { type: string }).type, 'error', "Anthropic's error shape");
      for (const other of others) {
        assert.equal(other.status, plain!.status, `${other.entry}: ${other.text}`);
        assert.equal(other.contentType, plain!.contentType, other.entry);
        assert.equal(withoutRequestIds(other.text), withoutRequestIds(plain!.text), other.entry);
      }
    }
  });

  it('writes a ledger row for every answered request', async () => {
    const sqlite = new Database(db, { readonly: true });
    try {
      // Answered requests' rows commit before their last byte; a failed request's row follows in the next batch.
      for (let i = 0; i < 400; i++) {
        const { ok } = sqlite.prepare("SELECT count(*) AS ok FROM ledger_requests WHERE status = 'ok'").get() as { ok: number };
        const { failed } = sqlite.prepare("SELECT count(*) AS failed FROM ledger_requests WHERE status != 'ok'").get() as { failed: number };
        if (ok >= 8 && failed >= 1) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const rows = sqlite.prepare('SELECT model, status, http_status, dialect FROM ledger_requests ORDER BY started_at').all() as Array<{
        model: string;
        status: string;
        http_status: number;
        dialect: string;
      }>;
      assert.ok(rows.filter((r) => r.status === 'ok').length >= 8, JSON.stringify(rows));
      assert.ok(
        rows.every((r) => r.dialect === 'anthropic-messages'),
        JSON.stringify(rows),
      );
      // The row records the status the Anthropic client got (529 overloaded), not OpenAI's 503.
      assert.ok(
        rows.some((r) => r.status !== 'ok' && r.http_status === 529),
        JSON.stringify(rows),
      );
    } finally {
      sqlite.close();
    }
  });
});
