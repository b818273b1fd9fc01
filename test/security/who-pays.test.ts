// Who pays for a KServe request that reaches a paid upstream: over HTTP (infer, generate, generate_stream,
// fast and Fastify paths) and gRPC (ModelInfer, ModelStreamInfer) to an llm model and to an ensemble with
// one, the caller's gateway key (Authorization: Bearer or x-api-key, headers or metadata) pays, with its
// allowed models and ledger attribution; without one, only a principal the operator named (the model's
// gateway_key_env, serving.identity); else refused, and the upstream is never called. Local models stay keyless.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { status as Status } from '@grpc/grpc-js';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { EXAMPLE_REPOSITORY, postJson } from '../e2e/start-test-server.ts';
import { llmModel, startFakeUpstream, writeModels } from '../serving/llm/llm-fixtures.ts';
import type { MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import Database from 'better-sqlite3';

const MASTER = 'sk-herd-whopays-master-0123456789abcdef';
const encoder = new TextEncoder();
const textInput = (text: string) => ({ name: 'text_input', datatype: 'BYTES' as const, shape: [1], data: [encoder.encode(text)] });

interface Herd {
  server: HerdServer;
  upstream: MockUpstream;
  ledgerPath: string;
  keysPath: string;
  close(): Promise<void>;
}

/** Herd with the example repository's chat and smart_chat, plus a decoupled llm model and one that names its own key. */
async function startHerdWith(options: {
  env: Record<string, string>;
  identity?: string;
  host?: string;
  beforeStart?: (keysPath: string) => Promise<Record<string, string>>;
}): Promise<Herd> {
  const upstream = await startFakeUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'herd-whopays-'));
  const repository = writeModels({
    chat_stream: llmModel('chat_stream', { decoupled: true }),
    chat_own: llmModel('chat_own', { extra: ',\n  { key: "gateway_key_env" value: { string_value: "CHAT_OWN_KEY" } }' }),
    chat_fast: llmModel('chat_fast', { model: 'fast' }),
  });
  const ledgerPath = join(dir, 'ledger.db');
  const keysPath = join(dir, 'keys.db');
  const config = parseHerdConfig(
    `
server: { host: ${options.host ?? '127.0.0.1'}, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving:
  model_repository: [${JSON.stringify(EXAMPLE_REPOSITORY)}, ${JSON.stringify(repository)}]
  model_control_mode: explicit
  load_model: [chat, smart_chat, add_sub, chat_stream, chat_own, chat_fast]
${options.identity ?? ''}
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
  const extra = (await options.beforeStart?.(keysPath)) ?? {};
  const server = await startHerd(config, { env: { FAKE_RELAY_KEY: 'sk-fake-relay', ...options.env, ...extra } });
  return {
    server,
    upstream,
    ledgerPath,
    keysPath,
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}

function ledgerRows(path: string): Record<string, unknown>[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT * FROM ledger_requests ORDER BY started_at').all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const generate = (url: string, model: string, headers: Record<string, string> = {}, suffix = 'generate') =>
  postJson(`${url}/v2/models/${model}/${suffix}`, { text_input: 'hello' }, headers);
const infer = (url: string, model: string, headers: Record<string, string> = {}) =>
  postJson(`${url}/v2/models/${model}/infer`, { inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hello'] }] }, headers);
/** The same infer through Fastify's route rather than the fast path: an Accept-Encoding header sends it there. */
const inferViaFastify = (url: string, model: string, headers: Record<string, string> = {}) => infer(url, model, { 'accept-encoding': 'identity', ...headers });

describe('keyed gateway (master key set): who pays on /v2 and gRPC', () => {
  let herd: Herd;
  let clientKey: string;

  before(async () => {
    herd = await startHerdWith({
      env: { HERD_MASTER_KEY: MASTER },
      beforeStart: async (keysPath) => {
        const store = await TestKeys.open(keysPath);
        clientKey = (await store.create({ name: 'alice', allowedModels: '*' })).secret;
        await store.close();
        return {};
      },
    });
  });
  after(async () => {
    await herd?.close();
  });

  it('refuses every keyless HTTP route to an llm model and an ensemble with one (401, KServe shape, how to pass a key); the upstream is never called', async () => {
    const url = herd.server.httpUrl;
    const answers = [
      ['infer chat', await infer(url, 'chat')],
      ['infer chat (Fastify)', await inferViaFastify(url, 'chat')],
      ['generate chat', await generate(url, 'chat')],
      ['generate_stream chat_stream', await generate(url, 'chat_stream', {}, 'generate_stream')],
      ['generate smart_chat', await generate(url, 'smart_chat')],
      ['infer smart_chat', await infer(url, 'smart_chat')],
    ] as const;
    for (const [label, answer] of answers) {
      assert.equal(answer.status, 401, `${label}: ${answer.body.toString()}`);
      const body = answer.json() as { error: string };
      assert.deepEqual(Object.keys(body), ['error'], label);
      assert.match(body.error, /Authorization: Bearer <key>.*x-api-key/, label);
    }
    assert.equal(herd.upstream.requests.length, 0);
  });

  it('refuses keyless gRPC ModelInfer (UNAUTHENTICATED) and ModelStreamInfer requests', async () => {
    const client = new KserveGrpcClient({ url: herd.server.grpcUrl as string });
    try {
      await assert.rejects(client.infer('chat', [textInput('hi')]), (err: { grpcCode: number; message: string }) => {
        assert.equal(err.grpcCode, Status.UNAUTHENTICATED);
        assert.match(err.message, /Authorization: Bearer <key>/);
        return true;
      });
      const stream = client.streamInfer();
      stream.send('chat_stream', [textInput('hi')]);
      stream.end();
      const events = [];
      for await (const event of stream.responses) events.push(event);
      assert.equal(events.length, 1);
      assert.match(events[0]?.error?.message ?? '', /Authorization: Bearer <key>/);
    } finally {
      client.close();
    }
    assert.equal(herd.upstream.requests.length, 0);
  });

  it("runs as the caller's key (Bearer or x-api-key, HTTP or gRPC metadata) with the ledger naming it and the serving model", async () => {
    const url = herd.server.httpUrl;
    const before = herd.upstream.requests.length;
    const bearer = { authorization: `Bearer ${clientKey}` };
    for (const answer of [
      await infer(url, 'chat', bearer),
      await inferViaFastify(url, 'chat', { 'x-api-key': clientKey }),
      await generate(url, 'chat', bearer),
      await generate(url, 'smart_chat', { 'x-api-key': clientKey }),
    ]) {
      assert.equal(answer.status, 200, answer.body.toString());
    }
    const streamed = await generate(url, 'chat_stream', bearer, 'generate_stream');
    assert.equal(streamed.status, 200);
    assert.match(streamed.body.toString(), /^data: /);

    const client = new KserveGrpcClient({ url: herd.server.grpcUrl as string, headers: { authorization: `Bearer ${clientKey}` } });
    try {
      const answer = await client.infer('chat', [textInput('hi')]);
      const text = answer.outputs[0]?.data as Uint8Array[] | undefined;
      assert.match(new TextDecoder().decode(text?.[0]), /^echo\(balanced-up\)/);
      const stream = client.streamInfer();
      stream.send('chat_stream', [textInput('hi')]);
      stream.end();
      const events = [];
      for await (const event of stream.responses) events.push(event);
      assert.ok(events.length > 0 && events.every((e) => e.error === undefined), JSON.stringify(events.map((e) => e.error?.message)));
    } finally {
      client.close();
    }
    assert.equal(herd.upstream.requests.length - before, 7);
    await herd.server.close();
    const rows = ledgerRows(herd.ledgerPath);
    assert.equal(rows.length, 7);
    assert.ok(
      rows.every((r) => r['key_name'] === 'alice'),
      JSON.stringify(rows.map((r) => r['key_name'])),
    );
    const origins = new Set(rows.map((r) => r['origin']));
    assert.ok(origins.has('triton:chat/1') && origins.has('triton:smart_chat/chat:1') && origins.has('triton:chat_stream/1'), [...origins].join(', '));
  });
});

describe('keyed gateway: refusals and principals the operator named', () => {
  let herd: Herd;
  let narrowKey: string;

  before(async () => {
    herd = await startHerdWith({
      env: { HERD_MASTER_KEY: MASTER },
      beforeStart: async (keysPath) => {
        const store = await TestKeys.open(keysPath);
        narrowKey = (await store.create({ name: 'narrow', allowedModels: ['quality-model'] })).secret;
        const own = (await store.create({ name: 'chat-own-service', allowedModels: '*' })).secret;
        await store.close();
        return { CHAT_OWN_KEY: own };
      },
    });
  });
  after(async () => {
    await herd?.close();
  });

  it('a wrong key is 401 (masked), a key not allowed the gateway model is 403; neither reaches the upstream', async () => {
    const url = herd.server.httpUrl;
    const wrong = await infer(url, 'chat', { authorization: 'Bearer sk-herd-wrong-0123456789' });
    assert.equal(wrong.status, 401);
    assert.match((wrong.json() as { error: string }).error, /Incorrect API key provided/);
    assert.doesNotMatch(wrong.body.toString(), /0123456789/);
    const narrow = await generate(url, 'chat', { authorization: `Bearer ${narrowKey}` });
    assert.equal(narrow.status, 403, narrow.body.toString());
    assert.match((narrow.json() as { error: string }).error, /which this key may not use/);
    assert.equal(herd.upstream.requests.length, 0);
  });

  it('a local model stays keyless', async () => {
    const answer = await postJson(`${herd.server.httpUrl}/v2/models/add_sub/infer`, {
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
      ],
    });
    assert.equal(answer.status, 200, answer.body.toString());
  });

  it("gateway_key_env: a keyless call to that model runs as the model's own key; the same call to chat is refused", async () => {
    const url = herd.server.httpUrl;
    const own = await generate(url, 'chat_own');
    assert.equal(own.status, 200, own.body.toString());
    const client = new KserveGrpcClient({ url: herd.server.grpcUrl as string });
    try {
      await client.infer('chat_own', [textInput('hi')]);
    } finally {
      client.close();
    }
    assert.equal((await generate(url, 'chat')).status, 401);
    await herd.server.close();
    const rows = ledgerRows(herd.ledgerPath);
    assert.deepEqual(
      rows.map((r) => [r['key_name'], r['origin']]),
      [
        ['chat-own-service', 'triton:chat_own/1'],
        ['chat-own-service', 'triton:chat_own/1'],
      ],
    );
  });
});

describe('serving.identity set explicitly: a principal with its own allowed models', () => {
  let herd: Herd;
  before(async () => {
    herd = await startHerdWith({ env: { HERD_MASTER_KEY: MASTER }, identity: '  identity: { name: triton-svc, models: [fast-model], rpm: 1000 }' });
  });
  after(async () => {
    await herd?.close();
  });

  it('keyless calls run as it where it is allowed, and are refused (403) where it is not', async () => {
    const url = herd.server.httpUrl;
    const allowed = await generate(url, 'chat_fast');
    assert.equal(allowed.status, 200, allowed.body.toString());
    const refused = await generate(url, 'chat');
    assert.equal(refused.status, 403, refused.body.toString());
    assert.match((refused.json() as { error: string }).error, /which this key may not use/);
    await herd.server.close();
    const rows = ledgerRows(herd.ledgerPath);
    assert.deepEqual(
      rows.map((r) => [r['key_name'], r['origin']]),
      [['triton-svc', 'triton:chat_fast/1']],
    );
  });
});

/** An address of this machine other than loopback: to the server, a request from it comes from the network. */
function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return undefined;
}

describe('open mode (no master key, no keys)', () => {
  let herd: Herd;
  before(async () => {
    herd = await startHerdWith({ env: {}, host: '0.0.0.0' });
  });
  after(async () => {
    await herd?.close();
  });

  it('serves a keyless llm call from this machine', async () => {
    const answer = await generate(herd.server.httpUrl, 'chat');
    assert.equal(answer.status, 200, answer.body.toString());
  });

  it('refuses one from another machine (401), as /v1 does', { skip: externalAddress() === undefined ? 'no non-loopback interface' : false }, async () => {
    const address = externalAddress() as string;
    const port = new URL(herd.server.httpUrl).port;
    const answer = await new Promise<{ status: number; body: string }>((done, fail) => {
      const req = httpRequest(
        { host: address, port, method: 'POST', path: '/v2/models/chat/generate', localAddress: address, headers: { 'content-type': 'application/json' } },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', fail);
      req.end(JSON.stringify({ text_input: 'hi' }));
    });
    assert.equal(answer.status, 401, answer.body);
    assert.match(answer.body, /only runs it for requests from the machine it runs on/);
  });
});
