// OpenAI-family requests the way current clients send them, through the real server. A request Codex 0.171
// recorded (test/fixtures/clients/codex: client_metadata, a namespace tool, the hosted web_search tool, include,
// reasoning.summary) reaches an upstream offering /responses byte for byte; bridged onto chat completions or
// onto Anthropic it answers 200 naming what was dropped in x-herd-dropped, with namespace tool calls given back
// their name and namespace (JSON and stream); previous_response_id bridged is a 400 naming it; a strict route
// refuses; a chat request's unknown members reach an OpenAI-compatible upstream byte for byte.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { openAIChunk, openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-tolerant-openai-tests-01';
const ENV = { OA_API_KEY: 'sk-upstream-oa', RELAY_API_KEY: 'sk-upstream-relay', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_TEST_MASTER: MASTER };
type Json = Record<string, unknown>;

const CODEX = (JSON.parse(readFileSync('test/fixtures/clients/codex/model-gpt-5-codex-2.json', 'utf8')) as { body: Json }).body;
/** The recorded request, not streamed (the JSON answer is easier to read; the stream case below streams). */
const codexBody = (model: string, extra: Json = {}): Json => ({ ...CODEX, model, stream: false, ...extra });
const NAMESPACE = 'multi_agent_v1';
const FLAT = `${NAMESPACE}__spawn_agent`;

const RESPONSE_TEXT = `{"id":"resp_1","object":"response","created_at":1741569952,"status":"completed","model":"gpt-5-codex-up","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}],"usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11},"x_new":1}`;

const toolCallAnswer = (model: string): Json => {
  const answer = openAICompletion(model, '');
  (answer.choices as Json[])[0] = {
    index: 0,
    message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: FLAT, arguments: '{"task":"x"}' } }] },
    finish_reason: 'tool_calls',
  };
  return answer;
};

describe('tolerant OpenAI ingress (chat, Responses) through the real server', () => {
  let oa: MockUpstream;
  let relay: MockUpstream;
  let anthropic: MockUpstream;
  let server: HerdServer;
  let dir: string;

  before(async () => {
    oa = await startMockUpstream(async (req, res) => {
      if (req.url === '/v1/responses') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(RESPONSE_TEXT);
        return;
      }
      sendJson(res, 200, openAICompletion('gpt-up', 'chat ok'));
    });
    relay = await startMockUpstream(async (req, res) => {
      if ((req.body as Json).stream !== true) return sendJson(res, 200, toolCallAnswer('relay-up'));
      const call = (delta: Json, finish: string | null = null) => openAIChunk('relay-up', { tool_calls: [{ index: 0, ...delta }] }, finish);
      await sendSse(res, [
        { data: call({ id: 'call_1', type: 'function', function: { name: FLAT, arguments: '' } }) },
        { data: call({ function: { arguments: '{"task":"x"}' } }) },
        { data: openAIChunk('relay-up', {}, 'tool_calls') },
        { data: '[DONE]' },
      ]);
    });
    anthropic = await startMockUpstream((_req, res) =>
      sendJson(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-up',
        content: [{ type: 'tool_use', id: 'toolu_1', name: FLAT, input: { task: 'x' } }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 20, output_tokens: 5 },
      }),
    );
    dir = mkdtempSync(join(tmpdir(), 'herd-openai-tolerant-'));
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${join(dir, 'herd.db')}" }
billing: { currency: USD, ledger: "sqlite:${join(dir, 'herd.db')}", flush_interval_ms: 10 }
providers:
  oa: { type: openai, base_url: "${oa.url}/v1", endpoints: [responses], timeout_ms: 2000, retry: { attempts: 1 } }
  relay: { type: openai, base_url: "${relay.url}/v1", timeout_ms: 2000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${anthropic.url}", timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-5-codex:
    price: { input: 1.25, output: 10.00 }
    deployments: [{ provider: oa, upstream_model: gpt-5-codex-up }]
  relay-model:
    price: { input: 1.00, output: 2.00 }
    deployments: [{ provider: relay, upstream_model: relay-up }]
  claude:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: claude-up }]
  relay-strict:
    strict: true
    price: { input: 1.00, output: 2.00 }
    deployments: [{ provider: relay, upstream_model: relay-up }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
  });
  after(async () => {
    await server?.close();
    await oa?.close();
    await relay?.close();
    await anthropic?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    oa.requests.length = 0;
    relay.requests.length = 0;
    anthropic.requests.length = 0;
  });

  const post = (path: string, body: Json) =>
    fetch(`${server.httpUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('a recorded Codex request passes through to /responses byte for byte, only the model replaced', async () => {
    const body = codexBody('gpt-5-codex');
    const res = await post('/v1/responses', body);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-herd-dropped'), null);
    assert.equal(oa.requests[0]?.url, '/v1/responses');
    assert.equal(JSON.stringify(oa.requests[0]?.body), JSON.stringify({ ...body, model: 'gpt-5-codex-up' }));
    assert.match(await res.text(), /"x_new":1/);
  });

  it('bridged onto chat completions: 200, the dropped members named, the namespace flattened and the call restored', async () => {
    const res = await post('/v1/responses', codexBody('relay-model'));
    assert.equal(res.status, 200, await res.clone().text());
    const dropped = res.headers.get('x-herd-dropped')?.split(',') ?? [];
    for (const param of ['include', 'client_metadata', 'reasoning.summary', 'tools.8']) assert.ok(dropped.includes(param), `${param} in ${dropped.join(',')}`);
    const sent = relay.requests[0]?.body as { tools: Array<{ type: string; function: { name: string } }>; client_metadata?: unknown };
    assert.equal(relay.requests[0]?.url, '/v1/chat/completions');
    assert.equal(sent.client_metadata, undefined);
    assert.ok(sent.tools.some((t) => t.function.name === FLAT));
    assert.ok(!sent.tools.some((t) => t.type === 'web_search'));
    const answer = (await res.json()) as { output: Json[] };
    const call = answer.output.find((item) => item.type === 'function_call');
    assert.deepEqual([call?.name, call?.namespace, call?.arguments], ['spawn_agent', NAMESPACE, '{"task":"x"}']);
  });

  it('bridged onto chat completions, streamed: the call item carries its own name and namespace', async () => {
    const res = await post('/v1/responses', codexBody('relay-model', { stream: true }));
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('x-herd-dropped')?.includes('client_metadata'));
    const events = await res.text();
    const added = /event: response.output_item.added\ndata: (.*)\n/.exec(events)?.[1];
    const item = (JSON.parse(added ?? '{}') as { item: Json }).item;
    assert.deepEqual([item.type, item.name, item.namespace], ['function_call', 'spawn_agent', NAMESPACE]);
    assert.match(events, /event: response.completed\n/);
    assert.doesNotMatch(events, new RegExp(FLAT));
  });

  it('bridged onto Anthropic: 200 with x-herd-dropped, the tool_use given back as a namespaced function_call', async () => {
    const res = await post('/v1/responses', codexBody('claude'));
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok(res.headers.get('x-herd-dropped')?.split(',').includes('client_metadata'));
    const sent = anthropic.requests[0]?.body as { tools: Array<{ name: string }> };
    assert.ok(sent.tools.some((t) => t.name === FLAT));
    const answer = (await res.json()) as { output: Json[] };
    const call = answer.output.find((item) => item.type === 'function_call');
    assert.deepEqual([call?.name, call?.namespace], ['spawn_agent', NAMESPACE]);
  });

  it('previous_response_id bridged is a 400 naming it; passed through it reaches the upstream', async () => {
    const bridged = await post('/v1/responses', { model: 'relay-model', input: 'next', previous_response_id: 'resp_1' });
    assert.equal(bridged.status, 400);
    const error = ((await bridged.json()) as { error: { param: string; message: string } }).error;
    assert.equal(error.param, 'previous_response_id');
    assert.match(error.message, /no server-side state/);
    assert.equal(relay.requests.length, 0);
    const passed = await post('/v1/responses', { model: 'gpt-5-codex', input: 'next', previous_response_id: 'resp_1' });
    assert.equal(passed.status, 200);
    assert.equal((oa.requests[0]!.body as Json).previous_response_id, 'resp_1');
  });

  it('a strict route refuses what it would drop, naming it', async () => {
    const res = await post('/v1/responses', { model: 'relay-strict', input: 'hi', client_metadata: { a: '1' } });
    assert.equal(res.status, 400);
    const error = ((await res.json()) as { error: { param: string; message: string } }).error;
    assert.equal(error.param, 'client_metadata');
    assert.match(error.message, /strict/);
    const chat = await post('/v1/chat/completions', { model: 'relay-strict', messages: [{ role: 'user', content: 'hi' }], x_new: 1 });
    assert.equal(chat.status, 200, 'OpenAI chat onto an OpenAI-compatible upstream is not bridged: nothing to refuse');
    assert.equal(relay.requests.length, 1);
  });

  it('chat: unknown members at the top level and in a message reach an OpenAI-compatible upstream byte for byte', async () => {
    const body = {
      model: 'gpt-5-codex',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'hi', x_part: { deep: [1, 2] } }], x_message: true },
      ],
      x_top: { a: null, b: 'ü' },
      prompt_cache_retention: '24h',
      temperature: 0.5,
    };
    const res = await post('/v1/chat/completions', body);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-herd-dropped'), null);
    assert.equal(oa.requests[0]?.url, '/v1/chat/completions');
    assert.equal(JSON.stringify(oa.requests[0]?.body), JSON.stringify({ ...body, model: 'gpt-5-codex-up' }));

    const streamed = await post('/v1/chat/completions', { ...body, stream: true });
    await streamed.text();
    assert.deepEqual(oa.requests[1]?.body, { ...body, model: 'gpt-5-codex-up', stream: true, stream_options: { include_usage: true } });
  });

  it('chat bridged onto Anthropic: dropped members named, a refused content part a 400 naming it', async () => {
    const res = await post('/v1/chat/completions', { model: 'claude', messages: [{ role: 'user', content: 'hi', x_message: 1 }], prediction: { type: 'content', content: 'x' } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-herd-dropped'), 'prediction,messages.0.x_message');
    const audio = await post('/v1/chat/completions', {
      model: 'claude',
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
    });
    assert.equal(audio.status, 400);
    assert.equal(((await audio.json()) as { error: { param: string } }).error.param, 'messages.0.content.0');
  });
});
