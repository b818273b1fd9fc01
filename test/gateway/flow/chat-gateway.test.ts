// The gateway flow (ChatGateway.handle) over the real chat service, a local OpenAI-speaking upstream,
// the memory cache and a real SQLite ledger: one row per request however it ends, the budget held and
// settled on the route resolved once, streams settled by the flow even when nobody reads them.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import { cacheConfigSchema } from '../../../src/config/cache-config-schema.ts';
import { BillingService } from '../../../src/gateway/billing/billing-service.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { createResponseCache } from '../../../src/gateway/cache/create-response-cache.ts';
import type { ResponseCache } from '../../../src/gateway/cache/response-cache.ts';
import { ChatGateway, type GatewayCaller } from '../../../src/gateway/flow/chat-gateway.ts';
import { createChatService, type ChatService } from '../../../src/gateway/flow/chat-service.ts';
import type { ChatChunk, ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import type { GatewayRequestEvent } from '../../../src/gateway/flow/gateway-observer.ts';
import type { KeyInfo } from '../../../src/gateway/keys/key-store.ts';
import { dayMonthLines, testKey } from '../billing/budget-fixtures.ts';
import { canonicalChunk, RawSse, type StreamPiece } from '../../../src/gateway/protocol/raw-sse.ts';
import { gatewayConfig, openAICompletion, openAIErrorBody, openAIStreamFrames, scriptedUpstream, status, type ScriptedUpstream } from '../helpers/gateway-fixtures.ts';
import { collectChunks, pause, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';

const ENV = { RELAY_API_KEY: 'sk-relay' };
const KEY: KeyInfo = testKey({ id: 'key_team', name: 'team', prefix: 'sk-herd-team' });
const ask = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'gpt4', messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 50, temperature: 0, ...extra });

interface Row {
  request_id: string;
  status: string;
  model: string | null;
  provider: string | null;
  cache_hit: number;
  attempts: number;
  cost_micros: number;
  prompt_tokens: number;
  dialect: string;
}

describe('gateway flow', () => {
  let upstream: MockUpstream;
  let script: ScriptedUpstream;
  let dir: string;
  let ledger: SqliteLedger;
  let chat: ChatService;
  let cache: ResponseCache;
  let events: GatewayRequestEvent[];
  let gateway: ChatGateway;
  let config: ReturnType<typeof gatewayConfig>;

  before(async () => {
    script = scriptedUpstream({
      okJson: openAICompletion('gpt-4.1-upstream', 'Bonjour'),
      okFrames: openAIStreamFrames('gpt-4.1-upstream', ['Bon', 'jour']),
      errorBody: openAIErrorBody,
    });
    upstream = await startMockUpstream(script.handler);
  });
  after(async () => {
    await upstream.close();
  });
  beforeEach(async () => {
    script.script();
    upstream.requests.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'herd-flow-'));
    ledger = SqliteLedger.open(join(dir, 'herd.db'), { flushIntervalMs: 5 });
    config = gatewayConfig(`
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: RELAY_API_KEY, exchange_rate: 1.0, retry: { attempts: 1 } }
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay, upstream_model: gpt-4.1-upstream }]
`);
    chat = createChatService({ config, env: ENV, sleep: async () => undefined });
    cache = await createResponseCache({ config: cacheConfigSchema.parse({}) });
    events = [];
    gateway = new ChatGateway({
      chat,
      cache: { store: cache, policy: cacheConfigSchema.parse({}) },
      billing: new BillingService({ config, ledger }),
      observer: { onRequestFinished: (e) => events.push(e) },
    });
  });
  afterEach(async () => {
    await chat.close();
    await cache.close();
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const caller = (extra: Partial<GatewayCaller> = {}): GatewayCaller => ({ key: KEY, headers: {}, signal: new LightAbortController().signal, ...extra });
  const rows = (): Row[] => {
    const db = new Database(join(dir, 'herd.db'), { readonly: true });
    try {
      return db
        .prepare('SELECT request_id, status, model, provider, cache_hit, attempts, cost_micros, prompt_tokens, dialect FROM ledger_requests ORDER BY started_at, request_id')
        .all() as Row[];
    } finally {
      db.close();
    }
  };
  /** Settlement's after-answer work runs a turn later: wait for it before reading metrics. */
  const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

  it('answers a completion with its row already committed, on the model the alias resolved to', async () => {
    const answer = await gateway.handle(ask(), caller());
    assert.equal(answer.kind, 'completion');
    if (answer.kind !== 'completion') return;
    assert.equal(answer.response.model, 'gpt-4.1');
    assert.equal(answer.meta.route, 'alias');
    assert.equal(answer.cache, 'miss');
    const [row] = rows();
    assert.deepEqual([row?.status, row?.model, row?.provider, row?.cache_hit, row?.attempts], ['ok', 'gpt-4.1', 'relay', 0, 1]);
    assert.ok((row?.cost_micros ?? 0) > 0);
    await settled();
    assert.equal(events.length, 1);
    assert.ok((events[0]?.usdMicros ?? 0) > 0, 'metrics carry the cost billing priced');
  });

  it('answers the same request again from the cache: a cache-hit row that cost nothing', async () => {
    await gateway.handle(ask(), caller());
    await settled();
    const again = await gateway.handle(ask(), caller());
    assert.equal(again.cache, 'hit');
    assert.equal(upstream.requests.length, 1);
    assert.deepEqual(
      rows().map((r) => [r.status, r.cache_hit, r.attempts]),
      [
        ['ok', 0, 1],
        ['ok', 1, 0],
      ],
    );
  });

  it('replays a pass-through stream as its bytes to a pass-through caller, and as canonical chunks to any other', async () => {
    const request = ask({ stream: true, messages: [{ role: 'user', content: 'bytes, please' }] });
    const read = async (who: GatewayCaller) => {
      const answer = await gateway.handle(request, who);
      if (answer.kind !== 'stream') assert.fail('not a stream');
      const pieces: StreamPiece[] = [];
      for await (const piece of answer.stream.chunks) pieces.push(piece);
      return { cache: answer.cache, pieces };
    };
    const miss = await read(caller({ passThrough: true }));
    assert.equal(miss.cache, 'miss');
    assert.ok(miss.pieces.length > 0 && miss.pieces.every((p) => p instanceof RawSse));
    const missText = miss.pieces.map((p) => (p as RawSse).text).join('');
    let hit = await read(caller({ passThrough: true }));
    for (let i = 0; i < 20 && hit.cache !== 'hit'; i++) {
      await settled();
      hit = await read(caller({ passThrough: true }));
    }
    assert.equal(hit.cache, 'hit');
    const calls = upstream.requests.length;
    assert.ok(hit.pieces.every((p) => p instanceof RawSse && p.dialect === 'openai-chat'));
    const hitText = hit.pieces.map((p) => (p as RawSse).text).join('');
    const [oldId, newId] = [missText, hitText].map((t) => /"id":"([^"]+)"/.exec(t)?.[1] ?? '');
    const [oldCreated, newCreated] = [missText, hitText].map((t) => /"created":(\d+)/.exec(t)?.[1] ?? '');
    assert.notEqual(newId, oldId);
    assert.equal(hitText.replaceAll(`"${newId}"`, `"${oldId}"`).replaceAll(`"created":${newCreated}`, `"created":${oldCreated}`), missText);
    // No pass-through (an llm model), or pass-through in another dialect: canonical chunks, never RawSse.
    for (const other of [caller(), caller({ passThrough: true, dialect: 'anthropic-messages' })]) {
      const canonical = await read(other);
      assert.equal(canonical.cache, 'hit');
      assert.equal(canonical.pieces.map((p) => canonicalChunk(p).choices[0]?.delta.content ?? '').join(''), 'Bonjour');
    }
    assert.equal(upstream.requests.length, calls, 'the hits made no upstream call');
  });

  it('streams, settling the stream before its end reaches the reader', async () => {
    const answer = await gateway.handle(ask({ stream: true, stream_options: { include_usage: true } }), caller());
    assert.equal(answer.kind, 'stream');
    if (answer.kind !== 'stream') return;
    const chunks: ChatChunk[] = await collectChunks(answer.stream.chunks);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Bonjour');
    assert.ok(chunks.every((c) => c.model === 'gpt-4.1'));
    assert.equal(chunks.at(-1)?.usage?.prompt_tokens, 9);
    // The row committed before the iteration reported done.
    const [row] = rows();
    assert.deepEqual([row?.status, row?.prompt_tokens], ['ok', 9]);
  });

  it('settles a stream nobody reads when the client goes away', async () => {
    const client = new LightAbortController();
    const answer = await gateway.handle(ask({ stream: true }), caller({ signal: client.signal }));
    assert.equal(answer.kind, 'stream');
    if (answer.kind !== 'stream') return;
    client.abort(new Error('client left'));
    const result = await answer.stream.result;
    assert.equal(result.outcome, 'cancelled');
    await ledger.flush();
    await settled();
    assert.deepEqual(
      rows().map((r) => r.status),
      ['cancelled'],
    );
    assert.equal(events.length, 1);
  });

  it('records a failed upstream once, counts it once, and rejects', async () => {
    script.script(status(500));
    await assert.rejects(gateway.handle(ask(), caller()), /HTTP 500/);
    await ledger.flush();
    assert.deepEqual(
      rows().map((r) => [r.status, r.attempts]),
      [['UPSTREAM_ERROR', 1]],
    );
    assert.equal(events.length, 1);
    assert.equal(events[0]?.statusClass, '5xx');
  });

  it('records the dialect the client spoke (openai-chat when the caller names none)', async () => {
    await gateway.handle(ask({ temperature: 1 }), caller());
    await gateway.handle(ask({ temperature: 1 }), caller({ dialect: 'anthropic-messages' }));
    assert.deepEqual(
      rows()
        .map((r) => r.dialect)
        .sort(),
      ['anthropic-messages', 'openai-chat'],
    );
  });

  it('holds a budget on the resolved model and settles it at the real cost', async () => {
    const budgeted: KeyInfo = { ...KEY, id: 'key_budget', budgets: [{ period: 'day', amountMicros: 1_000_000 }] };
    const answer = await gateway.handle(ask(), caller({ key: budgeted }));
    assert.equal(answer.kind, 'completion');
    await settled();
    const spend = await ledger.spend('key_budget');
    assert.equal(spend.dayMicros, rows()[0]?.cost_micros, "the reservation settled at the row's cost");
  });

  it("answers a batch line only once its part of the batch's reservation is settled (a line marked done is never run again)", async () => {
    // A settlement slower than the row's commit, as PostgreSQL's is: the answer must still wait for it.
    const slowLedger = new Proxy(ledger, {
      get(target, prop) {
        if (prop === 'settlePart') {
          return async (...args: Parameters<SqliteLedger['settlePart']>) => {
            await pause(30);
            return target.settlePart(...args);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const batchGateway = new ChatGateway({ chat, billing: new BillingService({ config, ledger: slowLedger }) });
    const budgeted: KeyInfo = { ...KEY, id: 'key_batch', budgets: [{ period: 'day', amountMicros: 1_000_000 }] };
    await ledger.reserve({ keyId: 'key_batch', requestId: 'batch_1', estimateMicros: 500_000, lines: dayMonthLines('key_batch', { dayMicros: 1_000_000 }, Date.now()) });
    const answer = await batchGateway.handle(ask(), caller({ key: budgeted, requestId: 'line_1', batch: { id: 'batch_1' } }));
    assert.equal(answer.kind, 'completion');
    const db = new Database(join(dir, 'herd.db'), { readonly: true });
    try {
      const parts = db.prepare('SELECT line_request_id, cost_micros FROM ledger_reservation_parts WHERE reservation_id = ?').all('batch_1');
      assert.deepEqual(parts, [{ line_request_id: 'line_1', cost_micros: rows()[0]?.cost_micros }]);
    } finally {
      db.close();
    }
  });

  it('refuses a budget the estimate would pass: no upstream call, no ledger row (refusals go to the audit log)', async () => {
    const poor: KeyInfo = { ...KEY, id: 'key_poor', budgets: [{ period: 'day', amountMicros: 1 }] };
    await assert.rejects(gateway.handle(ask(), caller({ key: poor })), (err: Error & { code?: string }) => err.code === 'BUDGET_EXCEEDED');
    await ledger.flush();
    assert.equal(upstream.requests.length, 0);
    assert.deepEqual(rows(), []);
  });
});
