// The upstream half of the batch worker against local fake OpenAI and Anthropic batch APIs: lines of two client batches
// packed into one upstream batch and split back, billed at the batch price, partial failures, a 429 on create, a crash
// between create and storing its id recovered by metadata, a failed upstream batch, and cancelling upstream.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import type { BatchLine } from '../../../src/gateway/batch/batch-store.ts';
import { createOpenAIBatchClient } from '../../../src/gateway/providers/openai/openai-batch-client.ts';
import { fakeTokens } from '../../helpers/fake-batch-answers.ts';
import { dayMonthLines } from '../billing/budget-fixtures.ts';
import { ANTHROPIC_DEPLOYMENT, type Fixture, OPENAI_DEPLOYMENT, openFixture, T0 } from './upstream-batching-fixture.ts';

const signal = new LightAbortController().signal;
const POLL_MIN = 5000;

async function withFixture(t: TestContext): Promise<Fixture> {
  const f = await openFixture();
  t.after(() => f.close());
  return f;
}

const creates = (f: Fixture) => f.openai.calls.filter((c) => c.method === 'POST' && c.path === '/v1/batches');
const lineOf = async (f: Fixture, line: BatchLine) => (await f.store.listLines(line.batchId, line.lineNo, 1))[0];
const onlyBatch = <T>(map: ReadonlyMap<string, T>): [string, T] => {
  assert.equal(map.size, 1, 'exactly one upstream batch');
  return [...map.entries()][0]!;
};
const content = (l: BatchLine | undefined) => {
  const body = l?.result?.outcome === 'succeeded' ? l.result.body : undefined;
  const choices = body?.choices as { message: { content: string } }[] | undefined;
  return choices?.[0]?.message.content;
};

test('two client batches of two keys for one deployment go up as ONE upstream batch and come back split, billed at the batch price', async (t) => {
  const f = await withFixture(t);
  const a = await f.queueBatch({
    id: 'batch_a',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [
      { customId: 'same', text: 'alpha one' },
      { customId: 'a2', text: 'alpha two' },
    ],
  });
  const b = await f.queueBatch({
    id: 'batch_b',
    keyId: 'hk_b',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 30_000,
    requests: [{ customId: 'same', text: 'bravo one' }],
  });
  // hk_a has a budget: the batch holds one reservation, settled line by line.
  await f.billing.reserve({ keyId: 'hk_a', requestId: 'batch_a', estimateMicros: 1_000_000, lines: dayMonthLines('hk_a', { dayMicros: 10_000_000 }, T0), atMs: T0 });
  const batcher = f.batcher();

  await batcher.tick(T0, signal);
  assert.equal(creates(f).length, 1, 'one create for both client batches');
  const [upstreamId, upstream] = onlyBatch(f.openai.batches);
  assert.deepEqual(upstream.lines.map((l) => l.custom_id).sort(), [...a, ...b].map((l) => l.requestId).sort(), "the upstream custom_id is the line's request id");
  assert.deepEqual(new Set(upstream.lines.map((l) => l.body.model)), new Set(['gpt-4o-2024-08-06']), "the deployment's upstream model is sent");
  assert.equal(upstream.wire.metadata && (upstream.wire.metadata as Record<string, string>).herd_upstream_batch_id?.startsWith('ubatch_'), true);
  const row = await f.store.getUpstreamBatch((await lineOf(f, a[0]!))?.upstreamBatchId ?? '');
  assert.ok(row);
  assert.deepEqual([row?.state, row?.providerBatchId, row?.lines, row?.nextPollAt, row?.leaseOwner], ['running', upstreamId, 3, T0 + POLL_MIN, undefined]);
  assert.ok(row?.inputFileRef?.startsWith('file-fake'), 'the input file id is stored');

  await batcher.tick(T0 + POLL_MIN, signal);
  assert.equal((await f.store.getUpstreamBatch(row.id))?.pollAttempts, 1, 'still validating: polled again later');
  assert.equal((await f.store.getUpstreamBatch(row.id))?.nextPollAt, T0 + 2 * POLL_MIN);
  f.openai.runToEnd(upstreamId);
  await batcher.tick(T0 + 3 * POLL_MIN, signal);
  assert.equal((await f.store.getUpstreamBatch(row.id))?.state, 'done');

  const texts = new Map([
    [a[0]!.requestId, 'alpha one'],
    [a[1]!.requestId, 'alpha two'],
    [b[0]!.requestId, 'bravo one'],
  ]);
  let costA = 0;
  for (const line of [...a, ...b]) {
    const read = await lineOf(f, line);
    assert.equal(read?.state, 'succeeded');
    assert.equal(content(read), `echo: ${texts.get(line.requestId)}`, 'each line gets its own answer');
    assert.equal(read?.result?.outcome === 'succeeded' && read.result.body.model, 'gpt-4o', 'the model the client asked for');
    const row = (await f.ledger.getRequest(line.requestId))?.request;
    assert.equal(row?.batchId, line.batchId);
    assert.equal(row?.keyId, line.batchId === 'batch_a' ? 'hk_a' : 'hk_b');
    assert.equal(row?.provider, 'oai');
    const prompt = row?.promptTokens ?? 0;
    const completion = fakeTokens(`echo: ${texts.get(line.requestId)}`);
    assert.equal(row?.completionTokens, completion);
    // Half of gpt-4o's $2.50 / $10.00 per million tokens: micro-dollars per token.
    assert.equal(row?.costMicros, Math.round(prompt * 1.25 + completion * 5));
    assert.equal(row?.realtimeListUsdMicros, Math.round(prompt * 2.5 + completion * 10));
    if (line.batchId === 'batch_a') costA += row?.costMicros ?? 0;
  }
  await f.ledger.release('batch_a');
  assert.equal((await f.ledger.spend('hk_a', T0)).dayMicros, costA, "batch_a's lines settled against its reservation");

  await batcher.tick(T0 + 10 * POLL_MIN, signal);
  assert.equal(creates(f).length, 1, 'nothing queued: nothing more goes up');
});

test('a queue waits until it is full or its oldest line has waited max_wait_ms; full means batch.upstream.max_lines', async (t) => {
  const f = await withFixture(t);
  const lines = await f.queueBatch({
    id: 'batch_q',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0,
    requests: [1, 2, 3, 4, 5].map((n) => ({ customId: `c${n}`, text: `line ${n}` })),
  });
  await f.batcher({ max_lines: 10 }).tick(T0 + 1000, signal);
  assert.equal(creates(f).length, 0, 'neither full nor old');
  await f.batcher({ max_lines: 2 }).tick(T0 + 1000, signal);
  assert.equal(creates(f).length, 2, 'two full upstream batches of 2; the fifth line waits');
  const packed = await Promise.all(lines.map((l) => lineOf(f, l)));
  assert.deepEqual(
    packed.map((l) => l?.upstreamBatchId !== undefined),
    [true, true, true, true, false],
  );
  await f.batcher({ max_lines: 10 }).tick(T0 + 60_000, signal);
  assert.equal(creates(f).length, 3, 'the last line went up once it had waited max_wait_ms');
});

test('partial failures: errored lines keep their status and error body and are not billed; expired ones end expired', async (t) => {
  const f = await withFixture(t);
  const lines = await f.queueBatch({
    id: 'batch_p',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [1, 2, 3, 4].map((n) => ({ customId: `c${n}`, text: `line ${n}` })),
  });
  const batcher = f.batcher();
  await batcher.tick(T0, signal);
  const [id] = onlyBatch(f.openai.batches);
  f.openai.failLines([lines[1]!.requestId], 400);
  f.openai.failLines([lines[2]!.requestId], 500);
  f.openai.advance(id);
  // Lines answer in input order (request id order, which is line order here): three answered, the fourth expires.
  f.openai.progress(id, 3);
  f.openai.expire(id);
  await batcher.tick(T0 + POLL_MIN, signal);
  const read = await Promise.all(lines.map((l) => lineOf(f, l)));
  assert.deepEqual(
    read.map((l) => [l?.state, l?.statusCode]),
    [
      ['succeeded', 200],
      ['errored', 400],
      ['errored', 500],
      ['expired', undefined],
    ],
  );
  const errored = read[1]?.result;
  assert.equal(errored?.outcome === 'errored' && (errored.body.error as { message: string }).message, `fake failure for ${lines[1]!.requestId}`);
  assert.deepEqual(read[3]?.result, { outcome: 'expired' });
  assert.ok(await f.ledger.getRequest(lines[0]!.requestId));
  for (const l of lines.slice(1)) assert.equal(await f.ledger.getRequest(l.requestId), undefined, 'no answer, no row');
});

test('Anthropic: the lines go up inline as one Message Batch and come back as messages or Anthropic error bodies', async (t) => {
  const f = await withFixture(t);
  const lines = await f.queueBatch({
    id: 'msgbatch_x',
    keyId: 'hk_c',
    dialect: 'anthropic',
    deployment: ANTHROPIC_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [
      { customId: 'one', text: 'hello claude' },
      { customId: 'two', text: 'fail me' },
    ],
  });
  const batcher = f.batcher();
  await batcher.tick(T0, signal);
  const [id, upstream] = onlyBatch(f.anthropic.batches);
  assert.deepEqual(
    upstream.requests.map((r) => [r.custom_id, r.params.model, r.params.max_tokens]),
    lines.map((l) => [l.requestId, 'claude-sonnet-4-5', 100]),
  );
  f.anthropic.failRequests([lines[1]!.requestId], 'invalid_request_error');
  f.anthropic.advance(id);
  await batcher.tick(T0 + POLL_MIN, signal);
  const [ok, failed] = await Promise.all(lines.map((l) => lineOf(f, l)));
  assert.equal(ok?.state, 'succeeded');
  const message = ok?.result?.outcome === 'succeeded' ? ok.result.body : {};
  assert.deepEqual([message.type, message.model, (message.content as { text: string }[])[0]?.text], ['message', 'claude', 'echo: hello claude']);
  assert.deepEqual([failed?.state, failed?.statusCode], ['errored', 400]);
  assert.deepEqual(failed?.result?.outcome === 'errored' && failed.result.body.error, { type: 'invalid_request_error', message: `fake failure for ${lines[1]!.requestId}` });
  const row = (await f.ledger.getRequest(lines[0]!.requestId))?.request;
  assert.deepEqual([row?.batchId, row?.provider, row?.dialect], ['msgbatch_x', 'ant', 'anthropic-messages']);
  // Half of $3 / $15 per million tokens.
  assert.equal(row?.costMicros, Math.round((row?.promptTokens ?? 0) * 1.5 + (row?.completionTokens ?? 0) * 7.5));
});

test("a 429 on create leaves the upstream batch creating until the upstream's Retry-After has passed, then it is looked up and created once", async (t) => {
  const f = await withFixture(t);
  const lines = await f.queueBatch({
    id: 'batch_r',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [{ customId: 'x', text: 'retry me' }],
  });
  f.openai.rejectCreates(1, 30);
  const batcher = f.batcher();
  await batcher.tick(T0, signal);
  assert.equal(f.openai.batches.size, 0);
  const id = (await lineOf(f, lines[0]!))?.upstreamBatchId ?? '';
  const row = await f.store.getUpstreamBatch(id);
  assert.deepEqual([row?.state, row?.nextPollAt, row?.pollAttempts, row?.leaseOwner], ['creating', T0 + 30_000, 1, undefined]);
  await batcher.tick(T0 + 10_000, signal);
  assert.equal(creates(f).length, 1, 'not before Retry-After');
  await batcher.tick(T0 + 30_000, signal);
  assert.equal(creates(f).length, 2);
  assert.ok(
    f.openai.calls.some((c) => c.method === 'GET' && c.path.startsWith('/v1/batches?')),
    'looked up by metadata first',
  );
  const [upstreamId] = onlyBatch(f.openai.batches);
  assert.deepEqual([(await f.store.getUpstreamBatch(id))?.state, (await f.store.getUpstreamBatch(id))?.providerBatchId], ['running', upstreamId]);
  f.openai.runToEnd(upstreamId);
  await batcher.tick(T0 + 30_000 + POLL_MIN, signal);
  assert.equal(content(await lineOf(f, lines[0]!)), 'echo: retry me');
});

test('crash recovery: a creating row whose batch the upstream already has is found by its metadata, not created again', async (t) => {
  const f = await withFixture(t);
  const lines = await f.queueBatch({
    id: 'batch_c',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [{ customId: 'x', text: 'survive' }],
  });
  // A replica packed the line and created the upstream batch, then died before storing its id (its lease ran out).
  const row = {
    id: 'ubatch_crashed',
    deployment: OPENAI_DEPLOYMENT,
    provider: 'oai',
    endpoint: '/v1/chat/completions',
    providerBatchId: undefined,
    state: 'creating' as const,
    lines: 0,
    createdAt: T0 - 10_000,
    submittedAt: undefined,
    nextPollAt: undefined,
    pollAttempts: 0,
    leaseOwner: 'worker-dead',
    leaseUntil: T0 - 1,
    inputFileRef: undefined,
    outputFileRef: undefined,
  };
  assert.equal(await f.store.insertUpstreamBatch(row, [lines[0]!]), 1);
  const client = createOpenAIBatchClient({ name: 'oai', baseUrl: f.openai.baseUrl, apiKey: 'sk-oai-test' });
  t.after(() => client.close());
  const created = await client.submit({
    lines: [{ customId: lines[0]!.requestId, body: { model: 'gpt-4o-2024-08-06', messages: [{ role: 'user', content: 'survive' }] } }],
    endpoint: '/v1/chat/completions',
    metadata: { herd_upstream_batch_id: row.id },
    signal,
  });
  const before = creates(f).length;
  const batcher = f.batcher();
  await batcher.tick(T0, signal);
  assert.equal(creates(f).length, before, 'not created a second time');
  assert.deepEqual([(await f.store.getUpstreamBatch(row.id))?.state, (await f.store.getUpstreamBatch(row.id))?.providerBatchId], ['running', created.id]);
  f.openai.runToEnd(created.id);
  await batcher.tick(T0 + POLL_MIN, signal);
  assert.equal(content(await lineOf(f, lines[0]!)), 'echo: survive');
});

test('an upstream batch that fails whole sends its lines back to be planned again, or errors those planned too often', async (t) => {
  const f = await withFixture(t);
  const lines = await f.queueBatch({
    id: 'batch_f',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [
      { customId: 'x', text: 'one' },
      { customId: 'y', text: 'two' },
    ],
  });
  await f.store.updateLine('batch_f', 2, { attempts: 3 });
  const batcher = f.batcher();
  await batcher.tick(T0, signal);
  const [id, upstream] = onlyBatch(f.openai.batches);
  upstream.invalid.push({ code: 'invalid_request', line: 1, message: 'the upstream did not like it' });
  f.openai.advance(id);
  await batcher.tick(T0 + POLL_MIN, signal);
  const [again, errored] = await Promise.all(lines.map((l) => lineOf(f, l)));
  assert.deepEqual([again?.state, again?.deployment, again?.upstreamBatchId], ['pending', undefined, undefined]);
  assert.deepEqual([errored?.state, errored?.statusCode], ['errored', 502]);
  assert.match(
    String(errored?.result?.outcome === 'errored' && (errored.result.body.error as { message: string }).message),
    /refused the batch: line 1: the upstream did not like it/,
  );
  assert.equal((await f.store.getUpstreamBatch(again?.upstreamBatchId ?? errored?.upstreamBatchId ?? ''))?.state, 'failed');
});

test('cancelFor cancels an upstream batch only once every client batch in it is cancelled; answers already made are billed, lines stay cancelled', async (t) => {
  const f = await withFixture(t);
  const a = await f.queueBatch({
    id: 'batch_a',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [{ customId: 'a', text: 'first' }],
  });
  const b = await f.queueBatch({
    id: 'batch_b',
    keyId: 'hk_b',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [{ customId: 'b', text: 'second' }],
  });
  const batcher = f.batcher();
  await batcher.tick(T0, signal);
  const [id] = onlyBatch(f.openai.batches);
  f.openai.advance(id);
  f.openai.progress(id, 1);
  const cancelCalls = () => f.openai.calls.filter((c) => c.path.endsWith('/cancel')).length;
  const cancel = async (batchId: string) => {
    await f.store.finishLines(batchId, ['pending', 'queued_upstream'], 'canceled', { outcome: 'canceled' });
    await batcher.cancelFor(batchId, signal);
  };
  await cancel('batch_a');
  assert.equal(cancelCalls(), 0, "batch_b's line is still wanted");
  await cancel('batch_b');
  assert.equal(cancelCalls(), 1);
  assert.equal(f.openai.batches.get(id)?.wire.status, 'cancelling');
  f.openai.advance(id);
  await batcher.tick(T0 + POLL_MIN, signal);
  const lines = await Promise.all([...a, ...b].map((l) => lineOf(f, l)));
  assert.deepEqual(
    lines.map((l) => l?.state),
    ['canceled', 'canceled'],
  );
  const answered = f.openai.batches.get(id)!.lines[0]!.custom_id;
  assert.ok(await f.ledger.getRequest(answered), 'the answer made before the cancel is billed (the upstream bills it)');
});

test('accepts: same-dialect pass-through to providers whose batch API batch.upstream allows', async (t) => {
  const f = await withFixture(t);
  const deployment = (model: string) => f.catalog.models.get(model)!.deployments[0]!;
  const batcher = f.batcher();
  assert.equal(batcher.accepts(deployment('gpt-4o'), '/v1/chat/completions'), true);
  assert.equal(batcher.accepts(deployment('gpt-4o'), '/v1/embeddings'), true);
  assert.equal(batcher.accepts(deployment('gpt-4o'), '/v1/responses'), false, 'the provider does not offer /responses');
  assert.equal(batcher.accepts(deployment('gpt-4o'), '/v1/messages'), false, 'cross-dialect runs realtime');
  assert.equal(batcher.accepts(deployment('claude'), '/v1/messages'), true);
  assert.equal(batcher.accepts(deployment('claude'), '/v1/chat/completions'), false);
  assert.equal(batcher.accepts(deployment('cheap'), '/v1/chat/completions'), false, 'batch_discount 0: no batch API');
  assert.equal(f.batcher({ providers: ['relay'] }).accepts(deployment('cheap'), '/v1/chat/completions'), true, 'listed explicitly');
  assert.equal(f.batcher({ providers: [] }).accepts(deployment('gpt-4o'), '/v1/chat/completions'), false);
});

test('lines whose batch is at its deadline are not sent', async (t) => {
  const f = await withFixture(t);
  const margin = f.batchConfig.deadline.margin_ms;
  await f.queueBatch({
    id: 'batch_late',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    expiresAt: T0 + margin - 1,
    requests: [{ customId: 'x', text: 'late' }],
  });
  await f.batcher().tick(T0, signal);
  assert.equal(creates(f).length, 0);
  assert.equal(f.openai.calls.length, 0);
});

test('cancelled lines never go up: not packed when cancelled before, not sent when cancelled while their upstream batch waits to be created', async (t) => {
  const f = await withFixture(t);
  const gone = await f.queueBatch({
    id: 'batch_gone',
    keyId: 'hk_a',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [{ customId: 'x', text: 'gone' }],
  });
  const kept = await f.queueBatch({
    id: 'batch_kept',
    keyId: 'hk_b',
    dialect: 'openai',
    deployment: OPENAI_DEPLOYMENT,
    queuedAt: T0 - 60_000,
    requests: [{ customId: 'y', text: 'kept' }],
  });
  await f.store.finishLines('batch_gone', ['pending', 'queued_upstream'], 'canceled', { outcome: 'canceled' });
  f.openai.rejectCreates(1, 1);
  const batcher = f.batcher();
  await batcher.tick(T0, signal);
  assert.equal((await lineOf(f, gone[0]!))?.upstreamBatchId, undefined, 'a cancelled line is not packed');
  const row = (await lineOf(f, kept[0]!))?.upstreamBatchId ?? '';
  assert.equal((await f.store.getUpstreamBatch(row))?.state, 'creating');
  await f.store.finishLines('batch_kept', ['pending', 'queued_upstream'], 'canceled', { outcome: 'canceled' });
  await batcher.tick(T0 + POLL_MIN, signal);
  assert.equal((await f.store.getUpstreamBatch(row))?.state, 'done', 'nothing left to send: no upstream batch is created');
  assert.equal(f.openai.batches.size, 0);
  assert.equal(creates(f).length, 1, 'only the refused create');
});
