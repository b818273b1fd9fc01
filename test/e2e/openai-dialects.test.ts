// POST /v1/responses and POST /v1/completions through the real server with the official `openai` SDK as
// the client, bridged onto chat in front of local upstreams speaking OpenAI's and Anthropic's wire formats.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { anthropicMessage, openAIChunk, openAICompletion, openAIErrorBody, openAIStreamFrames } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockUpstream, type RecordedRequest, type SseFrame } from '../gateway/helpers/mock-upstream.ts';
import { postThroughBothEntries, withoutRequestIds } from './post-through-both-entries.ts';

const MASTER = 'sk-herd-master-key-for-the-dialect-tests-0123456789';
const ENV = { HOLYSHEEP_API_KEY: 'sk-upstream-hs', ANTHROPIC_API_KEY: 'sk-upstream-ant', GEMINI_API_KEY: 'AIzaSy-upstream', HERD_DIALECT_MASTER: MASTER };

interface ChatBody {
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: unknown[];
  stream?: boolean;
  max_completion_tokens?: number;
  max_tokens?: number;
}

const TOOL_CALL = { id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

function toolCallCompletion(): Record<string, unknown> {
  return {
    id: 'chatcmpl-tool',
    object: 'chat.completion',
    created: 1741569952,
    model: 'gpt-4.1',
    choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [TOOL_CALL] }, finish_reason: 'tool_calls' }],
    usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 },
  };
}

function toolCallFrames(): SseFrame[] {
  return [
    {
      data: openAIChunk('gpt-4.1', {
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: TOOL_CALL.id, type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }),
    },
    { data: openAIChunk('gpt-4.1', { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) },
    { data: openAIChunk('gpt-4.1', { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }) },
    { data: openAIChunk('gpt-4.1', {}, 'tool_calls') },
    {
      data: {
        id: 'chatcmpl-s',
        object: 'chat.completion.chunk',
        created: 1694268190,
        model: 'gpt-4.1',
        choices: [],
        usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 },
      },
    },
    { data: '[DONE]' },
  ];
}

function anthropicFrames(parts: string[]): SseFrame[] {
  const frames: SseFrame[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } },
      },
    },
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
  ];
  for (const text of parts) frames.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } });
  frames.push(
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  return frames;
}

describe('OpenAI Responses and legacy completions, bridged onto chat', () => {
  let relay: MockUpstream;
  let anthropic: MockUpstream;
  let gemini: MockUpstream;
  let server: HerdServer;
  let client: OpenAI;
  let dir: string;
  let db: string;
  /** The next relay stream resets after this many frames. */
  let resetAfter: number | undefined;
  /** The next relay request is answered with this status and OpenAI's error body. */
  let failWith: number | undefined;

  const relayHandler = async (req: RecordedRequest, res: Parameters<Parameters<typeof startMockUpstream>[0]>[1]) => {
    const body = req.body as ChatBody;
    if (failWith !== undefined) {
      const code = failWith;
      failWith = undefined;
      sendJson(res, code, openAIErrorBody(code));
      return;
    }
    const wantsTool = body.tools !== undefined && body.messages.at(-1)?.role !== 'tool';
    if (body.stream) {
      const frames = wantsTool ? toolCallFrames() : openAIStreamFrames('gpt-4.1', ['Bon', 'jour']);
      const reset = resetAfter;
      resetAfter = undefined;
      await sendSse(res, frames, reset !== undefined ? { resetAfter: reset } : {});
    } else {
      sendJson(res, 200, wantsTool ? toolCallCompletion() : openAICompletion('gpt-4.1', 'Bonjour from the relay'));
    }
  };

  before(async () => {
    relay = await startMockUpstream(relayHandler);
    anthropic = await startMockUpstream(async (req, res) => {
      if ((req.body as ChatBody).stream) await sendSse(res, anthropicFrames(['Bonjour ', 'from Claude']));
      else sendJson(res, 200, anthropicMessage('claude-sonnet-4-5', 'Bonjour from Claude'));
    });
    const geminiUsage = { promptTokenCount: 7, candidatesTokenCount: 3, totalTokenCount: 10 };
    const geminiAnswer = (text: string, finish?: string) => ({
      candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
      usageMetadata: geminiUsage,
      modelVersion: 'gemini-2.5-flash',
      responseId: 'g1',
    });
    gemini = await startMockUpstream(async (req, res) => {
      if (req.url.includes(':streamGenerateContent')) await sendSse(res, [{ data: geminiAnswer('Bonjour ') }, { data: geminiAnswer('from Gemini', 'STOP') }]);
      else sendJson(res, 200, geminiAnswer('Bonjour from Gemini', 'STOP'));
    });
    dir = mkdtempSync(join(tmpdir(), 'herd-dialects-e2e-'));
    db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_DIALECT_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  holysheep: { type: openai, base_url: "${relay.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${anthropic.url}", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
  gemini: { type: gemini, base_url: "${gemini.url}", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: holysheep }]
  claude-sonnet-4.5:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5 }]
  gemini-2.5-flash:
    price: { input: 0.30, output: 2.50 }
    deployments: [{ provider: gemini }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
    client = new OpenAI({ apiKey: MASTER, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    await relay?.close();
    await anthropic?.close();
    await gemini?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    relay.requests.length = 0;
    anthropic.requests.length = 0;
    resetAfter = undefined;
    failWith = undefined;
  });

  it('responses: a string input and instructions become a chat request; the answer is a response object with usage', async () => {
    const { data, response } = await client.responses
      .create({ model: 'gpt-4.1', input: 'hello', instructions: 'Answer in French.', max_output_tokens: 64, temperature: 0.5, store: false })
      .withResponse();
    assert.equal(data.object, 'response');
    assert.match(data.id, /^resp_/);
    assert.equal(data.status, 'completed');
    assert.equal(data.model, 'gpt-4.1');
    assert.equal(data.output_text, 'Bonjour from the relay');
    assert.equal(data.output[0]?.type, 'message');
    assert.equal(data.instructions, 'Answer in French.');
    assert.equal(data.max_output_tokens, 64);
    assert.equal((data as { store?: boolean }).store, false, 'nothing is stored');
    assert.deepEqual(data.usage, {
      input_tokens: 12,
      input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    });
    assert.equal(response.headers.get('x-herd-model'), 'gpt-4.1');
    assert.equal(response.headers.get('x-herd-attempts'), '1');
    const sent = relay.requests[0]?.body as ChatBody;
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'hello' },
    ]);
    assert.equal(sent.max_completion_tokens, 64);
  });

  it('responses: streams the documented event sequence, numbered; the SDK helper assembles the final response', async () => {
    const stream = client.responses.stream({ model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello' }] }] });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    assert.equal(final.output_text, 'Bonjour');
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    assert.equal(completed.response.status, 'completed');
    assert.equal(completed.response.usage?.input_tokens, 9);
    assert.equal(completed.response.usage?.output_tokens, 2);
    assert.equal(completed.response.usage?.total_tokens, 11);
    assert.equal(new Set(events.map((e) => ('response' in e ? e.response.id : undefined)).filter(Boolean)).size, 1, 'one response id throughout');

    const raw = await client.responses.create({ model: 'gpt-4.1', input: 'hello', stream: true });
    let text = '';
    for await (const event of raw) if (event.type === 'response.output_text.delta') text += event.delta;
    assert.equal(text, 'Bonjour');
  });

  it('responses: a function tool round trip (function_call, then function_call_output), JSON and streamed', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
    ];
    const first = await client.responses.create({ model: 'gpt-4.1', input: 'Weather in Paris?', tools, tool_choice: 'auto' });
    const call = first.output[0];
    assert.equal(call?.type, 'function_call');
    assert.ok(call?.type === 'function_call');
    assert.equal(call.call_id, TOOL_CALL.id);
    assert.equal(call.name, 'get_weather');
    assert.equal(call.arguments, '{"city":"Paris"}');
    const sentTools = (relay.requests[0]!.body as ChatBody).tools;
    assert.deepEqual(sentTools, [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
      },
    ]);

    const second = await client.responses.create({
      model: 'gpt-4.1',
      tools,
      input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: call.call_id, output: '{"celsius":21}' }],
    });
    assert.equal(second.output_text, 'Bonjour from the relay');
    const replayed = (relay.requests[1]!.body as ChatBody).messages;
    assert.deepEqual(replayed.slice(1), [
      { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
      { role: 'tool', tool_call_id: TOOL_CALL.id, content: '{"celsius":21}' },
    ]);

    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'Weather in Paris?', tools });
    const types: string[] = [];
    let argumentDeltas = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.function_call_arguments.delta') argumentDeltas += event.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(argumentDeltas, '{"city":"Paris"}');
    assert.ok(types.includes('response.function_call_arguments.done'));
    const streamedCall = final.output[0];
    assert.ok(streamedCall?.type === 'function_call');
    assert.equal(streamedCall.arguments, '{"city":"Paris"}');
    assert.equal(streamedCall.call_id, TOOL_CALL.id);
  });

  it('responses: an Anthropic upstream behind it, JSON and streamed', async () => {
    const answer = await client.responses.create({ model: 'claude-sonnet-4.5', input: 'hello', instructions: 'Be brief.' });
    assert.equal(answer.output_text, 'Bonjour from Claude');
    assert.equal(answer.model, 'claude-sonnet-4.5');
    assert.equal(answer.usage?.input_tokens, 20);
    assert.equal((anthropic.requests[0]!.body as { system?: unknown }).system !== undefined, true, 'instructions reach Anthropic as its system prompt');
    const stream = client.responses.stream({ model: 'claude-sonnet-4.5', input: 'hello' });
    for await (const _event of stream) {
      /* to the end */
    }
    const final = await stream.finalResponse();
    assert.equal(final.output_text, 'Bonjour from Claude');
    assert.equal(final.usage?.output_tokens, 5);
  });

  it('responses and completions: a Gemini upstream behind them', async () => {
    const answer = await client.responses.create({ model: 'gemini-2.5-flash', input: 'hello' });
    assert.equal(answer.output_text, 'Bonjour from Gemini');
    assert.equal(answer.usage?.input_tokens, 7);
    const stream = client.responses.stream({ model: 'gemini-2.5-flash', input: 'hello' });
    for await (const _event of stream) {
      /* to the end */
    }
    assert.equal((await stream.finalResponse()).output_text, 'Bonjour from Gemini');
    const completion = await client.completions.create({ model: 'gemini-2.5-flash', prompt: 'hello' });
    assert.equal(completion.choices[0]?.text, 'Bonjour from Gemini');
  });

  it('the transport: a gzipped body is decoded, malformed JSON and a wrong method answer in OpenAI shape', async () => {
    const headers = { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' };
    const zipped = await fetch(`${server.httpUrl}/v1/responses`, {
      method: 'POST',
      headers: { ...headers, 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ model: 'gpt-4.1', input: 'hello' })),
    });
    assert.equal(zipped.status, 200);
    assert.equal(((await zipped.json()) as { object: string }).object, 'response');
    for (const path of ['/v1/responses', '/v1/completions']) {
      const broken = await fetch(`${server.httpUrl}${path}`, { method: 'POST', headers, body: '{"model": ' });
      assert.equal(broken.status, 400);
      assert.match(((await broken.json()) as { error: { message: string } }).error.message, /could not parse the JSON body/);
      const get = await fetch(`${server.httpUrl}${path}`, { headers });
      assert.equal(get.status, 405);
      assert.equal(((await get.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
    }
    const badGzip = await fetch(`${server.httpUrl}/v1/responses`, { method: 'POST', headers: { ...headers, 'content-encoding': 'gzip' }, body: 'not gzip' });
    assert.equal(badGzip.status, 400);
    assert.equal(((await badGzip.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
  });

  it('responses: errors in OpenAI shape: bad key, unknown model, previous_response_id, a required hosted tool; an offered one is dropped', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-herd-not-a-real-key-000000000000000000000', baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
    await assert.rejects(wrong.responses.create({ model: 'gpt-4.1', input: 'hi' }), OpenAI.AuthenticationError);
    await assert.rejects(client.responses.create({ model: 'gpt-5-turbo', input: 'hi' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.match(err.message, /gpt-5-turbo/);
      return true;
    });
    await assert.rejects(client.responses.create({ model: 'gpt-4.1', input: 'hi', previous_response_id: 'resp_123' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.param, 'previous_response_id');
      assert.match(err.message, /no server-side state/);
      return true;
    });
    // A tool_choice that requires a hosted tool: the bridged answer could not be what was asked.
    await assert.rejects(
      client.responses.create({ model: 'gpt-4.1', input: 'hi', tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.param, 'tool_choice');
        assert.match(err.message, /hosted tool web_search_preview/);
        return true;
      },
    );
    assert.equal(relay.requests.length, 0, 'nothing refused reached an upstream');
    // Merely offered, the hosted tool is left out and named.
    const offered = await client.responses.create({ model: 'gpt-4.1', input: 'hi', tools: [{ type: 'web_search' }] }).withResponse();
    assert.equal(offered.response.headers.get('x-herd-dropped'), 'tools.0');
    assert.equal((relay.requests[0]!.body as { tools?: unknown }).tools, undefined);
  });

  it('responses: an upstream failure before the first byte is an ordinary HTTP error, streaming or not', async () => {
    failWith = 503;
    await assert.rejects(client.responses.create({ model: 'gpt-4.1', input: 'hello', stream: true }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 503);
    failWith = 503;
    await assert.rejects(client.responses.create({ model: 'gpt-4.1', input: 'hello' }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 503);
  });

  it('responses: an upstream failure after the first byte ends the stream with response.failed', async () => {
    resetAfter = 2;
    const stream = await client.responses.create({ model: 'gpt-4.1', input: 'hello', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const last = events.at(-1);
    assert.equal(last?.type, 'response.failed');
    assert.ok(last?.type === 'response.failed');
    assert.equal(last.response.status, 'failed');
    assert.equal(last.response.error?.code, 'server_error');
    assert.ok(last.response.error?.message);
    assert.ok(
      events.some((e) => e.type === 'response.output_text.delta'),
      'the first text reached the client',
    );
    assert.equal(relay.requests.length, 1, 'no retry after the first byte');
  });

  it('completions: a prompt answered as text_completion, JSON and streamed, with usage on request', async () => {
    const { data, response } = await client.completions.create({ model: 'gpt-4.1', prompt: 'Say hello', max_tokens: 16, temperature: 0, stop: ['\n'] }).withResponse();
    assert.equal(data.object, 'text_completion');
    assert.match(data.id, /^cmpl-/);
    assert.equal(data.choices[0]?.text, 'Bonjour from the relay');
    assert.equal(data.choices[0]?.finish_reason, 'stop');
    assert.equal(data.usage?.total_tokens, 15);
    assert.equal(response.headers.get('x-herd-model'), 'gpt-4.1');
    const sent = relay.requests[0]?.body as ChatBody & { stop?: unknown };
    assert.deepEqual(sent.messages, [{ role: 'user', content: 'Say hello' }]);
    assert.deepEqual(sent.stop, ['\n']);

    const stream = await client.completions.create({ model: 'gpt-4.1', prompt: ['Say hello'], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'text_completion');
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'Bonjour');
    assert.equal(finish, 'stop');
    assert.equal(usage?.total_tokens, 11);

    resetAfter = 2;
    const cut = await client.completions.create({ model: 'gpt-4.1', prompt: 'Say hello', stream: true });
    let partial = '';
    await assert.rejects(async () => {
      for await (const chunk of cut) partial += chunk.choices[0]?.text ?? '';
    }, OpenAI.APIError);
    assert.equal(partial, 'Bon', 'a failure after the first byte is an error event, after the text sent so far');

    await assert.rejects(
      client.completions.create({ model: 'gpt-4.1', prompt: ['one', 'two'] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'prompt',
    );
    await assert.rejects(client.completions.create({ model: 'gpt-4.1', prompt: 'x', echo: true }), (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'echo');
  });

  it('every bridged request has its ledger row', async () => {
    const count = () => {
      const sqlite = new Database(db, { readonly: true });
      try {
        return sqlite.prepare("SELECT count(*) AS n FROM ledger_requests WHERE status = 'ok' AND prompt_tokens > 0").get() as { n: number };
      } finally {
        sqlite.close();
      }
    };
    const before = count().n;
    await client.responses.create({ model: 'gpt-4.1', input: 'ledger one' });
    const stream = await client.responses.create({ model: 'claude-sonnet-4.5', input: 'ledger two', stream: true });
    for await (const _event of stream) {
      /* to the end */
    }
    await client.completions.create({ model: 'gpt-4.1', prompt: 'ledger three' });
    // The ledger flushes in groups: wait for the rows rather than for a time.
    for (let i = 0; i < 200 && count().n < before + 3; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(count().n, before + 3);
  });

  it('a plain body (the fast path) and a gzipped or chunked one (Fastify) get the same answer: responses and completions, JSON, streamed, refused', async () => {
    const headers = { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' };
    const cases: Array<{ path: string; headers: Record<string, string>; body: unknown; status: number }> = [
      { path: '/v1/responses', headers, body: { model: 'gpt-4.1', instructions: 'Be brief.', input: 'hello' }, status: 200 },
      { path: '/v1/responses', headers, body: { model: 'gpt-4.1', input: 'hello', stream: true }, status: 200 },
      { path: '/v1/completions', headers, body: { model: 'gpt-4.1', prompt: 'Say hello', max_tokens: 16 }, status: 200 },
      { path: '/v1/completions', headers, body: { model: 'gpt-4.1', prompt: 'Say hello', stream: true }, status: 200 },
      {
        path: '/v1/responses',
        headers: { ...headers, authorization: 'Bearer sk-herd-not-a-real-key-000000000000000000000' },
        body: { model: 'gpt-4.1', input: 'hi' },
        status: 401,
      },
      { path: '/v1/completions', headers, body: { model: 'gpt-5-turbo', prompt: 'hi' }, status: 404 },
    ];
    for (const c of cases) {
      const [plain, ...others] = await postThroughBothEntries(`${server.httpUrl}${c.path}`, c.headers, JSON.stringify(c.body));
      assert.equal(plain!.status, c.status, plain!.text);
      for (const other of others) {
        assert.equal(other.status, plain!.status, `${c.path} ${other.entry}: ${other.text}`);
        assert.equal(other.contentType, plain!.contentType, `${c.path} ${other.entry}`);
        assert.equal(withoutRequestIds(other.text), withoutRequestIds(plain!.text), `${c.path} ${other.entry}`);
      }
    }
  });
});
