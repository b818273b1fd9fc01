// The gateway's spans through the real HTTP interface, exported over OTLP/HTTP protobuf to a local receiver:
// SERVER → operation → one CLIENT span per upstream attempt (GenAI conventions), traceparent in and out,
// streaming, embeddings, Anthropic Messages, no secret in any exported byte, and nothing at all when off.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { answerOpenAIEmbeddings } from '../gateway/helpers/embedding-upstreams.ts';
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
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';

const MASTER = 'sk-herd-master-key-for-the-tracing-tests-0123456789';
const RELAY_KEY = 'sk-upstream-relay-secret-4242';
const ANTHROPIC_KEY = 'sk-upstream-anthropic-secret-4343';
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

function configYaml(dir: string, relay: string, anthropic: string, tracing: string): string {
  return `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TRACE_MASTER, db: "${join(dir, 'herd.db')}" }
billing: { currency: USD, ledger: "sqlite:${join(dir, 'herd.db')}", flush_interval_ms: 10 }
${tracing}
providers:
  relay: { type: openai, base_url: "${relay}/v1", api_key_env: RELAY_KEY, timeout_ms: 2000, retry: { attempts: 2, base_ms: 1, cap_ms: 5 } }
  anthropic: { type: anthropic, base_url: "${anthropic}", timeout_ms: 2000, retry: { attempts: 1 } }
models:
  primary:
    price: { input: 1, output: 2 }
    deployments: [{ provider: relay, upstream_model: gpt-4.1 }]
    fallbacks: [claude]
  claude:
    price: { input: 3, output: 15 }
    deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5 }]
  embed:
    kind: embedding
    price: { input: 1, output: 0 }
    deployments: [{ provider: relay, upstream_model: text-embedding-3-small }]
`;
}

const ENV = { RELAY_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, HERD_TRACE_MASTER: MASTER };

async function post(server: HerdServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.httpUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json', 'user-agent': 'tracing-test/1', ...headers },
    body: JSON.stringify(body),
  });
}

const byKind = (spans: ReceivedSpan[], kind: number) => spans.filter((s) => s.kind === kind);

describe('gateway spans (tracing on, sampling 1.0)', () => {
  let relay: MockUpstream;
  let anthropic: MockUpstream;
  let relayScript: ScriptedUpstream;
  let receiver: OtlpReceiver;
  let server: HerdServer;
  let db: string;

  before(async () => {
    relayScript = scriptedUpstream({ okJson: openAICompletion('gpt-4.1', 'Bonjour'), okFrames: openAIStreamFrames('gpt-4.1', ['Bon', 'jour']), errorBody: openAIErrorBody });
    const anthropicScript = scriptedUpstream({ okJson: anthropicMessage('claude-sonnet-4-5', 'Hello from Claude'), okFrames: [], errorBody: anthropicErrorBody });
    relay = await startMockUpstream((req, res, raw) => (req.url.endsWith('/embeddings') ? answerOpenAIEmbeddings(req, res) : relayScript.handler(req, res, raw)));
    anthropic = await startMockUpstream(anthropicScript.handler);
    receiver = await startOtlpReceiver();
    const dir = mkdtempSync(join(tmpdir(), 'herd-gateway-tracing-'));
    db = join(dir, 'herd.db');
    const tracing = `tracing: { enabled: true, endpoint: "${receiver.url}", schedule_delay_ms: 20 }`;
    server = await startHerd(parseHerdConfig(configYaml(dir, relay.url, anthropic.url, tracing), join(dir, 'herd.yaml')), { env: ENV });
  });
  after(async () => {
    await server.close();
    await relay.close();
    await anthropic.close();
    await receiver.close();
  });
  beforeEach(() => {
    relayScript.script();
    relay.requests.length = 0;
    anthropic.requests.length = 0;
  });

  /** The spans of the trace `traceId`, once `count` of them arrived. */
  async function traceOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
    await server.tracing.flush();
    for (;;) {
      const spans = receiver.spans.filter((s) => s.traceId === traceId);
      if (spans.length >= count) return spans;
      await receiver.waitForSpans(receiver.spans.length + 1);
    }
  }

  it('a retry and a fallback: SERVER → operation → 3 CLIENT spans, traceparent in honoured and sent out', async () => {
    relayScript.script(status(503), status(503));
    const res = await post(
      server,
      '/v1/chat/completions',
      { model: 'primary', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, temperature: 0.5 },
      {
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        tracestate: 'vendor=abc',
      },
    );
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id');
    await res.text();
    const spans = await traceOf(CALLER_TRACE, 5);
    const [serverSpan] = byKind(spans, 2);
    const [operation] = byKind(spans, 1);
    const clients = byKind(spans, 3).sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
    assert.ok(serverSpan && operation);
    assert.equal(serverSpan.name, 'POST /v1/chat/completions');
    assert.equal(serverSpan.parentSpanId, CALLER_SPAN, "our SERVER span's parent is the caller's span");
    assert.equal(serverSpan.traceState, 'vendor=abc');
    assert.equal(serverSpan.attributes['http.request.method'], 'POST');
    assert.equal(serverSpan.attributes['url.path'], '/v1/chat/completions');
    assert.equal(serverSpan.attributes['http.response.status_code'], 200);
    assert.equal(serverSpan.attributes['user_agent.original'], 'tracing-test/1');
    assert.equal(serverSpan.attributes['client.address'], '127.0.0.1');
    assert.equal(operation.parentSpanId, serverSpan.spanId);
    assert.equal(operation.name, 'gateway chat');
    assert.equal(operation.attributes['herd.route'], 'model:primary');
    assert.equal(operation.attributes['herd.key.id'], 'master');
    assert.equal(operation.attributes['herd.cache.hit'], false);
    assert.equal(operation.attributes['herd.cost.currency'], 'USD');
    assert.equal(typeof operation.attributes['herd.cost.usd'], 'number');
    assert.equal(clients.length, 3);
    for (const c of clients) assert.equal(c.parentSpanId, operation.spanId);
    assert.deepEqual(
      clients.map((c) => [c.name, c.attributes['gen_ai.provider.name'], c.attributes['herd.attempt'], c.attributes['error.type'], c.status.code]),
      [
        ['chat gpt-4.1', 'openai', 1, 'unavailable', 2],
        ['chat gpt-4.1', 'openai', 2, 'unavailable', 2],
        ['chat claude-sonnet-4-5', 'anthropic', 3, undefined, 0],
      ],
    );
    const answered = clients[2]!;
    assert.equal(answered.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(answered.attributes['gen_ai.request.model'], 'claude-sonnet-4-5');
    assert.equal(answered.attributes['gen_ai.response.model'], 'claude-sonnet-4-5');
    assert.equal(typeof answered.attributes['gen_ai.response.id'], 'string');
    assert.deepEqual(answered.attributes['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(answered.attributes['gen_ai.request.max_tokens'], 50);
    assert.equal(answered.attributes['gen_ai.request.temperature'], 0.5);
    assert.equal(answered.attributes['gen_ai.request.stream'], false);
    assert.equal(typeof answered.attributes['gen_ai.usage.input_tokens'], 'number');
    assert.equal(typeof answered.attributes['gen_ai.usage.output_tokens'], 'number');
    assert.equal(answered.attributes['server.address'], '127.0.0.1');
    assert.equal(answered.attributes['herd.fallback.from'], 'primary');
    assert.equal(answered.attributes['herd.fallback.reason'], 'unavailable');
    assert.equal(answered.attributes['herd.deployment'], 'anthropic/claude-sonnet-4-5');
    assert.equal(answered.attributes['gen_ai.input.messages'], undefined, 'content capture is off by default');
    // traceparent out: each upstream request carries its own attempt span's context.
    const sent = [...relay.requests, ...anthropic.requests].map((r) => r.headers['traceparent']);
    assert.deepEqual(
      sent,
      clients.map((c) => `00-${CALLER_TRACE}-${c.spanId}-01`),
    );
    assert.equal(anthropic.requests[0]?.headers['tracestate'], 'vendor=abc');
    // The ledger row names the trace.
    await server.flushLedger();
    const ledger = new Database(db, { readonly: true });
    const row = ledger.prepare('SELECT trace_id FROM ledger_requests WHERE request_id = ?').get(requestId) as { trace_id: string } | undefined;
    ledger.close();
    assert.equal(row?.trace_id, CALLER_TRACE);
    // …and the console's request detail shows it, so a user goes from a row to its trace.
    const detail = (await (await fetch(`${server.httpUrl}/admin/v1/requests/${requestId}`, { headers: { authorization: `Bearer ${MASTER}` } })).json()) as {
      trace_id: string | null;
    };
    assert.equal(detail.trace_id, CALLER_TRACE);
    // The GenAI client metrics, one sample per attempt, beside the existing families.
    const metrics = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    assert.match(
      metrics,
      /gen_ai_client_operation_duration_seconds_count\{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",gen_ai_response_model="",error_type="unavailable"\} 2/,
    );
    assert.match(
      metrics,
      /gen_ai_client_token_usage_count\{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet-4-5",gen_ai_response_model="claude-sonnet-4-5",gen_ai_token_type="input"\} 1/,
    );
    assert.match(metrics, /herd_gateway_requests_total/);
    // No secret in any exported byte.
    for (const request of receiver.requests) {
      for (const secret of [MASTER, RELAY_KEY, ANTHROPIC_KEY]) assert.equal(request.bytes.includes(secret), false, 'a secret reached the collector');
    }
  });

  it('a streaming request: the attempt span ends with the stream, a first-chunk event and usage', async () => {
    const res = await post(server, '/v1/chat/completions', { model: 'primary', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.equal(res.status, 200);
    await res.text();
    const traceId = (relay.requests[0]!.headers['traceparent'] as string).split('-')[1]!;
    const spans = await traceOf(traceId, 3);
    const [client] = byKind(spans, 3);
    assert.ok(client);
    assert.equal(client.attributes['gen_ai.request.stream'], true);
    assert.equal(typeof client.attributes['gen_ai.response.time_to_first_chunk'], 'number');
    assert.deepEqual(
      client.events.map((e) => e.name),
      ['gen_ai.first_chunk'],
    );
    assert.equal(typeof client.attributes['gen_ai.usage.output_tokens'], 'number');
    assert.equal(byKind(spans, 2)[0]?.parentSpanId, '', 'no traceparent in: a root');
  });

  it('an embeddings request: operation embeddings, one CLIENT span', async () => {
    const res = await post(server, '/v1/embeddings', { model: 'embed', input: ['a', 'b'] });
    assert.equal(res.status, 200);
    await res.text();
    const traceId = (relay.requests[0]!.headers['traceparent'] as string).split('-')[1]!;
    const spans = await traceOf(traceId, 3);
    const [client] = byKind(spans, 3);
    assert.equal(byKind(spans, 2)[0]?.name, 'POST /v1/embeddings');
    assert.equal(byKind(spans, 1)[0]?.name, 'gateway embeddings');
    assert.equal(client?.name, 'embeddings text-embedding-3-small');
    assert.equal(client?.attributes['gen_ai.operation.name'], 'embeddings');
    assert.equal(typeof client?.attributes['gen_ai.usage.input_tokens'], 'number');
  });

  it('an Anthropic Messages request: the same three layers, the provider anthropic', async () => {
    const res = await post(server, '/v1/messages', { model: 'claude', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' });
    assert.equal(res.status, 200);
    await res.text();
    const traceId = (anthropic.requests[0]!.headers['traceparent'] as string).split('-')[1]!;
    const spans = await traceOf(traceId, 3);
    assert.equal(byKind(spans, 2)[0]?.name, 'POST /v1/messages');
    assert.equal(byKind(spans, 1)[0]?.attributes['herd.dialect'], 'anthropic-messages');
    assert.equal(byKind(spans, 3)[0]?.attributes['gen_ai.provider.name'], 'anthropic');
    assert.equal(byKind(spans, 3)[0]?.attributes['gen_ai.request.max_tokens'], 20);
  });

  it('a refused request: the SERVER span alone, with its status and error.type', async () => {
    const res = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-wrong', 'content-type': 'application/json', traceparent: `00-${'1'.repeat(32)}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ model: 'primary', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 401);
    await res.text();
    const [span] = await traceOf('1'.repeat(32), 1);
    assert.equal(span?.attributes['http.response.status_code'], 401);
    assert.equal(span?.attributes['error.type'], 'UNAUTHENTICATED');
  });
});

describe('gateway spans (tracing off)', () => {
  it('sends no traceparent upstream and exports nothing', async () => {
    const relayScript = scriptedUpstream({ okJson: openAICompletion('gpt-4.1', 'Bonjour'), okFrames: [], errorBody: openAIErrorBody });
    const relay = await startMockUpstream(relayScript.handler);
    const anthropic = await startMockUpstream(scriptedUpstream({ okJson: anthropicMessage('claude-sonnet-4-5', 'x'), okFrames: [], errorBody: anthropicErrorBody }).handler);
    const receiver = await startOtlpReceiver();
    const dir = mkdtempSync(join(tmpdir(), 'herd-gateway-tracing-off-'));
    const server = await startHerd(parseHerdConfig(configYaml(dir, relay.url, anthropic.url, ''), join(dir, 'herd.yaml')), { env: ENV });
    try {
      const res = await post(
        server,
        '/v1/chat/completions',
        { model: 'primary', messages: [{ role: 'user', content: 'hi' }] },
        { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      );
      assert.equal(res.status, 200);
      await res.text();
      assert.equal(relay.requests[0]?.headers['traceparent'], undefined);
    } finally {
      await server.close();
      await relay.close();
      await anthropic.close();
      await receiver.close();
    }
    assert.equal(receiver.requests.length, 0);
  });
});
