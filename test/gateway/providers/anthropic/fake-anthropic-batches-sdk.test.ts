// The fake Message Batches upstream (test/helpers/fake-anthropic-batches.ts) driven by the official
// `@anthropic-ai/sdk`: messages.batches.create/retrieve/list/cancel/results/delete read what it says as they
// read Anthropic, so the fake is proven to speak the wire format Herd's client is tested against.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { FakeAnthropicBatches } from '../../../helpers/fake-anthropic-batches.ts';
import { fakePromptText, fakeTokens } from '../../../helpers/fake-batch-answers.ts';

const KEY = 'sk-ant-fake-batches';

function requests(ids: string[]): Anthropic.Messages.BatchCreateParams.Request[] {
  return ids.map((id) => ({ custom_id: id, params: { model: 'claude-sonnet-4-5', max_tokens: 32, messages: [{ role: 'user', content: `hi ${id}` }] } }));
}

describe('fake Anthropic batch upstream, through @anthropic-ai/sdk', () => {
  let fake: FakeAnthropicBatches;
  let sdk: Anthropic;

  before(async () => {
    fake = await FakeAnthropicBatches.start({ apiKey: KEY });
    sdk = new Anthropic({ apiKey: KEY, baseURL: fake.baseUrl, maxRetries: 0 });
  });
  after(() => fake.close());

  it('creates, stays in_progress, ends, streams results by results_url, and deletes', async () => {
    const batch = await sdk.messages.batches.create({ requests: requests(['one', 'two']) });
    assert.deepEqual([batch.type, batch.processing_status, batch.results_url, batch.request_counts.processing], ['message_batch', 'in_progress', null, 2]);
    await assert.rejects(sdk.messages.batches.results(batch.id), /results_url/);
    fake.advance(batch.id);
    const ended = await sdk.messages.batches.retrieve(batch.id);
    assert.equal(ended.processing_status, 'ended');
    assert.ok(ended.ended_at !== null && ended.results_url?.endsWith(`/v1/messages/batches/${batch.id}/results`));
    assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 });
    const results = [];
    for await (const line of await sdk.messages.batches.results(batch.id)) results.push(line);
    assert.deepEqual(
      results.map((r) => [r.custom_id, r.result.type]),
      [
        ['one', 'succeeded'],
        ['two', 'succeeded'],
      ],
    );
    const first = results[0]!.result;
    assert.ok(first.type === 'succeeded');
    assert.equal(first.message.usage.input_tokens, fakeTokens(fakePromptText(requests(['one'])[0]!.params as unknown as Record<string, unknown>)));
    assert.deepEqual(await sdk.messages.batches.delete(batch.id), { id: batch.id, type: 'message_batch_deleted' });
    await assert.rejects(sdk.messages.batches.retrieve(batch.id), Anthropic.NotFoundError);
  });

  it('ends chosen requests errored, and cancels (canceling → ended, the rest canceled) or expires', async () => {
    fake.failRequests(['bad']);
    const failing = await sdk.messages.batches.create({ requests: requests(['ok', 'bad']) });
    fake.advance(failing.id);
    const lines = [];
    for await (const line of await sdk.messages.batches.results(failing.id)) lines.push(line);
    const bad = lines.find((l) => l.custom_id === 'bad')!.result;
    assert.ok(bad.type === 'errored');
    assert.equal(bad.error.error.type, 'invalid_request_error');

    const cancelled = await sdk.messages.batches.create({ requests: requests(['c1', 'c2', 'c3']) });
    fake.progress(cancelled.id, 1);
    const canceling = await sdk.messages.batches.cancel(cancelled.id);
    assert.equal(canceling.processing_status, 'canceling');
    assert.ok(canceling.cancel_initiated_at !== null);
    await assert.rejects(sdk.messages.batches.delete(cancelled.id), Anthropic.BadRequestError);
    fake.advance(cancelled.id);
    assert.deepEqual((await sdk.messages.batches.retrieve(cancelled.id)).request_counts, { processing: 0, succeeded: 1, errored: 0, canceled: 2, expired: 0 });

    const expiring = await sdk.messages.batches.create({ requests: requests(['e1']) });
    fake.expire(expiring.id);
    for await (const line of await sdk.messages.batches.results(expiring.id)) assert.equal(line.result.type, 'expired');
  });

  it('pages the list with limit, after_id and before_id (has_more, first_id, last_id)', async () => {
    const ids = [...fake.batches.keys()].reverse();
    const listed: string[] = [];
    for await (const batch of sdk.messages.batches.list({ limit: 1 })) listed.push(batch.id);
    assert.deepEqual(listed, ids);
    const page = await sdk.messages.batches.list({ limit: 2 });
    assert.deepEqual([page.first_id, page.last_id, page.has_more], [ids[0], ids[1], ids.length > 2]);
    const back = await sdk.messages.batches.list({ before_id: ids[2]!, limit: 1 });
    assert.deepEqual(
      back.data.map((b) => b.id),
      [ids[1]],
    );
  });

  it('refuses what Anthropic refuses: a bad custom_id, a duplicate; 429 with retry-after when told to', async () => {
    await assert.rejects(sdk.messages.batches.create({ requests: requests(['has space']) }), Anthropic.BadRequestError);
    await assert.rejects(sdk.messages.batches.create({ requests: requests(['dup', 'dup']) }), /Duplicate custom_id/);
    fake.rejectCreates(1, 4);
    const error = await sdk.messages.batches.create({ requests: requests(['r']) }).catch((err: unknown) => err);
    assert.ok(error instanceof Anthropic.RateLimitError);
    assert.equal(error.headers?.get('retry-after'), '4');
    await assert.rejects(new Anthropic({ apiKey: 'sk-ant-wrong', baseURL: fake.baseUrl, maxRetries: 0 }).messages.batches.list(), Anthropic.AuthenticationError);
  });

  it('has the fields of the documented message_batch (test/fixtures/anthropic/message-batch.json)', async () => {
    const documented = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../fixtures/anthropic/message-batch.json'), 'utf8')) as Record<string, unknown>;
    const batch = await sdk.messages.batches.create({ requests: requests(['f']) });
    assert.deepEqual(Object.keys(batch).sort(), Object.keys(documented).sort());
  });
});
