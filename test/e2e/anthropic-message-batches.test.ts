// Anthropic's Message Batches on a real Herd, driven by the official `@anthropic-ai/sdk`: create, retrieve, list
// (newest first, both cursors), cancel, delete and results. The worker is off, so the states only it reaches (an
// ended batch, line results) are written into the batch store directly, as the worker would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { anthropicMessage } from '../gateway/helpers/gateway-fixtures.ts';
import { BATCH_MASTER, type BatchesHerd, startBatchesHerd } from './batches-herd.ts';

const request = (customId: string, params: Record<string, unknown> = {}) => ({
  custom_id: customId,
  params: { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hello' }], ...params },
});

/** server.http_max_input_size: small, so a Message Batch body larger than any one request shows it is streamed. */
const MAX_INPUT_SIZE = 8192;

describe('Anthropic Message Batches', () => {
  let herd: BatchesHerd;
  let alice: Anthropic;
  let bob: Anthropic;

  const clientOf = (apiKey: string) => new Anthropic({ apiKey, baseURL: herd.server.httpUrl, maxRetries: 0 });
  const post = (path: string, body: string, key = herd.keys.alice) =>
    fetch(`${herd.server.httpUrl}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body });

  before(async () => {
    herd = await startBatchesHerd('herd-message-batches-', MAX_INPUT_SIZE);
    alice = clientOf(herd.keys.alice);
    bob = clientOf(herd.keys.bob);
  });
  after(async () => {
    await herd?.close();
  });

  it('creates, retrieves and cancels a Message Batch in the shapes the SDK expects; delete waits for it to end', async () => {
    const batch = await alice.messages.batches.create({ requests: [request('first'), request('second')] });
    assert.match(batch.id, /^msgbatch_[A-Za-z0-9]{24}$/);
    assert.equal(batch.type, 'message_batch');
    assert.equal(batch.processing_status, 'in_progress');
    assert.deepEqual(batch.request_counts, { processing: 2, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
    assert.equal(batch.ended_at, null);
    assert.equal(batch.cancel_initiated_at, null);
    assert.equal(batch.archived_at, null);
    assert.equal(batch.results_url, null);
    assert.ok(Math.abs(Date.parse(batch.created_at) - Date.now()) < 60_000);
    assert.equal(Date.parse(batch.expires_at) - Date.parse(batch.created_at), 86_400_000);
    assert.deepEqual(await alice.messages.batches.retrieve(batch.id), batch);

    const canceling = await alice.messages.batches.cancel(batch.id);
    assert.equal(canceling.processing_status, 'canceling');
    assert.equal(typeof canceling.cancel_initiated_at, 'string');
    assert.deepEqual(canceling.request_counts, { processing: 0, succeeded: 0, errored: 0, canceled: 2, expired: 0 });
    await assert.rejects(alice.messages.batches.delete(batch.id), (err: unknown) => err instanceof Anthropic.BadRequestError && /still processing/.test(err.message));

    // What the worker does once nothing of it runs: the batch ends.
    await herd.store.updateBatch(batch.id, { status: 'cancelled', cancelledAt: Date.now() });
    const ended = await alice.messages.batches.retrieve(batch.id);
    assert.equal(ended.processing_status, 'ended');
    assert.equal(typeof ended.ended_at, 'string');
    assert.equal(ended.results_url, `${herd.server.httpUrl}/v1/messages/batches/${batch.id}/results`);
    const results: unknown[] = [];
    for await (const result of await alice.messages.batches.results(batch.id)) results.push(result);
    assert.deepEqual(results, [
      { custom_id: 'first', result: { type: 'canceled' } },
      { custom_id: 'second', result: { type: 'canceled' } },
    ]);

    assert.deepEqual(await alice.messages.batches.delete(batch.id), { id: batch.id, type: 'message_batch_deleted' });
    await assert.rejects(alice.messages.batches.retrieve(batch.id), Anthropic.NotFoundError);
  });

  it("streams an ended batch's results as JSONL: succeeded, errored and expired lines", async () => {
    const batch = await alice.messages.batches.create({ requests: [request('ok'), request('bad'), request('late')] });
    const early = await fetch(`${herd.server.httpUrl}/v1/messages/batches/${batch.id}/results`, { headers: { 'x-api-key': herd.keys.alice } });
    assert.equal(early.status, 400, 'no results before the batch has ended');
    assert.equal(((await early.json()) as { error: { type: string } }).error.type, 'invalid_request_error');

    const message = anthropicMessage('claude-sonnet-4-5', 'Bonjour');
    const error = { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } };
    const lines = await herd.store.listLines(batch.id, 1, 10);
    assert.deepEqual(
      lines.map((l) => l.customId),
      ['ok', 'bad', 'late'],
    );
    const [ok, bad, late] = lines.map((l) => l.lineNo) as [number, number, number];
    await herd.store.updateLine(batch.id, ok, { state: 'succeeded', result: { outcome: 'succeeded', statusCode: 200, body: message } });
    await herd.store.updateLine(batch.id, bad, { state: 'errored', result: { outcome: 'errored', statusCode: 400, body: error } });
    await herd.store.updateLine(batch.id, late, { state: 'expired', result: { outcome: 'expired' } });
    await herd.store.updateBatch(batch.id, { status: 'completed', completedAt: Date.now() });

    const ended = await alice.messages.batches.retrieve(batch.id);
    assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 1 });
    const answer = await fetch(ended.results_url as string, { headers: { 'x-api-key': herd.keys.alice } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/x-jsonl');
    const text = await answer.text();
    assert.deepEqual(
      text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
      [
        { custom_id: 'ok', result: { type: 'succeeded', message } },
        { custom_id: 'bad', result: { type: 'errored', error } },
        { custom_id: 'late', result: { type: 'expired' } },
      ],
    );
    const viaSdk: string[] = [];
    for await (const result of await alice.messages.batches.results(batch.id)) viaSdk.push(`${result.custom_id}:${result.result.type}`);
    assert.deepEqual(viaSdk, ['ok:succeeded', 'bad:errored', 'late:expired']);
    await assert.rejects(bob.messages.batches.results(batch.id), Anthropic.NotFoundError);
  });

  it('lists newest first with after_id and before_id pages; another key sees none of them, the master key all', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await bob.messages.batches.create({ requests: [request(`r${i}`)] })).id);
    const [oldest, middle, newest] = ids as [string, string, string];
    const first = await bob.messages.batches.list({ limit: 2 });
    assert.deepEqual(
      first.data.map((b) => b.id),
      [newest, middle],
    );
    assert.equal(first.has_more, true);
    assert.equal(first.first_id, newest);
    assert.equal(first.last_id, middle);
    const seen: string[] = [];
    for await (const batch of bob.messages.batches.list({ limit: 2 })) seen.push(batch.id);
    assert.deepEqual(seen, [newest, middle, oldest], 'the SDK follows after_id = last_id');
    const older = await bob.messages.batches.list({ after_id: middle });
    assert.deepEqual(
      older.data.map((b) => b.id),
      [oldest],
    );
    assert.equal(older.has_more, false);
    const newer = await bob.messages.batches.list({ before_id: oldest, limit: 1 });
    assert.deepEqual(
      newer.data.map((b) => b.id),
      [middle],
    );
    assert.equal(newer.has_more, true, 'the newest is still before it');

    const aliceSees: string[] = [];
    for await (const batch of alice.messages.batches.list({ limit: 100 })) aliceSees.push(batch.id);
    assert.deepEqual(
      aliceSees.filter((id) => ids.includes(id)),
      [],
    );
    await assert.rejects(alice.messages.batches.retrieve(oldest), (err: unknown) => err instanceof Anthropic.NotFoundError && /No batch found/.test(err.message));
    await assert.rejects(alice.messages.batches.cancel(oldest), Anthropic.NotFoundError);
    await assert.rejects(alice.messages.batches.delete(oldest), Anthropic.NotFoundError);
    const master = clientOf(BATCH_MASTER);
    assert.equal((await master.messages.batches.retrieve(oldest)).id, oldest);
    await assert.rejects(bob.messages.batches.list({ limit: 1001 }), Anthropic.BadRequestError);
  });

  it('takes a body larger than server.http_max_input_size: it is streamed to the file store, not buffered', async () => {
    const requests = Array.from({ length: 40 }, (_, i) => request(`big-${i}`, { system: 'x'.repeat(400) }));
    assert.ok(JSON.stringify({ requests }).length > 2 * MAX_INPUT_SIZE);
    const batch = await alice.messages.batches.create({ requests });
    assert.equal(batch.request_counts.processing, 40);
    const tooBig = await alice.messages.batches.create({ requests: [request('huge', { system: 'x'.repeat(MAX_INPUT_SIZE) })] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(tooBig instanceof Anthropic.BadRequestError && /requests\[0\]/.test(tooBig.message), 'one request is still bounded by the request size limit');
  });

  it('refuses invalid requests whole with a 400 in Anthropic’s shape, and keeps nothing of them', async () => {
    const before = (await alice.messages.batches.list({ limit: 1000 })).data.length;
    await assert.rejects(
      alice.messages.batches.create({ requests: [request('fine'), request('bad id!'), request('fine')] }),
      (err: unknown) => err instanceof Anthropic.BadRequestError && /requests\[1\]/.test(err.message) && /requests\[2\]/.test(err.message),
    );
    await assert.rejects(alice.messages.batches.create({ requests: [request('x', { model: 'no-such-model' })] }), Anthropic.BadRequestError);
    await assert.rejects(
      clientOf(herd.keys.frugal).messages.batches.create({ requests: [request('costly', { max_tokens: 1000 })] }),
      (err: unknown) => err instanceof Anthropic.RateLimitError && /budget/.test(err.message),
      "a batch whose maximum cost does not fit the key's budget: Anthropic's 429",
    );
    for (const body of ['{"requests": [', '{}', '[]', '']) {
      const answer = await post('/v1/messages/batches', body);
      assert.equal(answer.status, 400, body);
      const error = (await answer.json()) as { type: string; error: { type: string } };
      assert.equal(error.type, 'error');
      assert.equal(error.error.type, 'invalid_request_error');
    }
    const anonymous = await fetch(`${herd.server.httpUrl}/v1/messages/batches`);
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as { error: { type: string } }).error.type, 'authentication_error');
    assert.equal((await alice.messages.batches.list({ limit: 1000 })).data.length, before, 'no refused batch is kept');
  });
});
