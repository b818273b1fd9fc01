// A Python Triton client (python-client-keys.py: gRPC stubs generated from Herd's protos, http.client) reaches an
// llm model with a gateway key passed as tritonclient passes headers=, and is refused without one (issue #35).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { EXAMPLE_REPOSITORY } from '../e2e/start-test-server.ts';
import { TEST_PYTHON } from '../python-interpreter.ts';
import { generatePythonGrpcStubs } from '../helpers/python-grpc-stubs.ts';
import { llmModel, startFakeUpstream, writeModels } from '../serving/llm/llm-fixtures.ts';
import type { MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const run = promisify(execFile);
const MASTER = 'sk-herd-pyclient-master-0123456789abcdef';
const SCRIPT = resolve('test/security/python-client-keys.py');

interface Report {
  http: { status: number; content_type: string | null; json: Record<string, unknown> | null; text?: string[] };
  grpc: {
    infer: { code: string; text?: string[]; details?: string };
    stream: { code: string; details?: string; events: { error: string; text: string[] }[] };
  };
}

/** Runs the client asynchronously: the server answering it lives in this process. */
async function pythonClient(server: HerdServer, stubs: string, key?: string): Promise<Report> {
  const http = new URL(server.httpUrl).host;
  const args = [SCRIPT, stubs, http, server.grpcUrl as string, 'chat', 'chat_stream', ...(key === undefined ? [] : [key])];
  const { stdout } = await run(TEST_PYTHON, args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
  return JSON.parse(stdout) as Report;
}

function ledgerRows(path: string): Record<string, unknown>[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT * FROM ledger_requests ORDER BY started_at').all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

describe('a Python Triton client against a keyed gateway', () => {
  let server: HerdServer;
  let upstream: MockUpstream;
  let stubs: string;
  let ledgerPath: string;
  let clientKey: string;

  before(async () => {
    stubs = await generatePythonGrpcStubs();
    upstream = await startFakeUpstream();
    const dir = mkdtempSync(join(tmpdir(), 'herd-pyclient-'));
    const repository = writeModels({ chat_stream: llmModel('chat_stream', { decoupled: true }) });
    ledgerPath = join(dir, 'ledger.db');
    const keysPath = join(dir, 'keys.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving:
  model_repository: [${JSON.stringify(EXAMPLE_REPOSITORY)}, ${JSON.stringify(repository)}]
  model_control_mode: explicit
  load_model: [chat, chat_stream]
auth: { db: "${keysPath}" }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:${ledgerPath}", flush_interval_ms: 50 }
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: FAKE_RELAY_KEY, exchange_rate: 1.0, timeout_ms: 5000, retry: { attempts: 1 } }
models:
  fast-model: { price: { input: 0.1, output: 0.2 }, deployments: [{ provider: relay, upstream_model: fast-up }] }
  balanced-model: { price: { input: 1, output: 2 }, deployments: [{ provider: relay, upstream_model: balanced-up }] }
  quality-model: { price: { input: 3, output: 15 }, deployments: [{ provider: relay, upstream_model: quality-up }] }
routes:
  tiers: { fast: fast-model, balanced: balanced-model, quality: quality-model }
  auto: [{ tier: balanced }]
`,
      join(dir, 'herd.yaml'),
    );
    const store = await TestKeys.open(keysPath);
    clientKey = (await store.create({ name: 'py-alice', allowedModels: '*' })).secret;
    await store.close();
    server = await startHerd(config, { env: { FAKE_RELAY_KEY: 'sk-fake-relay', HERD_MASTER_KEY: MASTER } });
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });

  it('without a key: HTTP infer is 401 in KServe shape, gRPC ModelInfer is UNAUTHENTICATED, the stream answers an error; all say how to pass a key', async () => {
    const report = await pythonClient(server, stubs);
    assert.equal(report.http.status, 401, JSON.stringify(report.http));
    assert.deepEqual(Object.keys(report.http.json ?? {}), ['error']);
    assert.match(String(report.http.json?.['error']), /Authorization: Bearer <key>.*x-api-key/);
    assert.equal(report.grpc.infer.code, 'UNAUTHENTICATED', JSON.stringify(report.grpc.infer));
    assert.match(report.grpc.infer.details ?? '', /Authorization: Bearer <key>/);
    // Herd answers a stream's failed request in band (error_message), as Triton does; tritonclient raises it to the callback.
    assert.equal(report.grpc.stream.code, 'OK', JSON.stringify(report.grpc.stream));
    assert.equal(report.grpc.stream.events.length, 1);
    assert.match(report.grpc.stream.events[0]?.error ?? '', /Authorization: Bearer <key>/);
    assert.equal(upstream.requests.length, 0);
  });

  it("with the key (Authorization header, lowercase gRPC metadata): all three are answered and the ledger names the caller's key", async () => {
    const report = await pythonClient(server, stubs, clientKey);
    assert.equal(report.http.status, 200, JSON.stringify(report.http));
    assert.match(report.http.text?.[0] ?? '', /^echo\(balanced-up\): hello from python/);
    assert.equal(report.grpc.infer.code, 'OK', JSON.stringify(report.grpc.infer));
    assert.match(report.grpc.infer.text?.[0] ?? '', /^echo\(balanced-up\): hello from python/);
    assert.equal(report.grpc.stream.code, 'OK', JSON.stringify(report.grpc.stream));
    const events = report.grpc.stream.events;
    assert.ok(events.length > 0 && events.every((e) => e.error === ''), JSON.stringify(events));
    assert.match(events.flatMap((e) => e.text).join(''), /echo\(balanced-up\): hello from python/);
    assert.equal(upstream.requests.length, 3);
    await server.close();
    const rows = ledgerRows(ledgerPath);
    assert.deepEqual(
      rows.map((r) => r['key_name']),
      ['py-alice', 'py-alice', 'py-alice'],
    );
    const origins = new Set(rows.map((r) => r['origin']));
    assert.ok(origins.has('triton:chat/1') && origins.has('triton:chat_stream/1'), [...origins].join(', '));
  });
});
