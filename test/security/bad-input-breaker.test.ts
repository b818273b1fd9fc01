// One key's body that Herd cannot encode for the upstream (a tool schema nested 100 000 deep) is that
// key's problem: a 400 INVALID_ARG, never retried, never sent, never counted by the (provider, model)
// breaker — so another key's ordinary request still gets its answer. The flow is called in-process so the
// body reaches the encoder whatever depth limit the HTTP layer holds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { LightAbortController } from '../../src/core/abort-link.ts';
import { HerdError } from '../../src/core/errors.ts';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import type { JsonObject } from '../../src/gateway/protocol/check-json-value.ts';
import type { KeyInfo } from '../../src/gateway/keys/key-store.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { anthropicMessage, openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-bad-input-master-3c5e7a9b1d2f4a6c8e0b';
const ENV = { BAD_INPUT_MASTER: MASTER, BAD_OPENAI_KEY: 'sk-upstream-openai-bad-input', BAD_ANTHROPIC_KEY: 'sk-ant-upstream-bad-input' };

type Breaker = { key: string; breaker: string; requests: number; failures: number };

/** A JSON Schema nested far deeper than JSON.stringify's recursion can go, built without recursion. */
function deepSchema(depth: number): JsonObject {
  let node: JsonObject = { type: 'string' };
  for (let i = 0; i < depth; i++) node = { type: 'object', properties: { x: node } };
  return node;
}

function badRequest(model: string, stream: boolean): ChatRequest {
  return {
    model,
    messages: [{ role: 'user', content: 'call the tool' }],
    tools: [{ type: 'function', function: { name: 'deep', parameters: deepSchema(100_000) } }],
    ...(stream ? { stream: true } : {}),
  };
}

describe('a body Herd cannot encode for the upstream', () => {
  let openai: MockUpstream;
  let anthropic: MockUpstream;
  let server: HerdServer;
  let dir: string;
  let keyA: KeyInfo;
  let secretB: string;

  before(async () => {
    openai = await startMockUpstream((_req, res) => sendJson(res, 200, openAICompletion('gpt-test', 'hello')));
    anthropic = await startMockUpstream((_req, res) => sendJson(res, 200, anthropicMessage('claude-test', 'hello')));
    dir = mkdtempSync(join(tmpdir(), 'herd-bad-input-'));
    const store = await TestKeys.open(join(dir, 'keys.db'));
    keyA = (await store.create({ name: 'sender', allowedModels: '*' })).key;
    secretB = (await store.create({ name: 'bystander', allowedModels: '*' })).secret;
    await store.close();
    const breaker = '{ min_requests: 2, failure_ratio: 0.5, cooldown_ms: 60000 }';
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: BAD_INPUT_MASTER, db: "${join(dir, 'keys.db')}" }
billing: { currency: USD, ledger: "sqlite:${join(dir, 'ledger.db')}", flush_interval_ms: 10 }
providers:
  up-openai: { type: openai, base_url: "${openai.url}/v1", api_key_env: BAD_OPENAI_KEY, timeout_ms: 2000, retry: { attempts: 3, base_ms: 1, cap_ms: 5 }, breaker: ${breaker} }
  up-anthropic: { type: anthropic, base_url: "${anthropic.url}", api_key_env: BAD_ANTHROPIC_KEY, timeout_ms: 2000, retry: { attempts: 3, base_ms: 1, cap_ms: 5 }, breaker: ${breaker} }
models:
  gpt-test:
    price: { input: 1, output: 2 }
    deployments: [{ provider: up-openai }]
  claude-test:
    price: { input: 1, output: 2 }
    deployments: [{ provider: up-anthropic }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV, log: () => undefined });
  });
  after(async () => {
    await server?.close();
    await openai?.close();
    await anthropic?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const breakers = async () => ((await (await fetch(`${server.httpUrl}/health`)).json()) as { breakers: Breaker[] }).breakers;

  for (const [model, dialect] of [
    ['gpt-test', 'openai-chat'],
    ['claude-test', 'anthropic-messages'],
  ] as const) {
    it(`${model}: many bad requests from one key are its 400s; the breaker stays closed and another key is answered`, async () => {
      const gateway = server.gateway!;
      const upstream = model === 'gpt-test' ? openai : anthropic;
      upstream.requests.length = 0;
      for (let i = 0; i < 8; i++) {
        const signal = new LightAbortController().signal;
        await assert.rejects(
          gateway.handle(badRequest(model, i % 2 === 1), { key: keyA, headers: {}, signal, dialect }),
          (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && !/reach upstream/.test(err.message),
        );
      }
      assert.equal(upstream.requests.length, 0, 'nothing was sent upstream');
      const mine = (await breakers()).filter((b) => b.key.startsWith(model === 'gpt-test' ? 'up-openai/' : 'up-anthropic/'));
      assert.equal(mine.length, 1, JSON.stringify(mine));
      assert.equal(mine[0]!.breaker, 'closed');
      assert.equal(mine[0]!.failures, 0);

      const path = dialect === 'anthropic-messages' ? '/v1/messages' : '/v1/chat/completions';
      const body =
        dialect === 'anthropic-messages' ? { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } : { model, messages: [{ role: 'user', content: 'hi' }] };
      const res = await fetch(`${server.httpUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secretB}` },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(upstream.requests.length, 1);
    });
  }
});
