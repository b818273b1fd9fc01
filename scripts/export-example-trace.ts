// Regenerates docs/traces/smart-chat.otlp.json: one smart_chat request traced end to end (serving and gateway
// spans in one trace) against a fake upstream, written as OTLP/HTTP JSON (an ExportTraceServiceRequest).
// Run: npx tsx scripts/export-example-trace.ts [output path]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHerd } from '../src/app.ts';
import { parseHerdConfig } from '../src/config/load-herd-config.ts';
import { EXAMPLE_REPOSITORY, postJson } from '../test/e2e/start-test-server.ts';
import { loadOtlpTypes, startOtlpReceiver } from '../test/helpers/otlp-receiver.ts';
import { startFakeUpstream } from '../test/serving/llm/llm-fixtures.ts';

const OUTPUT = resolve(process.argv[2] ?? 'docs/traces/smart-chat.otlp.json');
/** The fields OTLP JSON writes as lowercase hex rather than protobuf JSON's base64. */
const HEX_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** protobufjs's toObject output in OTLP JSON's encoding: ids in hex, other bytes in base64. */
function toOtlpJson(value: unknown, key = ''): unknown {
  if (value instanceof Uint8Array) return HEX_FIELDS.has(key) ? Buffer.from(value).toString('hex') : Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map((item) => toOtlpJson(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toOtlpJson(v, k)]));
  }
  return value;
}

async function main(): Promise<void> {
  const receiver = await startOtlpReceiver();
  const upstream = await startFakeUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'herd-example-trace-'));
  try {
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving:
  model_repository: [${JSON.stringify(EXAMPLE_REPOSITORY)}]
  identity: smart-chat-service
  trace: { mode: opentelemetry, level: [TIMESTAMPS], rate: 1, opentelemetry: { url: "${receiver.url}", resource: { service.name: herd } } }
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
    try {
      const res = await postJson(
        `${server.httpUrl}/v2/models/smart_chat/infer`,
        { id: 'sc-1', inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hello'] }] },
        { traceparent: '00-5b8efff798038103d269b633813fc60c-eee19b7ec3c1b174-01' },
      );
      if (res.status !== 200) throw new Error(`smart_chat answered ${res.status}: ${res.body.toString()}`);
      await server.tracing.flush();
    } finally {
      await server.close();
    }
    const types = loadOtlpTypes();
    // Every export request the receiver took, merged into one request (resourceSpans side by side).
    const resourceSpans = receiver.requests.flatMap((r) => {
      const decoded = types.request.toObject(types.request.decode(r.bytes), { longs: String, enums: Number });
      return (decoded['resourceSpans'] as unknown[] | undefined) ?? [];
    });
    const json = `${JSON.stringify(toOtlpJson({ resourceSpans }), null, 2)}\n`;
    if (json.includes('sk-fake-relay')) throw new Error('the provider key reached a span');
    writeFileSync(OUTPUT, json);
    console.log(`wrote ${receiver.spans.length} spans to ${OUTPUT}`);
  } finally {
    await receiver.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
