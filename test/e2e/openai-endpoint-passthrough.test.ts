// /v1/responses and /v1/completions passed through to an OpenAI-compatible upstream that offers those
// endpoints (`endpoints: [responses, completions]`): the upstream receives the client's body with only
// the model replaced, the client gets the upstream's bytes (JSON and SSE) with only the model renamed,
// through raw HTTP and the `openai` SDK; the ledger has the dialect and the usage the bytes carried. A
// provider without the endpoint, and a fallback after a failed pass-through attempt, are bridged onto chat.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { anthropicMessage, openAIChunk, openAICompletion, openAIStreamFrames } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-endpoint-pass-tests-01';
const ENV = { OA_API_KEY: 'sk-upstream-oa', RELAY_API_KEY: 'sk-upstream-relay', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_TEST_MASTER: MASTER };
const UP = 'gpt-5-2025-08-07';
const renamed = (text: string) => text.split(`"model":"${UP}"`).join('"model":"gpt-5"');

// Fields Herd does not model (x_extra, obfuscation, annotations, a reasoning item) and OpenAI's key order.
const RESPONSE_TEXT =
  `{"id":"resp_up1","object":"response","created_at":1741569952,"status":"completed","background":false,"error":null,"incomplete_details":null,` +
  `"instructions":"Be brief.","model":"${UP}","output":[{"id":"rs_1","type":"reasoning","summary":[]},` +
  `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Bonjour","annotations":[],"logprobs":[]}]}],` +
  `"parallel_tool_calls":true,"store":false,"usage":{"input_tokens":11,"input_tokens_details":{"cached_tokens":3},"output_tokens":4,` +
  `"output_tokens_details":{"reasoning_tokens":1},"total_tokens":15},"x_extra":{"kept":true}}`;

const event = (type: string, seq: number, rest: string) => `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq},${rest}}\n\n`;
const RESP_HEAD = `"id":"resp_s1","object":"response","created_at":1741569952,"model":"${UP}"`;
const RESPONSE_EVENTS = [
  event('response.created', 0, `"response":{${RESP_HEAD},"status":"in_progress","output":[],"usage":null,"x_extra":1}`),
  event('response.in_progress', 1, `"response":{${RESP_HEAD},"status":"in_progress","output":[],"usage":null,"x_extra":1}`),
  event('response.output_item.added', 2, `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`),
  event('response.content_part.added', 3, `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`),
  event('response.output_text.delta', 4, `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Bon","logprobs":[],"obfuscation":"zz"`),
  event('response.output_text.delta', 5, `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"jour","logprobs":[],"obfuscation":"zy"`),
  event('response.output_text.done', 6, `"item_id":"msg_1","output_index":0,"content_index":0,"text":"Bonjour","logprobs":[]`),
  event('response.content_part.done', 7, `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Bonjour","annotations":[]}`),
  event(
    'response.output_item.done',
    8,
    `"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Bonjour","annotations":[]}]}`,
  ),
  event(
    'response.completed',
    9,
    `"response":{${RESP_HEAD},"status":"completed","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant",` +
      `"content":[{"type":"output_text","text":"Bonjour","annotations":[]}]}],"usage":{"input_tokens":21,"input_tokens_details":{"cached_tokens":5},` +
      `"output_tokens":6,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":27},"x_extra":1}`,
  ),
];

const COMPLETION_TEXT =
  `{"id":"cmpl-up1","object":"text_completion","created":1741569952,"model":"${UP}","choices":[{"text":" Bonjour","index":0,"logprobs":null,"finish_reason":"stop"}],` +
  `"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7},"system_fingerprint":null,"x_extra":true}`;
const completionChunk = (text: string, finish: string | null) =>
  `{"id":"cmpl-s1","object":"text_completion","created":1741569952,"choices":[{"text":"${text}","index":0,"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}],"model":"${UP}","x_extra":1}`;
const COMPLETION_CHUNKS = [completionChunk('Bon', null), completionChunk('jour', null), completionChunk('', 'stop')];
const COMPLETION_USAGE = `{"id":"cmpl-s1","object":"text_completion","created":1741569952,"choices":[],"model":"${UP}","usage":{"prompt_tokens":8,"completion_tokens":3,"total_tokens":11}}`;

interface Body {
  stream?: boolean;
  input?: unknown;
  prompt?: unknown;
}

describe('Responses and completions pass-through', () => {
  let oa: MockUpstream;
  let relay: MockUpstream;
  let anthropic: MockUpstream;
  let server: HerdServer;
  let client: OpenAI;
  let dir: string;
  let db: string;
  let oaFails = false;

  before(async () => {
    oa = await startMockUpstream(async (req, res) => {
      const body = req.body as Body;
      if (oaFails) return sendJson(res, 500, { error: { message: 'boom', type: 'server_error' } });
      if (req.url === '/v1/responses' && body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (body.input === 'fault') {
          // A failure after content: the client already has the first events, so no fallback can answer instead.
          for (const text of RESPONSE_EVENTS.slice(0, 5)) res.write(text);
          setTimeout(() => res.end(event('error', 5, '"code":"server_error","message":"The model broke.","param":null')), 20);
          return;
        }
        for (const text of RESPONSE_EVENTS) res.write(text);
        res.end();
        return;
      }
      if (req.url === '/v1/responses') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(RESPONSE_TEXT);
        return;
      }
      if (req.url === '/v1/completions' && body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (body.prompt === 'fault') {
          res.write(`data: ${COMPLETION_CHUNKS[0]}\n\n`);
          setTimeout(() => res.end('data: {"choices": [\n\n'), 20);
          return;
        }
        for (const text of [...COMPLETION_CHUNKS, COMPLETION_USAGE]) res.write(`data: ${text}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      if (req.url === '/v1/completions') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(COMPLETION_TEXT);
        return;
      }
      sendJson(res, 404, { error: { message: `no ${req.url} here`, type: 'invalid_request_error' } });
    });
    relay = await startMockUpstream(async (req, res) => {
      const custom = (req.body as { tools?: Array<{ type: string }> }).tools?.some((tool) => tool.type === 'custom') === true;
      if (custom && (req.body as Body).stream === true) {
        const call = (delta: Record<string, unknown>, finish: string | null = null) => openAIChunk('gpt-4.1', { tool_calls: [{ index: 0, ...delta }] }, finish);
        await sendSse(res, [
          { data: call({ id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '' } }) },
          { data: call({ custom: { input: '*** Begin' } }) },
          { data: call({ custom: { input: ' Patch' } }) },
          { data: openAIChunk('gpt-4.1', {}, 'tool_calls') },
          { data: '[DONE]' },
        ]);
        return;
      }
      if (custom) {
        const answer = openAICompletion('gpt-4.1', '');
        (answer.choices as Array<Record<string, unknown>>)[0] = {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } }] },
          finish_reason: 'tool_calls',
        };
        sendJson(res, 200, answer);
        return;
      }
      if ((req.body as Body).stream === true) await sendSse(res, openAIStreamFrames('gpt-4.1', ['Hello ', 'from chat']));
      else sendJson(res, 200, openAICompletion('gpt-4.1', 'Hello from chat'));
    });
    anthropic = await startMockUpstream((_req, res) => sendJson(res, 200, anthropicMessage('claude-sonnet-4-5', 'Bonjour from Claude')));
    dir = mkdtempSync(join(tmpdir(), 'herd-endpoint-pass-'));
    db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  oa: { type: openai, base_url: "${oa.url}/v1", endpoints: [responses, completions], timeout_ms: 2000, retry: { attempts: 1 } }
  relay: { type: openai, base_url: "${relay.url}/v1", timeout_ms: 2000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${anthropic.url}", timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-5:
    price: { input: 1.25, output: 10.00 }
    deployments: [{ provider: oa, upstream_model: ${UP} }]
    fallbacks: [gpt-4.1]
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
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
    await server?.close();
    await oa?.close();
    await relay?.close();
    await anthropic?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    oaFails = false;
    oa.requests.length = 0;
    relay.requests.length = 0;
  });

  const post = (path: string, body: Record<string, unknown>) =>
    fetch(`${server.httpUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const ledgerRow = async (dialect: string, promptTokens: number) => {
    const read = () => {
      const sqlite = new Database(db, { readonly: true });
      try {
        return sqlite.prepare('SELECT * FROM ledger_requests WHERE dialect = ? AND prompt_tokens = ? ORDER BY started_at DESC LIMIT 1').get(dialect, promptTokens) as
          | Record<string, unknown>
          | undefined;
      } finally {
        sqlite.close();
      }
    };
    // The ledger flushes in groups: wait for the row rather than for a time.
    for (let i = 0; i < 200 && read() === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    return read();
  };

  it('Responses JSON: the upstream gets the client body (model replaced), the client the upstream bytes (model renamed)', async () => {
    const sent = {
      model: 'gpt-5',
      instructions: 'Be brief.',
      input: [{ role: 'user', content: 'hello' }],
      store: false,
      temperature: 0.5,
      include: ['reasoning.encrypted_content'],
    };
    const res = await post('/v1/responses', sent);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), renamed(RESPONSE_TEXT));
    assert.equal(oa.requests.length, 1);
    assert.equal(oa.requests[0]!.url, '/v1/responses');
    assert.deepEqual(oa.requests[0]!.body, { ...sent, model: UP });
    const row = await ledgerRow('openai-responses', 11);
    assert.equal(row?.completion_tokens, 4);
    assert.equal(row?.cached_prompt_tokens, 3);
    assert.equal(row?.reasoning_tokens, 1);
    assert.equal(row?.estimated, 0);
    assert.equal(row?.model, 'gpt-5');
  });

  it('Responses SSE: the upstream events byte for byte, model renamed; usage from response.completed in the ledger', async () => {
    const sent = { model: 'gpt-5', input: 'hello', stream: true, store: false };
    const res = await post('/v1/responses', sent);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), RESPONSE_EVENTS.map(renamed).join(''));
    assert.deepEqual(oa.requests[0]!.body, { ...sent, model: UP });
    const row = await ledgerRow('openai-responses', 21);
    assert.equal(row?.completion_tokens, 6);
    assert.equal(row?.cached_prompt_tokens, 5);
    assert.equal(row?.status, 'ok');
  });

  it('the openai SDK: responses.create and responses.stream read the passed-through answer', async () => {
    const answer = await client.responses.create({ model: 'gpt-5', input: 'hello', store: false });
    assert.equal(answer.output_text, 'Bonjour');
    assert.equal(answer.model, 'gpt-5');
    assert.deepEqual((answer as unknown as { x_extra: unknown }).x_extra, { kept: true });
    const stream = client.responses.stream({ model: 'gpt-5', input: 'hello', store: false });
    let text = '';
    for await (const e of stream) if (e.type === 'response.output_text.delta') text += e.delta;
    const final = await stream.finalResponse();
    assert.equal(text, 'Bonjour');
    assert.equal(final.output_text, 'Bonjour');
    assert.equal(final.usage?.input_tokens, 21);
  });

  it('completions JSON and SSE: the client body goes on (include_usage forced on streams), the bytes come back', async () => {
    const sent = { model: 'gpt-5', prompt: 'Say hello', max_tokens: 16, temperature: 0 };
    const res = await post('/v1/completions', sent);
    assert.equal(await res.text(), renamed(COMPLETION_TEXT));
    assert.equal(oa.requests[0]!.url, '/v1/completions');
    assert.deepEqual(oa.requests[0]!.body, { ...sent, model: UP });

    const streamed = { model: 'gpt-5', prompt: 'Say hello', stream: true };
    const text = await (await post('/v1/completions', streamed)).text();
    assert.equal(text, `${COMPLETION_CHUNKS.map((t) => `data: ${renamed(t)}\n\n`).join('')}data: [DONE]\n\n`);
    assert.deepEqual(oa.requests[1]!.body, { ...streamed, model: UP, stream_options: { include_usage: true } });
    const withUsage = await (await post('/v1/completions', { ...streamed, stream_options: { include_usage: true } })).text();
    assert.equal(withUsage, `${[...COMPLETION_CHUNKS, COMPLETION_USAGE].map((t) => `data: ${renamed(t)}\n\n`).join('')}data: [DONE]\n\n`);
    const row = await ledgerRow('openai-completions', 8);
    assert.equal(row?.completion_tokens, 3);
    assert.equal(row?.estimated, 0);
  });

  it('the openai SDK: completions.create, streamed and not', async () => {
    const answer = await client.completions.create({ model: 'gpt-5', prompt: 'Say hello' });
    assert.equal(answer.choices[0]?.text, ' Bonjour');
    assert.equal(answer.usage?.total_tokens, 7);
    const stream = await client.completions.create({ model: 'gpt-5', prompt: 'Say hello', stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
      assert.equal(chunk.model, 'gpt-5');
    }
    assert.equal(text, 'Bonjour');
    assert.equal(usage?.prompt_tokens, 8);
  });

  it('a mid-stream fault: Responses ends with an error event continuing the numbering, completions with an error object and no [DONE]', async () => {
    const responses = await (await post('/v1/responses', { model: 'gpt-5', input: 'fault', stream: true })).text();
    assert.ok(responses.startsWith(RESPONSE_EVENTS.slice(0, 5).map(renamed).join('')), responses);
    const tail = responses.slice(RESPONSE_EVENTS.slice(0, 5).map(renamed).join('').length);
    assert.match(tail, /^event: error\ndata: \{"type":"error","code":"server_error","message":"[^"]*The model broke\.[^"]*","param":null,"sequence_number":5\}\n\n$/);
    assert.ok(!responses.includes('response.completed'));

    const completions = await (await post('/v1/completions', { model: 'gpt-5', prompt: 'fault', stream: true })).text();
    assert.ok(completions.startsWith(`data: ${renamed(COMPLETION_CHUNKS[0]!)}\n\n`), completions);
    assert.match(completions, /"error":\{.*stream interrupted after 1 chunk/);
    assert.ok(!completions.includes('[DONE]'));
  });

  it('a provider without the endpoint, and a fallback after a failed pass-through attempt, are bridged onto chat', async () => {
    const bridged = await client.responses.create({ model: 'gpt-4.1', input: 'hello' });
    assert.equal(bridged.output_text, 'Hello from chat');
    assert.equal(relay.requests[0]!.url, '/v1/chat/completions');
    const completion = await client.completions.create({ model: 'gpt-4.1', prompt: 'hello', stream: true });
    let text = '';
    for await (const chunk of completion) text += chunk.choices[0]?.text ?? '';
    assert.equal(text, 'Hello from chat');

    oaFails = true;
    const res = await post('/v1/responses', { model: 'gpt-5', input: 'hello', stream: true });
    assert.equal(res.headers.get('x-herd-provider'), 'relay');
    const events = await res.text();
    assert.match(events, /^event: response.created\n/);
    assert.match(events, /"model":"gpt-4.1"/);
    assert.match(events, /event: response.completed\n/);
    assert.equal(oa.requests[0]!.url, '/v1/responses');
    assert.equal(relay.requests.at(-1)!.url, '/v1/chat/completions');
  });

  const CUSTOM_TOOL = {
    type: 'custom' as const,
    name: 'apply_patch',
    description: 'Apply a patch',
    format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: /.+/' },
  };

  it('custom tools bridged onto chat: the tool and its grammar in chat shape, the custom call back as custom_tool_call (JSON and SSE)', async () => {
    const answer = await client.responses.create({ model: 'gpt-4.1', input: 'patch it', tools: [CUSTOM_TOOL], tool_choice: { type: 'custom', name: 'apply_patch' } });
    const sent = relay.requests[0]!.body as { tools: unknown[]; tool_choice: unknown };
    assert.deepEqual(sent.tools, [
      { type: 'custom', custom: { name: 'apply_patch', description: 'Apply a patch', format: { type: 'grammar', grammar: { definition: 'start: /.+/', syntax: 'lark' } } } },
    ]);
    assert.deepEqual(sent.tool_choice, { type: 'custom', custom: { name: 'apply_patch' } });
    const call = answer.output.find((item) => item.type === 'custom_tool_call');
    assert.equal(call?.type === 'custom_tool_call' ? call.input : undefined, '*** Begin Patch');
    assert.equal(call?.type === 'custom_tool_call' ? call.call_id : undefined, 'call_c1');

    // The next turn replays the call and its output: chat gets an assistant custom call and a tool message.
    await client.responses.create({
      model: 'gpt-4.1',
      tools: [CUSTOM_TOOL],
      input: [
        { role: 'user', content: 'patch it' },
        { type: 'custom_tool_call', call_id: 'call_c1', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'call_c1', output: 'done' },
      ],
    });
    const replay = relay.requests[1]!.body as { messages: unknown[] };
    assert.deepEqual(replay.messages.slice(1), [
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } }] },
      { role: 'tool', tool_call_id: 'call_c1', content: 'done' },
    ]);

    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'patch it', tools: [CUSTOM_TOOL] });
    const deltas: string[] = [];
    for await (const e of stream) if (e.type === 'response.custom_tool_call_input.delta') deltas.push(e.delta);
    const final = await stream.finalResponse();
    assert.deepEqual(deltas, ['*** Begin', ' Patch']);
    const streamed = final.output.find((item) => item.type === 'custom_tool_call');
    assert.equal(streamed?.type === 'custom_tool_call' ? streamed.input : undefined, '*** Begin Patch');
  });

  it('custom tools on chat completions pass to an OpenAI upstream as they are', async () => {
    const tools = [{ type: 'custom', custom: { name: 'apply_patch', format: { type: 'text' } } }];
    const res = await post('/v1/chat/completions', { model: 'gpt-4.1', messages: [{ role: 'user', content: 'patch it' }], tools });
    assert.equal(res.status, 200);
    assert.deepEqual((relay.requests[0]!.body as { tools: unknown }).tools, tools);
    const answer = (await res.json()) as { choices: Array<{ message: { tool_calls: unknown[] } }> };
    assert.deepEqual(answer.choices[0]!.message.tool_calls, [{ id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } }]);
  });

  it('custom tools are refused with a 400 naming the param on an Anthropic route', async () => {
    const res = await post('/v1/responses', { model: 'claude-sonnet-4.5', input: 'patch it', tools: [CUSTOM_TOOL] });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { param: string; message: string } };
    assert.equal(body.error.param, 'tools[0].type');
    assert.match(body.error.message, /Anthropic has no custom \(freeform\) tools/);
    const chat = await post('/v1/chat/completions', { model: 'claude-sonnet-4.5', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'custom', custom: { name: 'p' } }] });
    assert.equal(chat.status, 400);
    assert.equal(anthropic.requests.length, 0);
  });

  it('a cache hit replays the passed-through bytes (Responses and completions, JSON and SSE) with only a fresh id and created', async () => {
    const ids = /"id":"((?:resp|cmpl)[-_][^"]*)"/;
    // The answer's identity is the only thing a hit may change: blank it in both and the rest must be equal.
    const blank = (text: string) => text.replace(/"id":"(?:resp|cmpl)[-_][^"]*"/g, '"id":"?"').replace(/"created(_at)?":\d+/g, '"created$1":0');
    const cases: Array<[string, Record<string, unknown>]> = [
      ['/v1/responses', { model: 'gpt-5', input: 'cache json', temperature: 0 }],
      ['/v1/responses', { model: 'gpt-5', input: 'cache sse', temperature: 0, stream: true }],
      ['/v1/completions', { model: 'gpt-5', prompt: 'cache json', temperature: 0 }],
      ['/v1/completions', { model: 'gpt-5', prompt: 'cache sse', temperature: 0, stream: true }],
    ];
    for (const [path, body] of cases) {
      const first = await post(path, body);
      assert.equal(first.headers.get('x-herd-cache'), 'miss', path);
      const firstText = await first.text();
      let hit: Response | undefined;
      // The cache write follows the answer by a turn of the event loop: ask until it is there.
      for (let i = 0; i < 50; i++) {
        hit = await post(path, body);
        if (hit.headers.get('x-herd-cache') === 'hit') break;
        await hit.text();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(hit?.headers.get('x-herd-cache'), 'hit', `${path} ${JSON.stringify(body)}`);
      const text = (await hit?.text()) ?? '';
      assert.notEqual(ids.exec(text)?.[1], ids.exec(firstText)?.[1], `${path}: a fresh id`);
      assert.equal(blank(text), blank(firstText), `${path} stream ${body.stream === true}`);
      assert.ok(text.includes('x_extra'), 'fields Herd does not model come back');
    }
  });
});
