// The embeddings flow on its own, in front of a local OpenAI-wire upstream: the key's allowed models,
// TPM and budget (real limiter and SQLite ledger), kinds and tiers refused, a budget refusal,
// and its attempts recorded in the chat service's breakers and load figures (one set for every flow).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { HerdError } from '../../../src/core/errors.ts';
import { BillingService } from '../../../src/gateway/billing/billing-service.ts';
import type { Ledger } from '../../../src/gateway/billing/ledger.ts';
import { openLedger } from '../../../src/gateway/billing/open-ledger.ts';
import { ChatGateway } from '../../../src/gateway/flow/chat-gateway.ts';
import { createChatService, type ChatService } from '../../../src/gateway/flow/chat-service.ts';
import { EmbeddingsGateway } from '../../../src/gateway/flow/embeddings-gateway.ts';
import type { GatewayRequestEvent } from '../../../src/gateway/flow/gateway-observer.ts';
import { testKey } from '../billing/budget-fixtures.ts';
import type { KeyInfo } from '../../../src/gateway/keys/key-store.ts';
import { KeyLimiter } from '../../../src/gateway/limits/key-limiter.ts';
import { MemoryLimitStore } from '../../../src/gateway/limits/memory-limit-store.ts';
import { answerOpenAIEmbeddings } from '../helpers/embedding-upstreams.ts';
import { startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';

const key = (extra: Partial<KeyInfo> = {}): KeyInfo => testKey({ id: 'k1', name: 'test', prefix: 'sk-herd-t', ...extra });
const caller = (k: KeyInfo) => ({ key: k, headers: {}, signal: new LightAbortController().signal, dialect: 'openai-embeddings' as const });
const refusedWith = (code: string, pattern: RegExp) => (err: unknown) => err instanceof HerdError && err.code === code && pattern.test(err.message);

describe('EmbeddingsGateway', () => {
  let upstream: MockUpstream;
  let dir: string;
  let ledger: Ledger;
  let gateway: EmbeddingsGateway;
  let chat: ChatService;
  const events: GatewayRequestEvent[] = [];

  before(async () => {
    upstream = await startMockUpstream((req, res) => answerOpenAIEmbeddings(req, res));
    dir = mkdtempSync(join(tmpdir(), 'herd-embeddings-flow-'));
    const config = parseHerdConfig(
      `
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: RELAY_KEY }
models:
  emb:
    kind: embedding
    aliases: [embed-alias]
    price: { input: 1000000, output: 0 }
    deployments: [{ provider: relay }]
  other-emb:
    kind: embedding
    price: { input: 1, output: 0 }
    deployments: [{ provider: relay }]
  chat:
    price: { input: 1, output: 1 }
    deployments: [{ provider: relay }]
routes:
  tiers: { fast: chat }
billing: { currency: USD }
`,
      join(dir, 'herd.yaml'),
      {},
    );
    ledger = await openLedger(`sqlite:${join(dir, 'ledger.db')}`);
    chat = createChatService({ config, env: { RELAY_KEY: 'sk-relay' } });
    const flow = new ChatGateway({
      chat,
      billing: new BillingService({ config, ledger }),
      keyLimits: new KeyLimiter({ store: new MemoryLimitStore() }),
      observer: { onRequestFinished: (e) => events.push(e) },
    });
    gateway = new EmbeddingsGateway(flow);
  });
  after(async () => {
    await chat?.close();
    await ledger?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers through an alias with the canonical model, and reports the request once', async () => {
    events.length = 0;
    const answer = await gateway.handle({ model: 'embed-alias', inputs: ['a b', 'c'], encodingFormat: 'float' }, caller(key()));
    assert.equal(answer.vectors.length, 2);
    assert.equal(answer.meta.model, 'emb');
    assert.equal(answer.meta.route, 'alias');
    assert.equal(answer.meta.usage.promptTokens, 3);
    assert.equal(answer.meta.usage.completionTokens, 0);
    // Metrics are reported after the ledger priced the request, once the answer is out.
    for (let i = 0; i < 500 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(events.length, 1);
    assert.equal(events[0]!.statusClass, '2xx');
    assert.equal(events[0]!.usdMicros, 3_000_000, '3 tokens at $1 per token');
    // The breaker and the latency are recorded in the chat service's registry and stats.
    const breaker = chat.breakers.snapshot().find((b) => b.key === 'relay/emb');
    assert.equal(breaker?.snapshot.state, 'closed');
    assert.equal(breaker?.snapshot.requests, 1);
    assert.ok(chat.stats.latencyMs('relay/emb', 'chat') !== undefined);
  });

  it('the key decides: models it may not use are a 403, a chat model or a tier a 400', async () => {
    await assert.rejects(
      gateway.handle({ model: 'emb', inputs: ['x'], encodingFormat: 'float' }, caller(key({ allowedModels: ['other-emb'] }))),
      refusedWith('PERMISSION_DENIED', /not allowed/),
    );
    await assert.rejects(gateway.handle({ model: 'chat', inputs: ['x'], encodingFormat: 'float' }, caller(key())), refusedWith('INVALID_ARG', /is a chat model/));
    await assert.rejects(gateway.handle({ model: 'fast', inputs: ['x'], encodingFormat: 'float' }, caller(key())), refusedWith('INVALID_ARG', /`fast` routes to `chat`/));
  });

  it('TPM counts the input tokens before the upstream is asked', async () => {
    const before = upstream.requests.length;
    const limited = key({ id: 'k-tpm', tpm: 5 });
    await gateway.handle({ model: 'other-emb', inputs: ['one two three'], encodingFormat: 'float' }, caller(limited));
    await assert.rejects(gateway.handle({ model: 'other-emb', inputs: ['four five six seven'], encodingFormat: 'float' }, caller(limited)), refusedWith('RATE_LIMITED', /token/i));
    assert.equal(upstream.requests.length, before + 1);
  });

  it('a budget too small for the input is refused before the upstream', async () => {
    const before = upstream.requests.length;
    await assert.rejects(
      gateway.handle(
        { model: 'emb', inputs: ['many words in this text'], encodingFormat: 'float' },
        caller(key({ id: 'k-budget', budgets: [{ period: 'day', amountMicros: 1_000_000 }] })),
      ),
      refusedWith('BUDGET_EXCEEDED', /budget/i),
    );
    assert.equal(upstream.requests.length, before);
  });
});
