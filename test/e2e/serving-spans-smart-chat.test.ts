// smart_chat (token_counter → model_router → chat, an llm step) traced end to end in OpenTelemetry mode: one
// trace from the client's traceparent through the ensemble's steps to the llm step's compute span, whose
// traceparent the gateway call carries on: the gateway's operation and attempt spans and the upstream's traceparent join under it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { parseTraceParent } from '../../src/tracing/trace-parent.ts';
import { type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { startFakeUpstream } from '../serving/llm/llm-fixtures.ts';
import { EXAMPLE_REPOSITORY, postJson } from './start-test-server.ts';

test('smart_chat: one trace, the steps under the ensemble, the llm compute span the parent of the gateway call', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const upstream = await startFakeUpstream();
  t.after(() => upstream.close());
  const dir = mkdtempSync(join(tmpdir(), 'herd-smart-chat-spans-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving:
  model_repository: [${JSON.stringify(EXAMPLE_REPOSITORY)}]
  identity: smart-chat-service
  trace: { mode: opentelemetry, level: [TIMESTAMPS], rate: 1000, opentelemetry: { url: "${receiver.url}" } }
auth: { db: "${join(dir, 'keys.db')}" }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:${join(dir, 'ledger.db')}", flush_interval_ms: 50 }
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: FAKE_RELAY_KEY, exchange_rate: 1.0, timeout_ms: 5000, retry: { attempts: 1 } }
models:
  fast-model: { price: { input: 0.1, output: 0.2 }, deployments: [{ provider: relay, upstream_model: fast-up }] }
routes:
  tiers: { fast: fast-model, balanced: fast-model, quality: fast-model }
`,
    join(dir, 'herd.yaml'),
  );
  const server = await startHerd(config, { env: { FAKE_RELAY_KEY: 'sk-fake-relay' } });
  t.after(() => server.close());

  const traceId = '5b8efff798038103d269b633813fc60c';
  const res = await postJson(
    `${server.httpUrl}/v2/models/smart_chat/infer`,
    { id: 'sc-1', inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hello'] }] },
    // Rate 1000: only the propagated context makes this request traced.
    { traceparent: `00-${traceId}-eee19b7ec3c1b174-01` },
  );
  assert.equal(res.status, 200, res.body.toString());
  await server.tracing.flush();
  const serving = receiver.spans.filter((s) => s.name === 'InferRequest' || s.attributes['triton.model_name'] !== undefined || s.name === 'compute');
  const byName = (name: string) => serving.find((s) => s.name === name) as ReceivedSpan;
  const root = byName('InferRequest');
  const ensemble = byName('smart_chat');
  assert.equal(root.traceId, traceId);
  assert.equal(root.parentSpanId, 'eee19b7ec3c1b174');
  assert.equal(ensemble.parentSpanId, root.spanId);
  for (const step of ['token_counter', 'model_router', 'chat']) {
    const span = byName(step);
    assert.equal(span.parentSpanId, ensemble.spanId, `${step} under smart_chat`);
    assert.equal(span.attributes['triton.request_id'], 'sc-1');
    const compute = serving.filter((s) => s.name === 'compute' && s.parentSpanId === span.spanId);
    assert.equal(compute.length, 1, `${step} has its compute span`);
  }
  assert.equal(new Set(receiver.spans.map((s) => s.traceId)).size, 1, 'every span exported is in the one trace');
  const chatCompute = serving.find((s) => s.name === 'compute' && s.parentSpanId === byName('chat').spanId) as ReceivedSpan;

  // The gateway's part (its spans, the traceparent sent upstream) joins under the llm step's compute span.
  const sent = upstream.requests.at(-1)?.headers['traceparent'];
  const gatewaySpans = receiver.spans.filter((s) => !serving.includes(s));
  assert.ok(gatewaySpans.length > 0, 'the gateway operation and its attempt are in the trace');
  const upstreamParent = parseTraceParent(String(sent));
  assert.equal(upstreamParent?.traceId, traceId);
  const ids = new Set(receiver.spans.map((s) => s.spanId));
  // Every gateway span hangs (through others) from the chat step's compute span.
  for (const span of gatewaySpans) {
    let at: ReceivedSpan | undefined = span;
    while (at && at.parentSpanId !== chatCompute.spanId) at = receiver.spans.find((s) => s.spanId === at?.parentSpanId);
    assert.ok(at, `${span.name} under the chat step's compute span`);
  }
  assert.ok(upstreamParent && (ids.has(upstreamParent.spanId) || upstreamParent.spanId === chatCompute.spanId));
});

test("a traced inference's failure is logged with its request id and trace id", async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  // An upstream that always fails: the llm step's error is the request's, and the server logs it.
  const upstream = createServer((_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.after(() => upstream.close());
  const dir = mkdtempSync(join(tmpdir(), 'herd-smart-chat-log-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving:
  model_repository: [${JSON.stringify(EXAMPLE_REPOSITORY)}]
  identity: smart-chat-service
  trace: { mode: opentelemetry, level: [TIMESTAMPS], rate: 1000, opentelemetry: { url: "${receiver.url}" } }
auth: { db: "${join(dir, 'keys.db')}" }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:${join(dir, 'ledger.db')}", flush_interval_ms: 50 }
providers:
  relay: { type: openai, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1", api_key_env: FAKE_RELAY_KEY, timeout_ms: 5000, retry: { attempts: 1 } }
models:
  fast-model: { price: { input: 0.1, output: 0.2 }, deployments: [{ provider: relay, upstream_model: fast-up }] }
routes:
  tiers: { fast: fast-model, balanced: fast-model, quality: fast-model }
`,
    join(dir, 'herd.yaml'),
  );
  const lines: string[] = [];
  const server = await startHerd(config, { env: { FAKE_RELAY_KEY: 'sk-fake-relay' }, log: (line) => lines.push(line) });
  t.after(() => server.close());
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const res = await postJson(
    `${server.httpUrl}/v2/models/smart_chat/infer`,
    { id: 'sc-fail', inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hello'] }] },
    { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  );
  assert.ok(res.status >= 500, res.body.toString());
  const line = lines.find((l) => l.includes(traceId));
  assert.ok(line, `a log line names the trace: ${JSON.stringify(lines)}`);
  assert.match(line, new RegExp(`\\(request sc-fail, trace ${traceId}\\): `));
});
