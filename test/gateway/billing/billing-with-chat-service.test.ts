// The integration the request path will do, against the real chat service with in-process fake
// providers: reserve an estimate, run the request, finish() with what the service reports — a
// completion after a retry, a stream the client cut off (usage estimated), and a total failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHerdError } from '../../../src/core/errors.ts';
import { BillingService } from '../../../src/gateway/billing/billing-service.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { createChatService, type ChatService } from '../../../src/gateway/flow/chat-service.ts';
import { PromptTokenEstimate } from '../../../src/gateway/router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel } from '../../../src/gateway/router/resolve-route.ts';
import type { ChatRequest, Usage } from '../../../src/gateway/protocol/chat-types.ts';
import type { Provider, ProviderStreamEvent } from '../../../src/gateway/providers/provider.ts';
import { UpstreamError } from '../../../src/gateway/protocol/upstream-error.ts';
import { billingTestConfig } from './billing-fixtures.ts';
import { dayMonthLines } from './budget-fixtures.ts';

const ENV = { HOLYSHEEP_API_KEY: 'x', OPENAI_API_KEY: 'x', ANTHROPIC_API_KEY: 'x', GEMINI_API_KEY: 'x', DEEPSEEK_API_KEY: 'x' };
const USAGE: Usage = { promptTokens: 1_200, cachedPromptTokens: 200, cacheWriteTokens: 0, completionTokens: 300, reasoningTokens: 0, estimated: false, raw: {} };

/** A provider that fails `failures` times with 503, then answers; streams send `chunks` pieces and, unless told not to, usage. */
function fakeProvider(name: string, options: { failures?: number; chunks?: number; hangAfterChunks?: boolean } = {}): Provider {
  let failures = options.failures ?? 0;
  const maybeFail = () => {
    if (failures-- > 0) throw new UpstreamError('busy', { provider: name, failure: 'unavailable', status: 503 });
  };
  return {
    name,
    async chat(req) {
      maybeFail();
      return {
        response: {
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: req.upstreamModel,
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        },
        usage: USAGE,
        rawFinishReason: 'stop',
        warnings: [],
      };
    },
    async *stream(_req, signal): AsyncIterable<ProviderStreamEvent> {
      maybeFail();
      for (let i = 0; i < (options.chunks ?? 3); i++) {
        yield {
          type: 'chunk',
          chunk: { id: 's', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] },
        };
      }
      if (options.hangAfterChunks) await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      yield { type: 'usage', usage: USAGE };
      yield { type: 'done', finishReason: 'stop', rawFinishReason: 'stop' };
    },
    async close() {},
  };
}

function setup(providers: Record<string, Provider>) {
  const config = billingTestConfig();
  const ledger = SqliteLedger.open(join(mkdtempSync(join(tmpdir(), 'herd-billing-int-')), 'herd.db'), { flushIntervalMs: 60_000 });
  const chat = createChatService({ config, env: ENV, providers, sleep: async () => undefined });
  return { chat, ledger, billing: new BillingService({ config, ledger }) };
}

/** What the flow reserves (admit-flight.ts): the route resolved once, its prompt counted, the dearest deployment's price. */
async function estimateRequest(billing: BillingService, chat: ChatService, request: ChatRequest): Promise<number> {
  const prompt = new PromptTokenEstimate(request);
  const route = await resolveRoute(chat.catalog, request.model, prompt);
  return billing.estimateForModel({
    model: route.model,
    upstreamModelOf: (d) => resolveRouteUpstreamModel(route, d),
    promptTokens: await prompt.exact(),
    maxCompletionTokens: request.max_completion_tokens ?? request.max_tokens,
  });
}

const ask: ChatRequest = { model: 'gpt4', messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 400 };
const key = { id: 'key_team', name: 'team' };

test('completion after a 503 retry on the relay: reserve, complete, finish — settled at the real cost', async () => {
  const { chat, ledger, billing } = setup({ holysheep: fakeProvider('holysheep', { failures: 1 }), openai: fakeProvider('openai') });
  try {
    const startedAt = Date.now();
    const estimate = await estimateRequest(billing, chat, ask);
    const held = await billing.reserve({ keyId: key.id, requestId: 'req-c', estimateMicros: estimate, lines: dayMonthLines(key.id, { dayMicros: 10_000_000 }, Date.now()) });
    assert.equal(held.spent.dayMicros, estimate);
    const { meta } = await chat.complete(ask);
    const done = await billing.finish({ requestId: 'req-c', key, requestedModel: ask.model, startedAt, outcome: 'completion', meta });
    // The relay answered: 1 000 × $2 + 200 × $0.50 + 300 × $8 = 4 500 µ$ at ¥1/$.
    assert.deepEqual([meta.provider, meta.attempts.map((a) => a.outcome)], ['holysheep', ['unavailable', 'ok']]);
    assert.equal(done.record.costMicros, 4_500);
    assert.deepEqual(await ledger.spend(key.id), { dayMicros: 4_500, monthMicros: 4_500 });
    assert.ok(estimate > 4_500, `the estimate (${estimate}, openai's price for ${400} completion tokens) held more than the real cost`);
  } finally {
    await chat.close();
    await ledger.close();
  }
});

test('a stream the client cancels mid-way is billed from what was delivered, marked estimated', async () => {
  const { chat, ledger, billing } = setup({ holysheep: fakeProvider('holysheep', { chunks: 2, hangAfterChunks: true }), openai: fakeProvider('openai') });
  try {
    const startedAt = Date.now();
    await billing.reserve({ keyId: key.id, requestId: 'req-s', estimateMicros: await estimateRequest(billing, chat, ask), lines: dayMonthLines(key.id, {}, Date.now()) });
    const controller = new AbortController();
    const stream = await chat.stream({ ...ask, stream: true }, { signal: controller.signal });
    const ttftMs = Date.now() - startedAt;
    let seen = 0;
    for await (const _chunk of stream.chunks) {
      if (++seen === 2) controller.abort(new Error('client went away'));
    }
    const result = await stream.result;
    const done = await billing.finish({ requestId: 'req-s', key, requestedModel: ask.model, startedAt, outcome: 'stream', meta: stream.meta, result, ttftMs });
    assert.deepEqual([done.record.status, done.record.estimated, done.record.completionTokens > 0], ['cancelled', true, true]);
    assert.equal(done.settlement?.state, 'settled');
    assert.equal((await ledger.spend(key.id)).dayMicros, done.record.costMicros);
  } finally {
    await chat.close();
    await ledger.close();
  }
});

test('every deployment failing: the reservation is released and the attempts are recorded', async () => {
  const { chat, ledger, billing } = setup({
    holysheep: fakeProvider('holysheep', { failures: 99 }),
    openai: fakeProvider('openai', { failures: 99 }),
    deepseek: fakeProvider('deepseek', { failures: 99 }),
  });
  try {
    const startedAt = Date.now();
    await billing.reserve({ keyId: key.id, requestId: 'req-f', estimateMicros: 10_000, lines: dayMonthLines(key.id, {}, Date.now()) });
    const error = await chat.complete(ask).then(
      () => undefined,
      (err: unknown) => toHerdError(err),
    );
    assert.ok(error);
    const done = await billing.finish({ requestId: 'req-f', key, requestedModel: ask.model, startedAt, outcome: 'error', error });
    assert.deepEqual(done.settlement, { state: 'released', changed: true });
    assert.ok(done.record.attempts >= 2, `${done.record.attempts} attempts recorded`);
    assert.deepEqual(await ledger.spend(key.id), { dayMicros: 0, monthMicros: 0 });
    await ledger.flush();
    assert.equal((await ledger.usage({ sinceMs: startedAt - 1, untilMs: Date.now() + 1, by: 'model' }))[0]?.failed, 1);
  } finally {
    await chat.close();
    await ledger.close();
  }
});
